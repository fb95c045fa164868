"""The SummEval / HaluEval benchmark machinery, driven by the loopback stub judge (fast; no model)."""
from __future__ import annotations

import json
import re

import pytest
from scipy import stats

from benchmarks.judge.datasets import load_halueval, load_summeval
from benchmarks.judge.judge import RUBRIC_DIR, run_benchmark_async, spearman_estimate
from rubriceval import Sample, load_rubrics
from rubriceval.rubric.applies import applies

ANSWER = re.compile(r"# Material under review.*?<<<CHATBOT ANSWER>>>\n(.*?)\n<<<END CHATBOT ANSWER>>>", re.S)


def _answer(body: dict) -> str:
    return ANSWER.search(body["messages"][-1]["content"]).group(1)


def test_benchmark_rubrics_apply_only_to_their_benchmark_samples():
    rubrics = {r.id: r for r in load_rubrics(RUBRIC_DIR)}
    summeval, halueval = load_summeval()[0], load_halueval()[0]
    demo = Sample(id="d", question="How do I get a refund?", answer="Open the order page and click refund.")
    assert applies(rubrics["summeval_consistency"], summeval)
    assert applies(rubrics["halueval_hallucination"], halueval)
    assert not applies(rubrics["summeval_consistency"], halueval)
    assert not any(applies(r, demo) for r in rubrics.values())


async def test_summeval_with_a_judge_that_knows_the_experts(stub_server, judge_config, tmp_path):
    expert = {s.answer: s.metadata["human_median"] for s in load_summeval()}
    stub_server.responder = lambda body: {"feedback": "checked", "score": expert[_answer(body)]}
    result = await run_benchmark_async("summeval", judge_config, n=12, out=tmp_path / "bench.json", n_boot=100,
                                       progress=False)
    assert result.n_items == result.n_scored == 12 and len(stub_server.stats.requests) == 12
    assert result.ordinal.exact.value == 1.0 and result.ordinal.mean_difference.value == 0.0
    assert result.expert_alpha is not None and result.expert_alpha.value is not None
    assert {item.judge_score for item in result.items} == {float(item.human) for item in result.items}
    saved = json.loads((tmp_path / "bench.json").read_text(encoding="utf-8"))
    assert saved["kind"] == "summeval" and len(saved["items"]) == 12
    assert "vs expert consensus" in result.summary()


async def test_halueval_maps_high_scores_to_no_hallucination(stub_server, judge_config):
    stub_server.responder = lambda body: {"feedback": "looks fine", "score": 5}    # never sees a hallucination
    result = await run_benchmark_async("halueval", judge_config, n=8, n_boot=0, progress=False)
    assert result.binary.n == 8 and result.binary.confusion == [[4, 0], [4, 0]]    # rows: human no / yes
    assert result.binary.accuracy.value == 0.5 and result.binary.recall.value == 0.0
    assert result.judge_score_by_human == {"hallucination=no": {"5": 4}, "hallucination=yes": {"5": 4}}


async def test_unscored_items_are_counted_and_left_out(stub_server, judge_config):
    stub_server.responder = lambda body: "I cannot decide."
    result = await run_benchmark_async("halueval", judge_config.model_copy(update={"structured": "text"}), n=4,
                                       n_boot=0, progress=False)
    assert result.n_scored == 0 and result.unscored_kinds == {"parse_error": 4}
    assert result.binary.n == 0 and result.binary.n_unscored == 4


def test_spearman_estimate_matches_scipy_and_explains_undefined():
    x, y = [1, 2, 3, 4, 5, 2], [1.0, 2.3, 2.7, 4.0, 4.7, 1.3]
    estimate = spearman_estimate(x, y, n_boot=200)
    assert estimate.value == pytest.approx(stats.spearmanr(x, y).statistic)
    assert estimate.ci_low <= estimate.value <= estimate.ci_high
    constant = spearman_estimate([3, 3, 3, 3], [1, 2, 3, 4])
    assert constant.value is None and "same score" in constant.note


async def test_a_summeval_result_becomes_trust_evidence_for_that_rubric_version(stub_server, judge_config, tmp_path):
    from benchmarks.judge.judge import RUBRIC_DIR, record_benchmark
    from rubriceval import load_rubric, trust_status

    expert = {s.answer: s.metadata["human_median"] for s in load_summeval()}
    stub_server.responder = lambda body: {"feedback": "checked", "score": expert[_answer(body)]}
    result = await run_benchmark_async("summeval", judge_config, n=12, n_boot=50, progress=False)
    store = tmp_path / "runs.sqlite"
    assert record_benchmark(result, store, judge_model="stub") is not None
    rubric = load_rubric(RUBRIC_DIR / "summeval_consistency.yaml")
    status = trust_status(store, rubric, judge_model="stub")
    assert status.n == 12 and status.kappa == 1.0 and "benchmark" in status.source
    assert status.trusted is None and "at least 50" in status.reason        # 12 items: below the bar's 50
    assert trust_status(store, rubric, judge_model="another-judge").n == 0

    halu = await run_benchmark_async("halueval", judge_config, n=4, n_boot=0, progress=False)
    assert record_benchmark(halu, store, judge_model="stub") is None        # yes/no is not a 1–5 κ
