"""Regression gates on each scorer's own scale (issue 32.5) and assert_gate with an EvaluationResult baseline
(32.4). The two runs are test_compare_gate's: a 1–5 rubric `empathy` dropping 0.75 points with a CI that includes
0, a 0–1 metric `context_recall` dropping 0.4 with a CI below 0."""
from __future__ import annotations

import pytest

from rubriceval import RunStore, assert_gate, evaluate, evaluate_gate
from tests.report.test_compare_gate import build_compare_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    return build_compare_store(RunStore(tmp_path_factory.mktemp("regression") / "runs.sqlite"))


def by_scorer(result):
    return {c.scorer: c for c in result.checks}


def test_one_number_is_a_fraction_of_each_scorers_range(store: RunStore):
    checks = by_scorer(evaluate_gate(store, "candidate", ["regression>=-0.2"], baseline="baseline"))
    # −0.75 of 4 points is −0.19 (passes −0.2); −0.4 of a 0–1 metric is −0.4 (fails): the same bar for both.
    assert checks["empathy"].passed and checks["empathy"].actual == pytest.approx(-0.1875)
    assert not checks["context_recall"].passed and checks["context_recall"].actual == pytest.approx(-0.4)
    assert "Δ -0.75 on 1–5" in checks["empathy"].reason and "Δ -0.4 on 0–1" in checks["context_recall"].reason


def test_a_named_scorer_is_checked_on_its_own_scale(store: RunStore):
    (check,) = evaluate_gate(store, "candidate", ["regression:empathy>=-0.5"], baseline="baseline").checks
    assert not check.passed and check.actual == pytest.approx(-0.75) and "on 1–5" not in check.reason


def test_significant_regression_fails_only_when_the_ci_excludes_zero(store: RunStore):
    checks = by_scorer(evaluate_gate(store, "candidate", ["significant_regression>=-0.15"], baseline="baseline"))
    empathy, recall = checks["empathy"], checks["context_recall"]
    assert empathy.passed and "not significant: the 95% CI includes 0" in empathy.reason
    assert not recall.passed and "significant: the 95% CI excludes 0" in recall.reason
    assert checks["faithfulness"].passed and "significant" not in checks["faithfulness"].reason   # improved
    (named,) = evaluate_gate(store, "candidate", ["significant_regression:empathy>=-0.5"], baseline="baseline").checks
    assert named.passed and named.name == "significant_regression:empathy>=-0.5"
    plain = evaluate_gate(store, "candidate", ["regression:empathy>=-0.5"], baseline="baseline")
    assert not plain.passed                       # the plain check fails on the same drop


def test_without_a_ci_a_drop_is_not_shown_significant(store: RunStore):
    no_boot = evaluate_gate(store, "candidate", ["significant_regression:context_recall>=-0.15"],
                            baseline="baseline").checks[0]
    assert not no_boot.passed                     # with the bootstrap: significant
    from rubriceval.report.gate_checks import gate_config

    config = gate_config(["significant_regression:context_recall>=-0.15"], baseline="baseline")
    unbooted = evaluate_gate(store, "candidate", config.model_copy(update={"n_boot": 0})).checks[0]
    assert unbooted.passed and "no confidence interval" in unbooted.reason


ROWS = [{"question": f"问题{i}", "answer": "退款三到五个工作日到账", "ground_truth": "退款三到五个工作日到账"}
        for i in range(4)]


def test_assert_gate_takes_an_evaluation_result_as_baseline(tmp_path):
    store = tmp_path / "runs.sqlite"
    baseline = evaluate(ROWS, metrics="rouge_l", store=store, progress=False, name="v1")
    worse = [{**r, "answer": "请联系客服"} for r in ROWS]
    current = evaluate(worse, metrics="rouge_l", store=store, progress=False, name="v2")
    assert_gate(baseline, ["regression:rouge_l>=0"], baseline=baseline)          # against itself: no change
    assert current.sample_ids == baseline.sample_ids     # generated ids pair the same questions across versions
    with pytest.raises(AssertionError, match=r"regression:rouge_l>=-0.1: -1 fails >= -0.1"):
        assert_gate(current, ["regression:rouge_l>=-0.1"], baseline=baseline)
    assert_gate("v2", ["rouge_l<=0.5"], store=store, baseline="v1")               # by name, with store=
    elsewhere = evaluate(ROWS, metrics="rouge_l", store=tmp_path / "other.sqlite", progress=False)
    with pytest.raises(ValueError, match="same store="):
        assert_gate(current, ["regression>=-0.1"], baseline=elsewhere)
