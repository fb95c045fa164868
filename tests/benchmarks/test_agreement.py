"""Judge-vs-human agreement statistics and the SummEval / HaluEval benchmark loaders."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy import stats

from benchmarks.judge.datasets import (
    SUMMEVAL_INSTRUCTION,
    balanced_subsample,
    load_halueval,
    load_summeval,
    summeval_expert_matrix,
)
from rubriceval import DatasetError, Verdict, agreement_report
from rubriceval.stats.agreement import (
    AgreementInputError,
    Estimate,
    agreement_from_verdicts,
    as_binary_label,
    binary_agreement_report,
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    kendall,
    krippendorff_alpha,
    paired,
    spearman,
    tables,
)

NAN = float("nan")

# Hand-worked example on a 1..3 scale (rows = human, columns = judge):
#   human = [1, 1, 2, 3, 3], judge = [1, 2, 2, 3, 2]
#   table = [[1, 1, 0], [0, 1, 0], [0, 1, 1]]; human margins r = [2, 1, 2], judge margins c = [1, 3, 1], n = 5
#   expected-by-chance E = r·cᵀ/5 = [[.4, 1.2, .4], [.2, .6, .2], [.4, 1.2, .4]]
HUMAN_3 = [1, 1, 2, 3, 3]
JUDGE_3 = [1, 2, 2, 3, 2]
IDS_3 = ["a", "b", "c", "d", "e"]


def _agreeing_scores(n: int = 120, seed: int = 7) -> tuple[list[int], list[int]]:
    """Judge = human ± noise on 1..5: moderate-to-high agreement, every score used."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n)
    judge = np.clip(human + rng.choice([-2, -1, 0, 0, 0, 1], n), 1, 5)
    return judge.tolist(), human.tolist()


def _has_nan(value) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v) for v in value)
    return False


# ---------------------------------------------------------------------------------------------------- kappa


def test_unweighted_kappa_by_hand():
    # p_o = 3/5 = 0.6; p_e = (2·1 + 1·3 + 2·1)/25 = 0.28; κ = (0.6 − 0.28)/(1 − 0.28) = 0.32/0.72 = 4/9
    kappa = cohen_kappa(JUDGE_3, HUMAN_3, weights="unweighted", scale=(1, 3), n_boot=0)
    assert kappa.value == pytest.approx(4 / 9)
    assert kappa.ci_low is None and kappa.ci_high is None


def test_quadratic_kappa_by_hand():
    # w = (d/2)²: d=1 → 0.25, d=2 → 1
    # Σ w·O = 0.25 (h1,j2) + 0.25 (h3,j2) = 0.5
    # Σ w·E = 0.25·1.2 + 1·0.4 + 0.25·0.2 + 0.25·0.2 + 1·0.4 + 0.25·1.2 = 1.5;  κ = 1 − 0.5/1.5 = 2/3
    assert cohen_kappa(JUDGE_3, HUMAN_3, scale=(1, 3), n_boot=0).value == pytest.approx(2 / 3)


def test_linear_kappa_by_hand():
    # w = d/2: Σ w·O = 0.5 + 0.5 = 1.0; Σ w·E = 0.6 + 0.4 + 0.1 + 0.1 + 0.4 + 0.6 = 2.2; κ = 1 − 1/2.2 = 6/11
    kappa = cohen_kappa(JUDGE_3, HUMAN_3, weights="linear", scale=(1, 3), n_boot=0)
    assert kappa.value == pytest.approx(6 / 11)


def _expand_table(table: list[list[int]]) -> tuple[list[int], list[int]]:
    rows, cols = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            rows += [i + 1] * count
            cols += [j + 1] * count
    return rows, cols


