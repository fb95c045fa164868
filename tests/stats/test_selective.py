"""The guarantee's arithmetic (issue 44): Clopper–Pearson bounds against the binomial sum itself, fixed-sequence
testing over confidence thresholds, and a judge that answers at random never gets anything accepted."""
from __future__ import annotations

import math
import random

import pytest

from rubriceval.stats.selective import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    fixed_sequence,
    min_reviews,
)


def upper_tail(k: int, n: int, p: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p), summed from the pmf."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1))


def lower_tail(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(0, k + 1))


@pytest.mark.parametrize("k,n", [(1, 1), (5, 5), (29, 29), (27, 30), (45, 50), (90, 100), (3, 10), (150, 160)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_lower_bound_is_where_the_binomial_tail_equals_one_minus_confidence(k, n, confidence):
    bound = clopper_pearson_lower(k, n, confidence)
    assert upper_tail(k, n, bound) == pytest.approx(1 - confidence, abs=1e-9)
    # exact, not merely conservative: a little higher and k of n would be too likely to reject it
    assert upper_tail(k, n, bound + 1e-4) > 1 - confidence > upper_tail(k, n, bound - 1e-4)


@pytest.mark.parametrize("k,n", [(0, 1), (0, 20), (3, 10), (25, 30)])
def test_the_upper_bound_mirrors_it(k, n):
    bound = clopper_pearson_upper(k, n, 0.95)
    assert lower_tail(k, n, bound) == pytest.approx(0.05, abs=1e-9)


def test_edges():
    assert clopper_pearson_lower(0, 0, 0.95) == 0.0 and clopper_pearson_upper(0, 0, 0.95) == 1.0
    assert clopper_pearson_lower(0, 40, 0.95) == 0.0
    assert clopper_pearson_upper(40, 40, 0.95) == 1.0
    # all agree on a few: the bound stays under 0.9 (5 of 5: 0.05^(1/5) ≈ 0.549)
    assert clopper_pearson_lower(5, 5, 0.95) == pytest.approx(0.05 ** (1 / 5))
    assert clopper_pearson_lower(28, 28, 0.95) < 0.9 <= clopper_pearson_lower(29, 29, 0.95)
    assert min_reviews(0.9, 0.95) == 29
    with pytest.raises(ValueError):
        clopper_pearson_lower(3, 2, 0.95)


def test_no_reviews_accept_nothing():
    fit = fixed_sequence([], [], 0.9, 0.95)
    assert fit.threshold is None and fit.lower_bound is None and fit.n_reviewed == 0 and fit.coverage == 0.0


def test_a_few_reviews_all_agreeing_accept_nothing():
    fit = fixed_sequence([0.4] * 20, [True] * 20, 0.9, 0.95)
    assert fit.threshold is None and fit.steps == ()       # 20 < 29: no step could pass, none is tested


def test_the_largest_region_before_the_first_failure_is_accepted():
    # 60 confident decisions all agreeing, then 40 unsure ones agreeing half the time
    confidences = [0.45 - i * 0.001 for i in range(60)] + [0.05 - i * 0.001 for i in range(40)]
    agreements = [True] * 60 + [i % 2 == 0 for i in range(40)]
    fit = fixed_sequence(confidences, agreements, 0.9, 0.95)
    assert fit.threshold is not None
    assert fit.lower_bound is not None and fit.lower_bound >= 0.9
    assert fit.agreements / fit.n >= 0.9 and 60 <= fit.n < 100
    assert fit.lower_bound == pytest.approx(clopper_pearson_lower(fit.agreements, fit.n, 0.95))
    # the accepted step passed and every earlier one did; the next tested one failed and testing stopped there
    assert all(s.passed for s in fit.steps[:-1]) and not fit.steps[-1].passed
    assert fit.steps[-2].threshold == fit.threshold
    assert fit.coverage == fit.n / 100


def test_testing_stops_at_the_first_failure_even_if_a_larger_region_would_pass():
    # the most confident 30 hold 3 disagreements (bound < 0.9); the rest agree: a larger region could reach 0.9,
    # but fixed sequence stopped at the first failure
    confidences = [0.5 - i * 0.001 for i in range(300)]
    agreements = [i not in (0, 1, 2) for i in range(300)]
    fit = fixed_sequence(confidences, agreements, 0.9, 0.95)
    assert fit.threshold is None and len(fit.steps) == 1 and not fit.steps[0].passed
    assert clopper_pearson_lower(297, 300, 0.95) >= 0.9


def test_ties_are_one_region():
    fit = fixed_sequence([0.3] * 40 + [0.1] * 40, [True] * 40 + [False] * 40, 0.9, 0.95)
    assert fit.threshold == 0.3 and fit.n == 40 and [s.n for s in fit.steps] == [40, 80]


@pytest.mark.parametrize("truth_rate", [0.5, 0.1, 0.9])
def test_a_judge_answering_at_random_gets_nothing_accepted(truth_rate):
    """p(yes) uniform, the decision p(yes) ≥ 0.5, the reviewer's decision drawn independently: over 300 seeds of
    200 reviewed decisions each, no region is ever accepted at agreement 0.9 / confidence 0.95."""
    accepted = 0
    for seed in range(300):
        rng = random.Random(seed)
        p_yes = [rng.random() for _ in range(200)]
        reviewer = [rng.random() < truth_rate for _ in range(200)]
        machine = [p >= 0.5 for p in p_yes]
        fit = fixed_sequence([abs(p - 0.5) for p in p_yes], [m == r for m, r in zip(machine, reviewer)], 0.9, 0.95)
        accepted += fit.threshold is not None
    assert accepted == 0


def test_a_judge_that_agrees_where_confident_gets_that_region():
    """The control for the random judge: the same draws, but the machine agrees with the reviewer whenever its
    p(yes) is far from 0.5 — then the confident region is accepted."""
    rng = random.Random(7)
    p_yes = [rng.random() for _ in range(400)]
    agreements = [abs(p - 0.5) > 0.2 or rng.random() < 0.5 for p in p_yes]
    fit = fixed_sequence([abs(p - 0.5) for p in p_yes], agreements, 0.9, 0.95)
    assert fit.threshold is not None and fit.threshold >= 0.15 and fit.lower_bound >= 0.9
