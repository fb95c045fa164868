"""Weights for checklist questions fitted to expert scores: an ordinal logistic (proportional-odds) model on p(yes).

    P(score ≤ k | x) = σ(c_k − w·x),   x = each question's p(yes),   k = 1..4

fitted by maximum likelihood with an L2 penalty on w (scipy's L-BFGS; numpy/scipy are already dependencies, so no
scikit-learn). The cutpoints are kept increasing by fitting their gaps in log space. A fitted item scores
1 + #{k : w·x > c_k} (the model's median level), as `rubriceval.scoring.checklist.fitted_level` applies it.

A fit is only worth shipping when it beats the declared level rule on items it was not fitted to:
`cross_fitted_levels` predicts every item from a model fitted on the other folds, and
`rubriceval calibrate --fit-weights` refuses a fit whose held-out κ does not exceed the rule's.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import optimize
from scipy.special import expit

from rubriceval.rubric.schema import FittedWeights

LEVELS = 5
DEFAULT_L2 = 0.05      # light: p(yes) features live in [0, 1], so useful weights are large
MIN_GAP = 1e-3


def _unpack(theta: np.ndarray, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    weights = theta[:n_features]
    first, log_gaps = theta[n_features], theta[n_features + 1:]
    cutpoints = first + np.concatenate([[0.0], np.cumsum(np.exp(log_gaps) + MIN_GAP)])
    return weights, cutpoints


def _negative_log_likelihood(theta: np.ndarray, x: np.ndarray, y: np.ndarray, l2: float) -> float:
    weights, cutpoints = _unpack(theta, x.shape[1])
    z = x @ weights
    upper = np.append(cutpoints, np.inf)       # P(y ≤ k) for k = 1..5
    lower = np.insert(cutpoints, 0, -np.inf)   # P(y ≤ k − 1)
    p = expit(upper[y - 1] - z) - expit(lower[y - 1] - z)
    return float(-np.sum(np.log(np.clip(p, 1e-12, None))) + l2 * np.sum(weights ** 2))


def fit_ordinal(features: Sequence[dict[str, float]], scores: Sequence[int], question_ids: Sequence[str], *,
                l2: float = DEFAULT_L2, judge_model: str = "") -> FittedWeights:
    """Fit weights and cutpoints to (p(yes) per question, expert score 1–5) pairs."""
    if len(features) != len(scores) or not features:
        raise ValueError(f"need matching, non-empty features and scores (got {len(features)} and {len(scores)})")
    x = np.array([[row.get(q, 0.0) for q in question_ids] for row in features], dtype=float)
    y = np.array([int(s) for s in scores])
    if y.min() < 1 or y.max() > LEVELS:
        raise ValueError("expert scores must be 1–5")
    start = np.concatenate([np.zeros(x.shape[1]), [1.5], np.zeros(LEVELS - 2)])
    result = optimize.minimize(_negative_log_likelihood, start, args=(x, y, l2), method="L-BFGS-B")
    weights, cutpoints = _unpack(result.x, x.shape[1])
    return FittedWeights(weights={q: round(float(w), 4) for q, w in zip(question_ids, weights)},
                         cutpoints=[round(float(c), 4) for c in cutpoints], n_train=len(y), judge_model=judge_model)


def predict_level(fitted: FittedWeights, features: dict[str, float]) -> int:
    z = sum(w * features.get(q, 0.0) for q, w in fitted.weights.items())
    return 1 + sum(1 for c in fitted.cutpoints if z > c)


def stratified_folds(scores: Sequence[int], n_folds: int, seed: int) -> list[int]:
    """A fold number per item, dealt round-robin within each score after a seeded shuffle."""
    rng = np.random.default_rng(seed)
    folds = [0] * len(scores)
    by_score: dict[int, list[int]] = {}
    for index, score in enumerate(scores):
        by_score.setdefault(int(score), []).append(index)
    offset = 0
    for score in sorted(by_score):
        members = [by_score[score][i] for i in rng.permutation(len(by_score[score]))]
        for position, index in enumerate(members):
            folds[index] = (offset + position) % n_folds
        offset += len(members)
    return folds


def cross_fitted_levels(features: Sequence[dict[str, float]], scores: Sequence[int], question_ids: Sequence[str],
                        *, n_folds: int = 2, seed: int = 0, l2: float = DEFAULT_L2) -> list[int]:
    """Every item's level from a model fitted on the other folds only (an honest held-out estimate)."""
    folds = stratified_folds(scores, n_folds, seed)
    predicted = [0] * len(scores)
    for fold in range(n_folds):
        train = [i for i, f in enumerate(folds) if f != fold]
        test = [i for i, f in enumerate(folds) if f == fold]
        if not train or not test:
            continue
        model = fit_ordinal([features[i] for i in train], [scores[i] for i in train], question_ids, l2=l2)
        for i in test:
            predicted[i] = predict_level(model, features[i])
    return predicted