def test_kappa_matches_published_sas_example():
    # SAS printout reproduced in statsmodels' tests: table [[0,4,1],[0,8,0],[0,1,5]] →
    # simple kappa 0.4842, linear-weighted (weights 0,1,2) kappa 0.4701.
    first, second = _expand_table([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert cohen_kappa(second, first, weights="unweighted", scale=(1, 3), n_boot=0).value == pytest.approx(
        0.4842, abs=5e-5)
    assert cohen_kappa(second, first, weights="linear", scale=(1, 3), n_boot=0).value == pytest.approx(
        0.4701, abs=5e-5)


@pytest.mark.parametrize("weights", ["quadratic", "linear", "unweighted"])
def test_kappa_matches_sklearn(weights):
    metrics = pytest.importorskip("sklearn.metrics")
    judge, human = _agreeing_scores(200, seed=11)
    expected = metrics.cohen_kappa_score(judge, human, weights=None if weights == "unweighted" else weights,
                                         labels=[1, 2, 3, 4, 5])
    assert cohen_kappa(judge, human, weights=weights, n_boot=0).value == pytest.approx(expected, abs=1e-12)


def test_kappa_weights_by_scale_distance_not_observed_labels():
    # Only scores 1, 3, 5 are used. Weighting by scale distance differs from weighting by index among observed
    # labels (what sklearn does without labels=); the full-scale labels must agree with ours.
    metrics = pytest.importorskip("sklearn.metrics")
    judge, human = [1, 3, 5, 5, 3, 1, 3], [1, 5, 5, 3, 3, 1, 1]
    ours = cohen_kappa(judge, human, n_boot=0).value
    assert ours == pytest.approx(metrics.cohen_kappa_score(judge, human, weights="quadratic", labels=[1, 2, 3, 4, 5]))


# ---------------------------------------------------------------------------------------------- correlations


def test_spearman_and_kendall_match_scipy():
    judge, human = _agreeing_scores(150, seed=3)
    assert spearman(judge, human, n_boot=0).value == pytest.approx(stats.spearmanr(judge, human).statistic)
    assert kendall(judge, human, n_boot=0).value == pytest.approx(stats.kendalltau(judge, human).statistic)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_table_statistics_used_in_bootstrap_equal_scipy_on_a_resample(seed):
    # The bootstrap computes every statistic from the K×K table; on an explicit item resample the table formulas
    # must give what scipy/sklearn give on the resampled items themselves.
    judge, human = map(np.array, _agreeing_scores(90, seed=seed + 20))
    idx = np.random.default_rng(seed).integers(0, len(judge), len(judge))
    j, h = judge[idx], human[idx]
    table = paired.contingency_table(j, h, (1, 5))[None]
    assert tables.table_spearman(table)[0] == pytest.approx(stats.spearmanr(j, h).statistic, abs=1e-12)
    assert tables.table_kendall_tau_b(table)[0] == pytest.approx(stats.kendalltau(j, h).statistic, abs=1e-12)
    assert tables.table_share_within(table, 0)[0] == pytest.approx(np.mean(j == h))
    assert tables.table_share_within(table, 1)[0] == pytest.approx(np.mean(np.abs(j - h) <= 1))
    assert tables.table_mean_difference(table)[0] == pytest.approx(np.mean(j - h))


def test_confusion_matrix_rows_are_human_columns_judge():
    assert confusion_matrix(JUDGE_3, HUMAN_3, scale=(1, 3)) == [[1, 1, 0], [0, 1, 0], [0, 1, 1]]


# --------------------------------------------------------------------------------------------------- report


def test_report_by_hand():
    report = agreement_report(JUDGE_3, HUMAN_3, ids=IDS_3, scale=(1, 3), name="情绪安抚 v3", n_boot=0)
    assert report.n == 5
    assert report.exact.value == pytest.approx(0.6)            # 3 of 5 identical
    assert report.within_one.value == pytest.approx(1.0)       # no gap of 2
    assert report.kappa_quadratic.value == pytest.approx(2 / 3)
    assert report.mean_difference.value == pytest.approx(0.0)  # (0 + 1 + 0 + 0 − 1)/5
    assert report.confusion == [[1, 1, 0], [0, 1, 0], [0, 1, 1]]
    assert [(w.id, w.judge, w.human, w.gap) for w in report.worst_items] == [("b", 2, 1, 1), ("e", 2, 3, 1)]
    assert report.summary() == "情绪安抚 v3: κ = 0.67 on 5 audited items"
    frame = report.confusion_frame()
    assert frame.loc[3, 2] == 1 and frame.index.name == "human" and frame.columns.name == "judge"


def test_worst_items_sorted_by_gap_then_natural_id():
    judge = [5, 1, 4, 2, 3]
    human = [1, 1, 2, 4, 1]
    report = agreement_report(judge, human, ids=["item-1", "item-5", "item-10", "item-9", "item-2"], n_boot=0,
                              worst_k=3)
    # gaps: item-1 → 4, item-10 → 2, item-9 → 2, item-2 → 2, item-5 → 0 (not a disagreement);
    # ties by id in natural order: item-2 < item-9 < item-10
    assert [w.id for w in report.worst_items] == ["item-1", "item-2", "item-9"]


def test_report_bootstrap_contains_point_estimates_and_summary_format():
    judge, human = _agreeing_scores(120)
    report = agreement_report(judge, human, name="情绪安抚 v3", n_boot=1000, seed=0)
    for field in ("exact", "within_one", "kappa_quadratic", "spearman", "kendall", "mean_difference"):
        estimate: Estimate = getattr(report, field)
        assert estimate.ci_low is not None and estimate.ci_high is not None, field
        assert estimate.ci_low <= estimate.value <= estimate.ci_high, field
        assert estimate.ci_high > estimate.ci_low, field
        assert estimate.n_boot_used == 1000
    assert re.fullmatch(r"情绪安抚 v3: κ = 0\.\d\d \[0\.\d\d, 0\.\d\d\] on 120 audited items", report.summary())
    assert report.notes == []


def test_bootstrap_is_reproducible_with_a_seed_and_changes_with_another():
    judge, human = _agreeing_scores(80)
    first = agreement_report(judge, human, n_boot=500, seed=42)
    again = agreement_report(judge, human, n_boot=500, seed=42)
    other = agreement_report(judge, human, n_boot=500, seed=43)
    assert first == again
    assert (first.kappa_quadratic.ci_low, first.kappa_quadratic.ci_high) != (
        other.kappa_quadratic.ci_low, other.kappa_quadratic.ci_high)
    assert first.kappa_quadratic.value == other.kappa_quadratic.value


def test_narrower_confidence_gives_narrower_interval():
    judge, human = _agreeing_scores(100)
    wide = cohen_kappa(judge, human, confidence=0.95, seed=1)
    narrow = cohen_kappa(judge, human, confidence=0.5, seed=1)
    assert wide.ci_low < narrow.ci_low <= narrow.value <= narrow.ci_high < wide.ci_high


def test_bootstrap_is_fast_for_a_large_audit():
    import time

    judge, human = _agreeing_scores(5000)
    start = time.perf_counter()
    agreement_report(judge, human, n_boot=2000)
    assert time.perf_counter() - start < 2.0


# -------------------------------------------------------------------------------------------- degenerate cases


def test_no_items():
    report = agreement_report([], [])
    assert report.n == 0
    for field in ("exact", "within_one", "kappa_quadratic", "spearman", "kendall", "mean_difference"):
        assert getattr(report, field).value is None
        assert getattr(report, field).note == "no paired items"
    assert report.summary() == "κ undefined (no paired items) on 0 audited items"
    assert not _has_nan(report.model_dump())


def test_single_item():
    report = agreement_report([4], [5])
    assert report.exact.value == 0.0 and report.exact.ci_low is None
    assert report.kappa_quadratic.value is None and "at least 2 items" in report.kappa_quadratic.note
    assert report.spearman.value is None and report.kendall.value is None
    assert any(note.startswith("kappa_quadratic:") for note in report.notes)
    assert not _has_nan(report.model_dump())


def test_both_raters_constant_and_equal():
    report = agreement_report([5, 5, 5, 5], [5, 5, 5, 5])
    assert report.exact.value == 1.0
    assert report.kappa_quadratic.value is None and "0/0" in report.kappa_quadratic.note
    assert report.spearman.value is None and "same score (5)" in report.spearman.note
    assert report.kendall.value is None
    assert not _has_nan(report.model_dump())


def test_constant_judge_gives_zero_kappa_with_a_note_and_no_correlation():
    report = agreement_report([4, 4, 4, 4, 4, 4], [1, 2, 3, 4, 5, 4])
    assert report.kappa_quadratic.value == 0.0
    assert "judge gave every item the same score (4)" in report.kappa_quadratic.note
    assert report.spearman.value is None and "judge gave every item the same score" in report.spearman.note
    assert not _has_nan(report.model_dump())


def test_ci_left_out_when_most_resamples_are_undefined():
    # 9 items at 5/5 and one at 4/4: about a third (0.9¹⁰ ≈ 0.35) of resamples are all 5/5, where kappa is 0/0.
    kappa = cohen_kappa([5] * 9 + [4], [5] * 9 + [4], n_boot=400, seed=0)
    assert kappa.value == pytest.approx(1.0)
    assert kappa.ci_low is None and kappa.ci_high is None
    assert "undefined in" in kappa.note


def test_estimate_rejects_nan_and_unexplained_none():
    with pytest.raises(ValueError):
        Estimate(value=NAN, note="x")
    with pytest.raises(ValueError):
        Estimate(value=None)


@pytest.mark.parametrize("judge, human, message", [
    ([1, 2], [1], "2 judge scores but 1 human scores"),
    ([1, 6], [1, 2], "outside the scale 1..5"),
    ([1, 3.5], [1, 2], "not an integer"),
    ([1, None], [1, 2], "is None"),
    ([1, NAN], [1, 2], "is nan"),
])
def test_bad_scores_are_rejected(judge, human, message):
    with pytest.raises(AgreementInputError, match=re.escape(message)):
        agreement_report(judge, human)


def test_integral_float_scores_are_accepted_and_duplicate_ids_rejected():
    assert agreement_report([4.0, 5.0], [4, 5], n_boot=0).exact.value == 1.0
    with pytest.raises(AgreementInputError, match="duplicate id 'x'"):
        agreement_report([1, 2], [1, 2], ids=["x", "x"])


def test_agreement_from_verdicts_counts_unscored_separately():
    verdicts = [Verdict(sample_id="s1", scorer="r", score=5.0), Verdict(sample_id="s2", scorer="r", score=3.0),
                Verdict(sample_id="s3", scorer="r", score=1.0),
                Verdict.unscored("s4", "r", "parse_error", "no [RESULT] in the answer"),
                Verdict(sample_id="s5", scorer="r", score=2.0)]   # not audited
    human = {"s1": 5, "s2": 4, "s3": 1, "s4": 2}
    report = agreement_from_verdicts(verdicts, human, name="流程合规 v1", n_boot=0)
    assert report.n == 3 and report.n_unscored == 1
    assert report.exact.value == pytest.approx(2 / 3)
    assert report.summary().endswith("on 3 audited items (1 unscored left out)")
    assert report.notes[0].startswith("1 judge verdict(s) were unscored")


# ---------------------------------------------------------------------------------------------------- binary


def test_binary_report_by_hand():
    # human = T T T F F F F F, judge = T T F T F F F F → tp 2, fn 1, fp 1, tn 4
    # accuracy 6/8; precision 2/3; recall 2/3; F1 2/3
    # p_o = 0.75; p_e = (3/8)² + (5/8)² = 34/64; κ = (0.75 − 34/64)/(1 − 34/64) = 14/30 = 7/15
    human = [True, True, True, False, False, False, False, False]
    judge = ["yes", "yes", "no", "yes", "no", "no", "no", "no"]
    report = binary_agreement_report(judge, human, ids=[f"h{i}" for i in range(8)], name="HaluEval", n_boot=0)
    assert report.accuracy.value == pytest.approx(0.75)
    assert report.precision.value == pytest.approx(2 / 3)
    assert report.recall.value == pytest.approx(2 / 3)
    assert report.f1.value == pytest.approx(2 / 3)
    assert report.kappa.value == pytest.approx(7 / 15)
    assert report.confusion == [[4, 1], [1, 2]]
    assert [(d.id, d.kind) for d in report.disagreements] == [("h2", "false_negative"), ("h3", "false_positive")]
    assert report.summary() == "HaluEval: κ = 0.47, F1 = 0.67 on 8 audited items"


def test_binary_matches_sklearn_and_bootstrap_contains_point():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    human = rng.random(300) < 0.4
    judge = np.where(rng.random(300) < 0.8, human, ~human)
    report = binary_agreement_report(judge.tolist(), human.tolist(), n_boot=1000, seed=2)
    assert report.precision.value == pytest.approx(metrics.precision_score(human, judge))
    assert report.recall.value == pytest.approx(metrics.recall_score(human, judge))
    assert report.f1.value == pytest.approx(metrics.f1_score(human, judge))
    assert report.kappa.value == pytest.approx(metrics.cohen_kappa_score(human, judge))
    for field in ("accuracy", "precision", "recall", "f1", "kappa"):
        estimate = getattr(report, field)
        assert estimate.ci_low <= estimate.value <= estimate.ci_high, field


def test_binary_degenerate_precision_when_judge_never_says_yes():
    report = binary_agreement_report([False, False, False], [True, False, False], n_boot=100)
    assert report.precision.value is None and "never said yes" in report.precision.note
    assert report.recall.value == 0.0
    assert report.kappa.value == 0.0
    assert not _has_nan(report.model_dump())


def test_binary_labels():
    assert as_binary_label("Yes") is True and as_binary_label("否") is False and as_binary_label(1) is True
    with pytest.raises(AgreementInputError, match="not a yes/no label"):
        as_binary_label("maybe")
    with pytest.raises(AgreementInputError):
        as_binary_label(2)


# ----------------------------------------------------------------------------------------------- Krippendorff

# Tiny hand example: units (1,2), (2,2), (3,3) and (1, missing) — the last is not pairable and drops out.
#   coincidences o12 = o21 = 1, o22 = 2, o33 = 2 → n_c = [1, 3, 2], n = 6
#   interval: Σ o·δ² = 2·1 = 2; Σ n_c·n_k·δ² = 2·(1·3·1 + 1·2·4 + 3·2·1) = 34; α = 1 − 5·2/34 = 12/17
#   nominal:  Σ o·δ = 2;       Σ n_c·n_k (c≠k) = 36 − (1 + 9 + 4) = 22;      α = 1 − 5·2/22 = 6/11
#   ordinal:  δ12 = (1+3 − 4/2)² = 4, δ13 = (6 − 3/2)² = 20.25, δ23 = (5 − 5/2)² = 6.25
#             Σ o·δ = 2·4 = 8; Σ n_c·n_k·δ = 2·(3·4 + 2·20.25 + 6·6.25) = 180; α = 1 − 5·8/180 = 7/9
TINY_UNITS = [[1, 2], [2, 2], [3, 3], [1, NAN]]


@pytest.mark.parametrize("level, expected", [("interval", 12 / 17), ("nominal", 6 / 11), ("ordinal", 7 / 9)])
def test_krippendorff_alpha_by_hand(level, expected):
    assert krippendorff_alpha(TINY_UNITS, level=level).value == pytest.approx(expected)


# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability": 4 observers × 12 units with missing values;
# published α: nominal 0.743, ordinal 0.815, interval 0.849. Rows here are units, columns observers A–D.
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]).T


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_matches_the_2011_paper(level, published):
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level=level).value, 3) == published


