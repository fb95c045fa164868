"""--metrics on datasets holding conversations: agent metrics score conversations only, single-turn metrics score
single-turn samples and (when a turn has what they read) conversations per agent turn — never a conversation's first
user turn against its last agent turn; a metric that applies to no sample of the dataset is left out with a note."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rubriceval import JudgeConfig, RunConfig, RunStore, evaluate, plan_cost, read_dataset
from rubriceval.run.runner import execute, plan_units
from rubriceval.standard_metrics.scope import metric_kinds, metrics_for, unused_metrics

CONVERSATIONS = "datasets/demo_conversations_zh.jsonl"
SINGLE = "datasets/demo_cs_zh.jsonl"
OFFLINE_JUDGE = dict(base_url="http://127.0.0.1:9/v1", model="scripted", cache=False)


@pytest.fixture(scope="module")
def mixed():
    return read_dataset(CONVERSATIONS)[:4] + read_dataset(SINGLE)[:3]


def test_which_metric_scores_which_kind_of_sample() -> None:
    assert metric_kinds("tool_call_accuracy") == ("conversation",)
    assert metric_kinds("agent_goal_accuracy_without_reference") == ("conversation",)
    for name in ("faithfulness", "answer_relevancy", "context_utilization"):   # per agent turn on conversations
        assert metric_kinds(name) == ("sample", "conversation")
    for name in ("answer_correctness", "context_recall", "nonllm_context_precision", "exact_match",
                 "datacompy_score"):                                           # need a ground truth / references
        assert metric_kinds(name) == ("sample",)


def test_units_follow_the_kind_of_each_sample(mixed) -> None:
    names = ["faithfulness", "answer_correctness", "tool_call_f1"]
    units = {(s.id, scorer) for s, scorer, kind in plan_units(mixed, [], names) if kind == "metric"}
    for sample in mixed:
        expected = (["faithfulness", "tool_call_f1"] if sample.conversation is not None
                    else ["faithfulness", "answer_correctness"])
        assert metrics_for(sample, names) == expected
        assert {scorer for sid, scorer in units if sid == sample.id} == set(expected)


def test_a_mixed_run_scores_each_sample_with_its_own_metrics(mixed, tmp_path: Path) -> None:
    names = ["tool_call_f1", "exact_match"]
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = store.create_run(RunConfig(), mixed, [(m, "metric", "1", {"name": m}) for m in names])
    totals = asyncio.run(execute(store, run_id, mixed, [], names, judge=None, progress=False))
    verdicts = {(v.sample_id, v.scorer): v for v in store.verdicts(run_id)}
    conversations = {s.id for s in mixed if s.conversation is not None}
    assert totals.units_done == len(mixed) == len(verdicts)
    assert {sid for sid, scorer in verdicts if scorer == "tool_call_f1"} == conversations
    assert {sid for sid, scorer in verdicts if scorer == "exact_match"} == {s.id for s in mixed} - conversations
    # The verified refund makes the one expected tool call.
    assert verdicts[("refund-verified", "tool_call_f1")].score == 1.0


def test_dry_run_counts_only_the_samples_a_metric_scores(mixed) -> None:
    names, config = ["faithfulness", "answer_correctness"], JudgeConfig(**OFFLINE_JUDGE)
    plan = {s.scorer: s for s in plan_cost(mixed, [], names, config).scorers}
    single = [s for s in mixed if s.conversation is None]
    assert plan["answer_correctness"].samples == len(single) and plan["faithfulness"].samples == len(mixed)
    # The conversations add faithfulness calls (per agent turn with contexts) and no answer_correctness call.
    alone = {s.scorer: s for s in plan_cost(single, [], names, config).scorers}
    assert plan["answer_correctness"].calls == alone["answer_correctness"].calls > 0
    assert plan["faithfulness"].calls > alone["faithfulness"].calls


def test_a_metric_for_a_kind_the_dataset_lacks_is_left_out_with_a_note(tmp_path: Path, capsys) -> None:
    single = read_dataset(SINGLE)[:2]
    assert unused_metrics(single, ["tool_call_f1", "exact_match"]) == {
        "tool_call_f1": "scores whole conversations and the dataset has none"}
    result = evaluate(single, metrics="tool_call_f1,exact_match", judge=OFFLINE_JUDGE, store=tmp_path / "a.sqlite",
                      progress=False)
    assert "left out: tool_call_f1 (scores whole conversations and the dataset has none)" in capsys.readouterr().err
    assert {v.scorer for v in result.verdicts} == {"exact_match"} and len(result.verdicts) == 2
    assert [s["scorer"] for s in RunStore(tmp_path / "a.sqlite").scorers(result.run_id)] == ["exact_match"]

    conversations = read_dataset(CONVERSATIONS)[:2]
    result = evaluate(conversations, metrics="exact_match,tool_call_f1", judge=OFFLINE_JUDGE,
                      store=tmp_path / "b.sqlite", progress=False)
    err = capsys.readouterr().err
    assert "left out: exact_match (needs fields conversation turns do not have" in err
    assert {v.scorer for v in result.verdicts} == {"tool_call_f1"} and len(result.verdicts) == 2
