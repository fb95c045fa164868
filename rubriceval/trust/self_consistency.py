"""Self-consistency: judge the same sample n times with sampling on, report the median score and the spread.

A judge that gives 2, 5, 3 to the same answer is unsure; its median is steadier than any single call, and the
spread says which items an expert should look at first (`uncertainty()` sorts the audit queue: uncertain first).
The n verdicts become one by the rules the judge panel uses too (`rubriceval/scoring/consensus.py`).

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

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.judge.client import JudgeClient
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.schema import Rubric
from rubriceval.scoring.consensus import (  # noqa: F401
    SELF_CONSISTENCY_KEY,
    Consensus,
    consensus_verdict,
    default_min_scored,
    summarize_scores,
)
from rubriceval.scoring.rubric_scorer import score_rubric

DETAILS_KEY = SELF_CONSISTENCY_KEY


class SelfConsistency(Consensus):
    """What the n judgements said (median, spread, votes: `Consensus`) and how they were sampled; stored in
    Verdict.details['self_consistency']."""

    temperature: float
    seeds: list[int]


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
    info = SelfConsistency(n=n, temperature=temperature, seeds=seeds)
    return consensus_verdict(verdicts, info, threshold=rubric.threshold, min_scored=default_min_scored(n),
                             details_key=DETAILS_KEY, label="self-consistency calls")