def test_krippendorff_alpha_matches_wikipedia_example():
    # Wikipedia's computational example (3 coders × 15 units): nominal 0.691358, interval 0.810845
    # (the values fast-krippendorff's tests pin to 6 decimals).
    coders = np.array([
        [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
        [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
        [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
    ])
    assert round(krippendorff_alpha(coders.T, level="nominal").value, 6) == 0.691358
    assert round(krippendorff_alpha(coders.T, level="interval").value, 6) == 0.810845


def test_krippendorff_alpha_accepts_none_for_missing_and_bootstraps_units():
    units = [[None if math.isnan(v) else v for v in row] for row in KRIPPENDORFF_2011.tolist()]
    estimate = krippendorff_alpha(units, level="interval", n_boot=500, seed=3)
    assert estimate.value == pytest.approx(0.849, abs=5e-4)
    assert estimate.ci_low <= estimate.value <= estimate.ci_high
    assert estimate == krippendorff_alpha(units, level="interval", n_boot=500, seed=3)


def test_krippendorff_alpha_degenerate():
    assert "at least two raters" in krippendorff_alpha([[1, NAN], [NAN, 2]]).note
    same = krippendorff_alpha([[3, 3], [3, 3, ]], level="interval")
    assert same.value is None and "0/0" in same.note
    assert krippendorff_alpha([[NAN, NAN]]).note == "no ratings"


# ----------------------------------------------------------------------------------------------------- Fleiss


def test_fleiss_kappa_by_hand():
    # ratings [[1,1,1],[1,1,2],[2,2,2]] → counts [3,0], [2,1], [0,3]; m = 3
    # P_i = (Σ n² − 3)/6 = 1, 1/3, 1 → P̄ = 7/9; p = [5/9, 4/9] → P_e = 41/81
    # κ = (63/81 − 41/81)/(40/81) = 22/40 = 0.55
    assert fleiss_kappa([[1, 1, 1], [1, 1, 2], [2, 2, 2]]).value == pytest.approx(0.55)


def test_fleiss_kappa_published_examples():
    # Wikipedia's example (10 subjects, 14 raters, 5 categories): κ = 0.210
    wikipedia = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                 [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    assert round(fleiss_kappa_from_counts(wikipedia).value, 3) == 0.210
    # Fleiss (1971) psychiatric diagnoses, 30 patients × 6 raters: κ = 0.4302445 (R irr::kappam.fleiss)
    diagnoses = [[4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5], [2, 2, 2, 4, 4, 4],
                 [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4], [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5],
                 [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4], [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5],
                 [3, 3, 3, 3, 3, 5], [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
                 [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4], [1, 4, 4, 4, 4, 5],
                 [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4], [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5]]
    estimate = fleiss_kappa(diagnoses, n_boot=500)
    assert estimate.value == pytest.approx(0.4302445, abs=1e-7)
    assert estimate.ci_low <= estimate.value <= estimate.ci_high


def test_fleiss_kappa_degenerate_and_bad_input():
    assert fleiss_kappa([[2, 2], [2, 2]]).value is None
    with pytest.raises(AgreementInputError, match="complete data"):
        fleiss_kappa([[1, 2], [1, NAN]])
    with pytest.raises(AgreementInputError, match="same number of raters"):
        fleiss_kappa_from_counts([[2, 0], [1, 2]])


# ------------------------------------------------------------------------------------------- benchmark data


@pytest.fixture(scope="module")
def summeval():
    return load_summeval()


@pytest.fixture(scope="module")
def halueval():
    return load_halueval()


def test_load_summeval(summeval):
    assert len(summeval) == 100
    first = summeval[0]
    assert first.id == "summeval_0"
    assert first.question == SUMMEVAL_INSTRUCTION
    assert first.contexts[0].startswith("Paul Merson has restarted his row with Andros Townsend")
    assert first.answer.startswith("paul merson was brought on")
    assert first.metadata["human_scores"] == [1, 1, 1]
    assert all(len(s.metadata["human_scores"]) == 3 for s in summeval)
    assert len({s.id for s in summeval}) == 100
    split = next(s for s in summeval if s.metadata["human_scores"] == [2, 1, 2])
    assert split.metadata["human_median"] == 2
    assert split.metadata["human_mean"] == pytest.approx(5 / 3)


def test_summeval_experts_agree_better_on_ordinal_than_nominal(summeval):
    matrix = summeval_expert_matrix(summeval)
    nominal = krippendorff_alpha(matrix, level="nominal").value
    ordinal = krippendorff_alpha(matrix, level="ordinal").value
    # Experts often differ by one point (e.g. 4 vs 5), which nominal alpha counts as full disagreement.
    assert 0 < nominal < ordinal <= 1


def test_load_halueval(halueval):
    assert len(halueval) == 4507
    assert len({s.id for s in halueval}) == 4507
    labels = [s.metadata["human_label"] for s in halueval]
    assert labels.count("yes") == 815 and labels.count("no") == 3692
    assert all(s.metadata["hallucinated"] == (s.metadata["human_label"] == "yes") for s in halueval)
    assert halueval[0].id == "halueval-1" and halueval[0].contexts == []
    # Two rows carry the literal ID "ID" (a header leaked into the data) and are named by line instead.
    assert [s.id for s in halueval if s.metadata["source_id"] == "ID"] == ["halueval-line2059", "halueval-line2159"]


def test_balanced_subsample(halueval):
    picked = balanced_subsample(halueval, 100, seed=1)
    assert len(picked) == 100 and len({s.id for s in picked}) == 100
    assert sum(s.metadata["human_label"] == "yes" for s in picked) == 50
    assert [s.id for s in picked] == [s.id for s in balanced_subsample(halueval, 100, seed=1)]
    assert [s.id for s in picked] != [s.id for s in balanced_subsample(halueval, 100, seed=2)]
    # shuffled, not a block of yes followed by a block of no
    assert {s.metadata["human_label"] for s in picked[:10]} == {"yes", "no"}
    with pytest.raises(ValueError, match="even"):
        balanced_subsample(halueval, 7)
    with pytest.raises(ValueError, match="only 815 'yes'"):
        balanced_subsample(halueval, 2000)


def test_loaders_report_where_the_data_is_wrong(tmp_path):
    with pytest.raises(DatasetError, match="file not found"):
        load_summeval(tmp_path / "missing.json")
    bad_scores = tmp_path / "summeval.json"
    bad_scores.write_text(json.dumps({"x": {"document": "d", "claim": "c", "annotations": [1, 6]}}))
    with pytest.raises(DatasetError, match=r"x\.annotations"):
        load_summeval(bad_scores)
    bad_label = tmp_path / "halueval.json"
    bad_label.write_text(
        json.dumps({"ID": "1", "user_query": "q", "chatgpt_response": "a", "hallucination": "no"}) + "\n"
        + json.dumps({"ID": "2", "user_query": "q", "chatgpt_response": "a", "hallucination": "maybe"}) + "\n")
    with pytest.raises(DatasetError, match=r":2 \[hallucination\]"):
        load_halueval(bad_label)
