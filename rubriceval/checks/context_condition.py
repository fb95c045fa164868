"""Checks conditioned on the retrieved contexts, so a rule can follow what the knowledge base grants:

    unless_context   a failed check passes when a context mentions one of the phrases (do not promise 包邮 unless a
                     context grants it); the evidence names the context and quotes it.
    only_if_context  the check runs only when a context mentions one of the phrases; otherwise it passes as not
                     required, and the evidence says so.

Phrases match as in must_mention (`a|b` synonyms, full-width folding, case-insensitive unless the check says so).
Per-turn checks (`turns: assistant`) look at that turn's contexts. A knowledge file (a rubric's `knowledge:`, or
`run --knowledge`) is searched after the contexts, numbered after them.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from rubriceval.checks.base import find_any, quoted, reworded, span_at, synonym_group
from rubriceval.checks.turn_answers import current_answers
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg

EXCERPT_RADIUS = 12    # characters of context shown on each side of the phrase found


class ContextHit(NamedTuple):
    number: int        # which context, counting from 1
    phrase: str        # the words found in it
    excerpt: str       # the context around them


def find_in_contexts(contexts: list[str], phrases: list[str], case_sensitive: bool = False) -> ContextHit | None:
    """The first context (in retrieval order) that mentions any of the phrases."""
    for number, context in enumerate(contexts, start=1):
        hits = [hit for phrase in phrases if (hit := find_any(context, phrase, case_sensitive))]
        if hits:
            start, alt = min(hits)
            found = span_at(context, start, len(alt))
            left, right = max(0, start - EXCERPT_RADIUS), start + len(alt) + EXCERPT_RADIUS
            excerpt = ("…" if left else "") + context[left:right].replace("\n", " ") + ("…" if right < len(context) else "")
            return ContextHit(number, found, excerpt)
    return None


def conditioned(check: Callable[..., Evidence]) -> Callable[..., Evidence]:
    """`check` with the item's context conditions applied (unchanged for items without them)."""
    def run(item: Any, sample: Sample, **where: Any) -> Evidence:
        only_if, unless = getattr(item, "only_if_context", None), getattr(item, "unless_context", None)
        if not (only_if or unless):
            return check(item, sample, **where)
        case_sensitive = getattr(item, "case_sensitive", False)
        contexts = [*sample.contexts, *current_answers().knowledge]     # the knowledge file's passages after them
        required_by = None
        if only_if:
            required_by = find_in_contexts(contexts, only_if, case_sensitive)
            if required_by is None:
                return Evidence(item=item.id, passed=True, **reworded(sample, msg(
                    "ev_context_not_required", phrases=[synonym_group(p) for p in only_if])))
        evidence = check(item, sample, **where)
        message = evidence.message
        passed = evidence.passed
        if unless and evidence.passed is False:
            granted = find_in_contexts(contexts, unless, case_sensitive)
            if granted is None:
                message = msg("ev_context_grants_none", check=message, phrases=[synonym_group(p) for p in unless])
            else:
                passed = True
                message = msg("ev_context_grants", check=message, context=granted.number,
                              phrase=quoted(granted.phrase), excerpt=granted.excerpt)
        if required_by is not None:
            message = msg("ev_context_required", context=required_by.number, phrase=quoted(required_by.phrase),
                          excerpt=required_by.excerpt, check=message)
        if message is None:          # a check without wording: nothing to reword
            return evidence.model_copy(update={"passed": passed})
        return evidence.model_copy(update={"passed": passed, **reworded(sample, message)})
    return run
