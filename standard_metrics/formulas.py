"""The arithmetic of the RAG metrics, free of I/O, so each formula can be checked against exact fractions.

Deliberate differences from Ragas 0.2.15 (both conformance-tested in tests/standard_metrics/test_metrics_formulas.py):
- `average_precision` divides by the true number of relevant items, not `sum + 1e-10`, so a perfect ranking is
  exactly 1.0 (Ragas: 0.9999999999).
- `fbeta` uses the exact closed form (1+β²)·tp / ((1+β²)·tp + β²·fn + fp) instead of Ragas's epsilon-padded
  precision/recall; values agree to ~1e-10.
"""
from __future__ import annotations

import math
from collections.abc import Sequence


def average_precision(relevance: Sequence[int | bool]) -> float:
    """AP = Σ_k precision@k · rel_k / Σ_k rel_k over a ranked list of 0/1 verdicts.

    [1, 1, 0, 1, 0] → (1/1 + 2/2 + 3/4) / 3 = 11/12 (the seeds' worked example).
    No relevant item at all (including an empty list) → 0.0: every retrieved item was noise. Ragas returns the
    same 0.0 through its epsilon; callers that must tell "nothing retrieved" apart check the list first.
    """
    relevant_so_far = 0
    precision_sum = 0.0
    for rank, verdict in enumerate(relevance, start=1):
        if verdict:
            relevant_so_far += 1
            precision_sum += relevant_so_far / rank
    return precision_sum / relevant_so_far if relevant_so_far else 0.0


def fbeta(tp: int, fp: int, fn: int, beta: float = 1.0) -> float:
    """F-beta from statement counts. β=1: F1 = tp / (tp + 0.5·(fp + fn)), as the seeds write it.

    tp == 0 → 0.0 (also for tp = fp = fn = 0, matching Ragas; answer_correctness reports "no ground-truth
    statements" as unscored before it ever gets here).
    """
    if min(tp, fp, fn) < 0:
        raise ValueError(f"counts must be non-negative, got tp={tp} fp={fp} fn={fn}")
    if beta <= 0:
        raise ValueError(f"beta must be positive, got {beta}")
    if tp == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)


def weighted_average(values: Sequence[float], weights: Sequence[float]) -> float:
    """Σ wᵢ·vᵢ / Σ wᵢ — Ragas's np.average, so weights need not sum to 1."""
    if len(values) != len(weights):
        raise ValueError("values and weights differ in length")
    total = sum(weights)
    if total <= 0 or any(w < 0 for w in weights):
        raise ValueError(f"weights must be non-negative with a positive sum, got {list(weights)}")
    return sum(v * w for v, w in zip(values, weights)) / total


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float | None:
    """cos(a, b) in [-1, 1]; None when either vector is all zeros (the angle is undefined, not 0)."""
    if len(a) != len(b):
        raise ValueError(f"vectors differ in dimension: {len(a)} vs {len(b)}")
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    if norm == 0.0:
        return None
    return dot / norm

