"""Self-consistency: judge the same sample n times with sampling on, report the median score and the spread.

A judge that gives 2, 5, 3 to the same answer is unsure; its median is steadier than any single call, and the
spread says which items an expert should look at first (`uncertainty()` sorts the audit queue: uncertain first).

Why the n calls are distinct: JudgeClient caches identical calls, and at temperature 0 they would all be the
same anyway. Each call gets its own seed and the sampling temperature; both are part of the cache key, so a
repeated self-consistency run is served from the cache and gives the same n scores again.

The client has no per-call temperature/seed yet, so `_with_sampling` makes a shallow copy of the client that shares
its HTTP connection pool, concurrency bound, cache and counters and differs only in its config. (Proposed minimal
change to rubriceval/judge/client.py: `complete(..., temperature=None, seed=None)` overriding the config for one
call and entering the cache key; then this copy goes away.)
"""
from __future__ import annotations

import asyncio
import copy
import math
import statistics
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.data.sample import Sample
from rubriceval.judge.client import JudgeClient
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.schema import Rubric
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.verdict import Usage, Verdict

DETAILS_KEY = "self_consistency"


class SelfConsistency(BaseModel):
    """What the n judgements said; stored in Verdict.details['self_consistency']."""

    n: int                          # calls made
    temperature: float
    seeds: list[int]
    scores: list[float]             # the scored calls' scores, in seed order
    n_unscored: int = 0
    unscored_reasons: list[str] = Field(default_factory=list)
    median: float | None = None     # median of the scored calls (may be x.5 with an even count)
    spread: float | None = None     # max − min of the scored calls: 0 = fully consistent
    stdev: float | None = None      # population standard deviation of the scored calls
    agreement: float | None = None  # share of scored calls equal to the final score


def round_half_up(value: float) -> int:
    """The project's rounding for scores (as combine does): 3.5 → 4, never banker's rounding."""
    return int(math.floor(value + 0.5))


def summarize_scores(scores: list[float]) -> tuple[float, float, float]:
    """(median, spread, population stdev) of at least one score."""
    if not scores:
        raise ValueError("no scores to summarize")
    return float(statistics.median(scores)), float(max(scores) - min(scores)), float(statistics.pstdev(scores))


def uncertainty(verdict: Verdict) -> float | None:
    """The self-consistency spread of a verdict, or None when it was judged once (sort key: uncertain first)."""
    info = verdict.details.get(DETAILS_KEY)
    if not isinstance(info, dict):
        return None
    spread = info.get("spread")
    return float(spread) if isinstance(spread, (int, float)) else None


def sampling_seeds(base_seed: int | None, n: int) -> list[int]:
    base = base_seed or 0
    return [base + i + 1 for i in range(n)]


def sampling_config(config: JudgeConfig, temperature: float, seed: int) -> JudgeConfig:
    """One self-consistency call's settings (the dry-run planner uses it too, so its cache keys match the run's)."""
    return config.model_copy(update={"temperature": temperature, "seed": seed})


def _with_sampling(judge: JudgeClient, temperature: float, seed: int) -> JudgeClient:
    """The same client (connections, semaphore, cache, stats shared) with one call's sampling settings."""
    variant = copy.copy(judge)
    variant.config = sampling_config(judge.config, temperature, seed)
    return variant


async def score_with_self_consistency(rubric: Rubric, sample: Sample, judge: JudgeClient, n: int = 5,
                                      temperature: float = 0.7) -> Verdict:
    """Judge n times (distinct seeds at `temperature`) → the median score, rounded half up, with the spread.

    A majority of the n calls must be scored; otherwise the verdict is unscored with the reasons. The feedback and
    evidence are those of the first call that gave the final score, so the text always matches the number.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if temperature <= 0 and n > 1:
        raise ValueError("self-consistency needs sampling: temperature must be > 0 when n > 1")
    seeds = sampling_seeds(judge.config.seed, n)
    verdicts = await asyncio.gather(*(score_rubric(rubric, sample, _with_sampling(judge, temperature, seed))
                                      for seed in seeds))
    usage = sum((v.usage for v in verdicts), Usage())
    scored = [v for v in verdicts if v.score is not None]
    unscored = [v for v in verdicts if v.score is None]
    info = SelfConsistency(n=n, temperature=temperature, seeds=seeds, scores=[v.score for v in scored],
                           n_unscored=len(unscored), unscored_reasons=[v.unscored_reason or "" for v in unscored])
    # Too few answers to call it a consensus: say so rather than report one lucky call as the median.
    if len(scored) * 2 <= n:
        kind = Counter(v.unscored_kind for v in unscored).most_common(1)[0][0] if unscored else "error"
        first = unscored[0] if unscored else verdicts[0]
        return first.model_copy(update={
            "unscored_kind": kind, "usage": usage,
            "unscored_reason": f"only {len(scored)} of {n} self-consistency calls were scored; first failure: "
                               f"{first.unscored_reason}",
            "details": {**first.details, DETAILS_KEY: info.model_dump()}})
    median, spread, stdev = summarize_scores(info.scores)
    final = round_half_up(median)
    info.median, info.spread, info.stdev = median, spread, stdev
    info.agreement = sum(1 for s in info.scores if s == final) / len(info.scores)
    # Prefer a call that gave exactly the final score; with an even split (2 and 3 → 3) the closest call.
    representative = min(scored, key=lambda v: abs(v.score - final))   # min keeps the first of equals
    details: dict[str, Any] = {**representative.details, DETAILS_KEY: info.model_dump()}
    feedback = representative.feedback
    if representative.score != final:
        feedback = f"[median of {len(scored)} judgements = {final}; this feedback is from a {representative.score:g}]" \
                   f"\n{feedback}"
    return representative.model_copy(update={
        "score": float(final), "passed": final >= rubric.threshold, "feedback": feedback, "usage": usage,
        "details": details})
