"""The policy file retrieved per claim rather than pasted whole (issue 39): for one turn, the knowledge passages
(a card's or rubric's `knowledge:` file, one passage per section) that share the most wording with it, and how
much of a claim the best passage covers.

Retrieval by shared character n-grams: Chinese has no spaces and a policy file is a page, so a lexical overlap
is exact, deterministic and free, where an embedder would add a model call per turn for a handful of passages.
The passages shown are short, so a 1.5B judge compares one claim with one or two rules instead of a page."""
from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")
_HEADING = re.compile(r"^#+\s*")


def _squeezed(text: str) -> str:
    return _SPACE.sub("", text).lower()


def grams(text: str, n: int) -> set[str]:
    squeezed = _squeezed(text)
    return {squeezed[i:i + n] for i in range(len(squeezed) - n + 1)}


def relevant_passages(text: str, passages: list[str], top: int = 2) -> list[str]:
    """The `top` passages sharing the most character bigrams with `text` (in the file's order), none sharing none."""
    mine = grams(text, 2)
    scored = [(len(mine & grams(_HEADING.sub("", p), 2)), i) for i, p in enumerate(passages)]
    best = sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])[:top]
    return [passages[i] for _, i in sorted(best, key=lambda s: s[1])]


def coverage(claim: str, passages: list[str], n: int = 3) -> float:
    """The share of the claim's character n-grams found in the passages: near 1 for a rule read out word for word,
    near 0 for a term the policy never states."""
    mine = [g for g in grams(claim, n)]
    if not mine:
        return 0.0
    theirs: set[str] = set()
    for passage in passages:
        theirs |= grams(passage, n)
    return sum(g in theirs for g in mine) / len(mine)


# A commitment clause whose character trigrams are at least this share in one retrieved passage is the policy read
# out (dev half of the contact-centre set: read-backs 0.65–1.0, over-promises ≤ 0.25).
READ_BACK = 0.6
POLICY_READ_BACK = "(reads out the policy)"


def states_policy(claims: list[str], passages: list[str]) -> bool:
    """The turn reads out a policy rule: one of its commitment clauses is, nearly word for word, in a passage. Such
    a turn states the policy (满 99 元包邮, 3-5 个工作日原路退回) and is not asked; a promise added in the same turn is
    the residual risk (docs/scorecards.md)."""
    return any(coverage(claim, relevant_passages(claim, passages, top=1)) >= READ_BACK for claim in claims)
