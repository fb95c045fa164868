"""The dry run cuts the metric calls as the run does (issue 29, item 2): the cut is chosen per judge
(standard_metrics/call_modes.py) by one key for the plan and the run's judge client — an endpoint whose model was
left unset is not the embedded judge, the embedded judge named by another model name is, and a Batch API run's
first round is planned with the cut its replay then uses. The measured cut for the embedded judge is replaced here by
one that changes the number of requests (merged extraction, one request per context), so a plan keyed otherwise than
the run shows up as a different call count."""
from __future__ import annotations

import asyncio

import pytest

from rubriceval import JudgeConfig, Sample, evaluate, plan_cost
from rubriceval.batch.rounds import start_batch_run
from rubriceval.judge.client import JudgeClient
from rubriceval.local.backends import effective_config, make_judge
from rubriceval.standard_metrics import call_modes
from rubriceval.standard_metrics.call_modes import EMBEDDED, CallModes, judge_key, judge_model_of
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_batches import batch_endpoints
from rubriceval.testing.stub_server import StubServer

METRICS = ["faithfulness", "context_recall"]
SAMPLES = [Sample(id=f"q{i}", question=f"第{i}条规定是什么？", answer=f"第{i}条规定员工每年有{i + 4}天年假。",
                  ground_truth=f"员工每年有{i + 4}天年假。",
                  contexts=[f"年假制度：员工每年有{i + 4}天年假。", "请假制度：事假每年累计不超过10天。",
                            "报销流程：发票需在30天内提交。"])
           for i in range(1, 3)]
# Not the shipped cut: one that changes the request count, so a wrongly keyed plan cannot agree by chance.
ODD_CUT = CallModes(extraction="merged", context_calls="per_context")


@pytest.fixture
def stub(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(call_modes.MEASURED, EMBEDDED, ODD_CUT)
    with StubServer() as server:
        yield server


def run_calls(stub, tmp_path, config: JudgeConfig) -> int:
    before = stub.stats.calls["chat"]
    evaluate(SAMPLES, metrics=METRICS, judge=config, store=tmp_path / "runs.sqlite", progress=False)
    return stub.stats.calls["chat"] - before


def test_the_key_is_one_rule_for_configs_and_clients():
    unnamed = JudgeConfig(base_url="http://127.0.0.1:9/v1")                 # a profile/base_url, no model given
    alias = JudgeConfig(model="qwen2.5-coder-1.5b-instruct")                # the embedded judge by another name
    named = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="qwen-plus")
    assert [judge_key(c) for c in (unnamed, alias, named, JudgeConfig())] == [None, EMBEDDED, "qwen-plus", EMBEDDED]
    for config in (unnamed, alias, named):
        assert judge_model_of(make_judge(config, announce=False)) == judge_key(effective_config(config))


def test_an_endpoint_without_a_model_is_planned_as_it_runs(stub, tmp_path):
    config = JudgeConfig(base_url=stub.base_url, cache_path=str(tmp_path / "judge.sqlite"))     # model left "local"
    plan = plan_cost(SAMPLES, [], METRICS, config)
    # the default cut: split extraction (answer, ground truth) + all contexts in one request
    assert plan.calls == run_calls(stub, tmp_path, config) == 2 * 3


def test_the_embedded_judge_named_by_alias_is_planned_as_it_runs(stub, tmp_path, monkeypatch):
    # The run's client as make_judge builds it for the embedded judge (no base_url in its config), answered by the
    # stub instead of llama.cpp.
    monkeypatch.setattr("rubriceval.run.evaluate.make_judge",
                        lambda config: JudgeClient(effective_config(config), base_url=stub.base_url))
    config = JudgeConfig(model="qwen2.5-coder-1.5b-instruct", cache_path=str(tmp_path / "judge.sqlite"))
    plan = plan_cost(SAMPLES, [], METRICS, config)
    # the embedded judge's cut (here ODD_CUT): merged extraction + one request per context
    assert plan.calls == run_calls(stub, tmp_path, config) == 2 * (1 + 3)


def batch_rounds(stub, tmp_path, metric_options=None):
    """A Batch API run of SAMPLES on the stub to its end: (planned calls, first round's requests, every request's
    digest, the collect report)."""
    config = JudgeConfig(base_url=stub.base_url, cache_path=str(tmp_path / "batch.sqlite"), timeout_s=5)
    planned = plan_cost(SAMPLES, [], METRICS, config, metric_options=metric_options).calls
    store = RunStore(tmp_path / "batch-runs.sqlite")
    batch_run, first = start_batch_run(SAMPLES, [], METRICS, store=store, judge_config=config,
                                       directory=tmp_path / "batches", metric_options=metric_options)
    endpoints = batch_endpoints(stub)
    report = None
    for _ in range(4):
        endpoints.wait_idle()
        for batch in endpoints.batches():
            endpoints.advance(batch.id)
        report = asyncio.run(batch_run.collect())
        if report.complete:
            break
    batch_run.close()
    return planned, first, [d for batch in endpoints.batches() for d in batch.digests], report


def test_a_batch_run_submits_the_planned_calls_in_two_rounds(stub, tmp_path):
    planned, first, digests, report = batch_rounds(stub, tmp_path)
    assert report is not None and report.complete
    assert report.round == 2                         # statements, then the context verdicts: nothing re-planned
    assert len(digests) == len(set(digests)) == planned == 2 * 3
    assert first.submitted == 2 * 2                  # the first round: the split extraction the replay reads


def test_a_batch_run_with_its_own_metric_options_plans_its_first_round_with_them(stub, tmp_path):
    """The run's options (here the merged extraction) cut round 1 as the replay reads it: the default cut's round 1
    had submitted requests no replay read, and a third round (8 requests for 4 planned)."""
    from rubriceval.standard_metrics.options import MetricOptions

    planned, first, digests, report = batch_rounds(stub, tmp_path, MetricOptions(extraction="merged"))
    assert report is not None and report.complete and report.round == 2
    assert len(digests) == len(set(digests)) == planned == 2 * 2
    assert first.submitted == 2                      # one merged extraction per sample
