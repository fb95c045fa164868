"""The metric arithmetic against exact fractions and the Ragas 0.2.15 reference values."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest

from rubriceval.standard_metrics.formulas import average_precision, cosine_similarity, fbeta, weighted_average
from tests.fixture_files import fixture_path

REFERENCE = fixture_path("reference")


def _jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (REFERENCE / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _exact_ap(verdicts: list[int]) -> Fraction:
    hits, total = 0, Fraction(0)
    for k, v in enumerate(verdicts, start=1):
        if v:
            hits += 1
            total += Fraction(hits, k)
    return total / hits if hits else Fraction(0)


@pytest.mark.parametrize("row", _jsonl("average_precision.jsonl"), ids=lambda r: str(r["verdicts"]))
def test_average_precision_matches_exact_fraction_and_ragas(row):
    ours = average_precision(row["verdicts"])
    expected = _exact_ap(row["verdicts"])
    if "/" in row["exact_fraction"] and not row["exact_fraction"].startswith("0/0"):
        assert expected == Fraction(row["exact_fraction"])       # the fixture's own fraction agrees with ours
    assert ours == pytest.approx(float(expected), abs=1e-9)
    assert ours == pytest.approx(row["ragas_value"], abs=1e-9)   # Ragas's +1e-10 epsilon is within 1e-9


def test_seed_worked_example_is_eleven_twelfths():
    assert average_precision([1, 1, 0, 1, 0]) == pytest.approx(11 / 12, abs=1e-12)


def test_perfect_ranking_is_exactly_one_unlike_ragas_epsilon():
    assert average_precision([1, 0]) == 1.0
    assert average_precision([1, 1, 1]) == 1.0


def test_no_relevant_context_is_zero_not_nan():
    assert average_precision([]) == 0.0
    assert average_precision([0, 0, 0]) == 0.0


def _exact_fbeta(tp: int, fp: int, fn: int, beta: float) -> Fraction:
    if tp == 0:
        return Fraction(0)
    b2 = Fraction(beta) ** 2
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)


@pytest.mark.parametrize("row", _jsonl("fbeta.jsonl"), ids=lambda r: f"{r['tp']}-{r['fp']}-{r['fn']}-b{r['beta']}")
def test_fbeta_matches_exact_fraction_and_ragas(row):
    ours = fbeta(row["tp"], row["fp"], row["fn"], row["beta"])
    assert ours == pytest.approx(float(_exact_fbeta(row["tp"], row["fp"], row["fn"], row["beta"])), abs=1e-9)
    assert ours == pytest.approx(row["ragas_fbeta"], abs=1e-9)
    if "similarity" in row:
        combined = weighted_average([ours, row["similarity"]], [0.75, 0.25])
        assert combined == pytest.approx(row["answer_correctness_weights_0.75_0.25"], abs=1e-9)


def test_f1_is_the_seed_formula():
    # 张伟 教研部/大模型课程 vs 教研部/大数据方向: TP 1, FP 1, FN 1 → 1 / (1 + 0.5·2) = 0.5
    assert fbeta(1, 1, 1) == 0.5
    for tp, fp, fn in [(3, 1, 1), (4, 2, 1), (1, 3, 2), (10, 0, 1)]:
        assert fbeta(tp, fp, fn) == pytest.approx(tp / (tp + 0.5 * (fp + fn)), abs=1e-12)


def test_fbeta_rejects_nonsense():
    with pytest.raises(ValueError):
        fbeta(-1, 0, 0)
    with pytest.raises(ValueError):
        fbeta(1, 0, 0, beta=0)


def test_weighted_average_normalises_by_weight_sum_like_numpy_average():
    assert weighted_average([1.0, 0.0], [3, 1]) == 0.75
    assert weighted_average([0.6, 0.2], [0.75, 0.25]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        weighted_average([1.0], [0.0])
    with pytest.raises(ValueError):
        weighted_average([1.0, 1.0], [1.0, -1.0])


def test_cosine_similarity_and_undefined_angle():
    assert cosine_similarity([1, 0], [1, 0]) == pytest.approx(1.0)
    assert cosine_similarity([1, 0], [0, 1]) == pytest.approx(0.0)
    assert cosine_similarity([1, 1], [-1, -1]) == pytest.approx(-1.0)
    assert cosine_similarity([0, 0], [1, 0]) is None
    with pytest.raises(ValueError):
        cosine_similarity([1], [1, 2])

