"""A holistic judgment's score as a probability distribution, and the tie rule for temperature-0 judges.

At temperature 0 the level a judge writes is an argmax: a judge that finds 3 and 4 almost equally likely writes
"4" exactly as firmly as one that is sure. Where the server returns `top_logprobs` (llama.cpp — the embedded
judge —, vLLM, OpenAI), the score token's alternatives give P(level) for 1–5:

    probs      P(level) over the levels offered at the score token, normalised over 1–5
    expected   Σ level · P(level)   (G-Eval's probability-weighted score)
    margin     P(first) − P(second) of the two likeliest levels

**The tie rule.** The verdict keeps the level the judge wrote (its feedback argues for that level; a number
recomputed from probabilities could contradict the text beside it, and it stays what any rerun gives). When the
two likeliest levels are within `TIE_MARGIN` of each other the judgment is a **tie**: the verdict is flagged
(`details["tie"]`, with both levels and their gap as `spread`), so the audit queue can put it first with the
panel's and self-consistency's disagreements (`disagreement: true`), and the expected score is kept beside the
level for anyone who wants a finer ranking (`details["score_probs"]`). Measured on the embedded judge in
docs/benchmarks.md ("Temperature-0 ties").

Which calls ask for logprobs: holistic judge items that write ONE score — single-turn items and whole-conversation
items (`scope: conversation`) — when `judge.score_logprobs` is true — by default
on for the embedded judge, off for hosted judges (some providers or models reject the parameter; turn it on in
the config for one that accepts it). Logprobs are part of the call's cache key, so turning it on re-asks once.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from rubriceval.judge.options import CallOptions, TokenLogprob

LEVELS = (1, 2, 3, 4, 5)
TOP_LOGPROBS = 10
# Two levels whose probabilities differ by less than this are a tie (e.g. 0.55 vs 0.40: tie; 0.70 vs 0.25: not).
TIE_MARGIN = 0.2
# Where the score digit sits in a reply: JSON `"score": 4` or the text form `[RESULT] 4` (the last one wins:
# feedback comes first, so a digit quoted inside it never shadows the score).
_SCORE_AT = re.compile(r'(?:"score"\s*:\s*"?|\[RESULT\]\s*|score\s*[:：]\s*)([1-5])', re.IGNORECASE)


class ScoreDistribution(BaseModel):
    """P(level) at the score token of one holistic judgment; see the module docstring."""

    probs: dict[int, float]          # level → probability, normalised over the levels 1–5 offered
    expected: float
    written: int                      # the level the judge wrote
    first: int                        # the likeliest level (= written with greedy decoding)
    second: int | None = None         # the next likeliest, when any other level had probability
    margin: float                     # P(first) − P(second); 1.0 when no other level was offered
    coverage: float = Field(ge=0)     # probability mass on the digits 1–5 among the offered tokens
    tie: bool


DETAILS_KEY = "score_probs"         # a rubric verdict's details: item id → its ScoreDistribution (rubric_scorer.py)
TIE_KEY = "tie"                     # ... and a tie, said with the consensus fields (tie_details; store/audit_queue.py)


def stored_distributions(details: Mapping[str, Any] | None) -> dict[str, ScoreDistribution]:
    """item id → P(level), read back typed from a verdict's details (what audit/ reads them through); an entry that is
    not a distribution (none is written so) is left out rather than guessed at."""
    stored = (details or {}).get(DETAILS_KEY)
    found: dict[str, ScoreDistribution] = {}
    for item, value in (stored.items() if isinstance(stored, dict) else ()):
        try:
            found[item] = ScoreDistribution.model_validate(value)
        except ValidationError:
            continue
    return found


def wants_score_logprobs(config) -> bool:
    """Ask for logprobs on holistic calls: the config's `score_logprobs`, by default on for the embedded judge."""
    chosen = getattr(config, "score_logprobs", None)
    return bool(config.is_local if chosen is None else chosen)


def holistic_options(rubric, config) -> CallOptions | None:
    """The per-call options of this rubric's judge-item calls with this judge: logprobs for a holistic item that
    writes one score (single-turn, or a whole conversation) when wanted; None otherwise (the plain call, its cache
    key unchanged). The scorers and the dry-run planner (hence the Batch API's request files) take them from here.

    `scope: assistant_turn` gets none: its call writes one JSON list of many turns' scores, and the item's score is
    their aggregate (min, mean, share), which no single score token's distribution describes."""
    if rubric.judge_mode != "holistic" or rubric.scope == "assistant_turn" or not wants_score_logprobs(config):
        return None
    return CallOptions(logprobs=True, top_logprobs=TOP_LOGPROBS)


def _score_position(tokens: list[TokenLogprob], written: int) -> int | None:
    """Index of the token that carries the written score digit, located in the text the tokens spell."""
    text, ends = "", []
    for token in tokens:
        text += token.token
        ends.append(len(text))
    matches = [m for m in _SCORE_AT.finditer(text) if int(m.group(1)) == written]
    if not matches:
        return None
    offset = matches[-1].start(1)
    return next(i for i, end in enumerate(ends) if end > offset)


def score_distribution(tokens: list[TokenLogprob] | None, written: int | None,
                       margin: float = TIE_MARGIN) -> ScoreDistribution | None:
    """The distribution over 1–5 at the written score's token, or None when the reply has no usable logprobs
    (none sent, the score token not found, or no level among its alternatives)."""
    if not tokens or written is None:
        return None
    index = _score_position(tokens, written)
    if index is None:
        return None
    position = tokens[index]
    offered = dict(position.top)
    offered.setdefault(position.token, position.logprob)
    mass: dict[int, float] = {}
    total = 0.0
    for token, logprob in offered.items():
        p = math.exp(logprob)
        total += p
        word = token.strip().strip('"{},').strip()
        if word.isdigit() and int(word) in LEVELS:
            mass[int(word)] = mass.get(int(word), 0.0) + p
    levels_mass = sum(mass.values())
    if levels_mass <= 0 or written not in mass:
        return None
    probs = {level: round(mass[level] / levels_mass, 4) for level in sorted(mass)}
    ranked = sorted(probs, key=lambda level: (-probs[level], level != written))
    first, second = ranked[0], (ranked[1] if len(ranked) > 1 else None)
    gap = probs[first] - (probs[second] if second is not None else 0.0)
    expected = sum(level * p for level, p in probs.items()) / sum(probs.values())
    return ScoreDistribution(probs=probs, expected=round(expected, 3), written=written, first=first, second=second,
                             margin=round(gap, 4), coverage=round(min(levels_mass, 1.0), 4),
                             tie=second is not None and gap < margin)


def tie_details(distributions: dict[str, ScoreDistribution]) -> dict | None:
    """The verdict's `tie` entry (None when no item is a tie): the tied items, the levels in doubt and their gap
    (`spread`, as the panel and self-consistency report theirs) and `disagreement`, which the audit queue's
    "uncertain first" order reads."""
    tied = {item: d for item, d in distributions.items() if d.tie}
    if not tied:
        return None
    spread = max(abs(d.first - (d.second or d.first)) for d in tied.values())
    return {"items": {item: [d.first, d.second] for item, d in tied.items()}, "spread": float(spread),
            "disagreement": True}
