"""SummEval / HaluEval per judge mode against the loopback stub: few-shot examples per level taken only from items
not measured, checklist answers with p(yes), and checklist_fitted cross-fitted on saved answers without asking the
judge again (the declared rule's agreement kept beside it)."""
from __future__ import annotations

import pytest

from benchmarks.judge.datasets import balanced_subsample, load_halueval, load_summeval
from benchmarks.judge.judge import run_benchmark_async
from benchmarks.judge.partial import read_partial
from benchmarks.judge.results import BenchmarkItem
from rubriceval.common.errors import DatasetError


def _prompts(stub) -> list[str]:
    return [r.body["messages"][-1]["content"] for r in stub.stats.requests if r.endpoint == "chat"]


async def test_summeval_examples_per_level_come_from_unmeasured_items(stub_server, judge_config):
    stub_server.responder = lambda body: {"feedback": "ok", "score": 4}
    result = await run_benchmark_async("summeval", judge_config, n=12, n_boot=0, progress=False,
                                       few_shot="per_level")
    measured = {item.id for item in result.items}
    by_id = {s.id: s for s in load_summeval()}
    prompt = _prompts(stub_server)[0]
    shown = [s for s in by_id.values() if s.answer in prompt.split("# Material under review")[0]]
    assert shown and not {s.id for s in shown} & measured
    levels = sorted(s.metadata["human_median"] for s in shown)
    assert levels == sorted(set(levels))                          # one example per level
    assert set(levels) == {s.metadata["human_median"] for s in by_id.values() if s.id not in measured}
    assert prompt.count("Three experts scored this summary") == len(shown)
    assert result.few_shot == "per_level" and result.usage.calls == 12


async def test_halueval_examples_are_one_hallucinated_and_one_clean_answer(stub_server, judge_config):
    stub_server.responder = lambda body: {"feedback": "ok", "score": 2}
    result = await run_benchmark_async("halueval", judge_config, n=6, n_boot=0, progress=False, few_shot="per_level")
    prompt = _prompts(stub_server)[0]
    examples = prompt.split("# Material under review")[0]
    assert examples.count("## Example") == 2 and "Annotators marked hallucinated content: “" in examples
    measured = {item.id: item for item in result.items}
    assert not any(s.answer in examples for s in load_halueval() if s.id in measured)


async def test_checklist_fitted_reuses_saved_answers_and_keeps_the_rule_beside(stub_server, judge_config, tmp_path):
    checklist = judge_config.model_copy(update={"judge_mode": "checklist"})
    saved = await run_benchmark_async("summeval", checklist, n=12, out=tmp_path / "c.json", n_boot=0,
                                      progress=False)
    calls = len(stub_server.stats.requests)
    assert calls == 12 * 5 and saved.judge_mode == "checklist" and saved.usage.calls == calls
    assert all(len(item.p_yes) == 5 for item in saved.items)
    fitted = await run_benchmark_async("summeval", judge_config.model_copy(update={"judge_mode": "checklist_fitted"}),
                                       n=12, n_boot=0, progress=False, answers=tmp_path / "c.json")
    assert len(stub_server.stats.requests) == calls               # no judge call: the saved p(yes) were reused
    assert [i.rule_score for i in fitted.items] == [i.judge_score for i in saved.items]
    assert all(i.judge_score in {1.0, 2.0, 3.0, 4.0, 5.0} for i in fitted.items)
    assert fitted.rule["ordinal"].n == 12 and fitted.ordinal.n == 12
    assert "declared rule on the same items" in fitted.summary()
    with pytest.raises(DatasetError, match="not this run's items"):
        await run_benchmark_async("summeval", judge_config.model_copy(update={"judge_mode": "checklist_fitted"}),
                                  n=10, n_boot=0, progress=False, answers=tmp_path / "c.json")
    with pytest.raises(DatasetError, match="only serve"):
        await run_benchmark_async("summeval", checklist, n=12, n_boot=0, progress=False, answers=tmp_path / "c.json")


async def test_halueval_fit_uses_the_yes_no_label_as_levels_one_and_five(stub_server, judge_config, tmp_path):
    # A judge whose p(yes) on "is everything accurate?" tracks the human label: the fitted model learns it.
    measured = balanced_subsample(load_halueval(), 12, seed=0)           # the items the run measures
    hallucinated = {(s.question[:40], s.answer[:40]): s.metadata["hallucinated"] for s in measured}

    def responder(body):
        content = body["messages"][-1]["content"]
        (label,) = [h for (q, a), h in hallucinated.items() if q in content and a in content]
        return {"answer": "no" if label == ("accurate?" in content) else "yes"}

    stub_server.responder = responder
    checklist = judge_config.model_copy(update={"judge_mode": "checklist"})
    await run_benchmark_async("halueval", checklist, n=12, out=tmp_path / "h.json", n_boot=0, progress=False)
    fitted = await run_benchmark_async("halueval", judge_config.model_copy(update={"judge_mode": "checklist_fitted"}),
                                       n=12, n_boot=0, progress=False, answers=tmp_path / "h.json")
    assert fitted.binary.accuracy.value == 1.0
    assert {i.judge_score for i in fitted.items} <= {1.0, 5.0}


async def test_holistic_items_keep_the_score_distribution(stub_server, judge_config):
    stub_server.responder = lambda body: {"feedback": "ok", "score": 2}
    with_probs = judge_config.model_copy(update={"score_logprobs": True})
    result = await run_benchmark_async("halueval", with_probs, n=4, n_boot=0, progress=False)
    assert all(item.score_probs["written"] == item.judge_score == 2 for item in result.items)
    plain = await run_benchmark_async("halueval", judge_config.model_copy(update={"cache": False}), n=4, n_boot=0,
                                      progress=False)
    assert all(item.score_probs is None for item in plain.items)


async def test_items_are_kept_as_they_are_judged(stub_server, judge_config, tmp_path):
    stub_server.responder = lambda body: {"feedback": "ok", "score": 3}
    result = await run_benchmark_async("halueval", judge_config, n=4, n_boot=0, progress=False,
                                       partial=tmp_path / "p.jsonl")
    _, kept, _ = read_partial(tmp_path / "p.jsonl", BenchmarkItem)
    assert sorted(item.id for item in kept) == sorted(i.id for i in result.items)


async def test_cs_rows_are_kept_as_they_are_judged(stub_server, judge_config, tmp_path):
    from benchmarks.judge.cs_zh import CsRow, run_cs_benchmark_async

    stub_server.responder = lambda body: {"feedback": "ok", "score": 3}
    result = await run_cs_benchmark_async(judge_config, "holistic", n=6, n_boot=0, progress=False,
                                          partial=tmp_path / "p.jsonl")
    kept = sorted((row.id, row.rubric_id, row.label) for row in read_partial(tmp_path / "p.jsonl", CsRow)[1])
    assert kept == sorted((row.id, row.rubric_id, row.label) for row in result.rows)
