"""Cross-checks added by themselves (issue 29, item 2): a run asking for context_recall on samples with reference
contexts also computes nonllm_context_recall (no judge call), marked as added, so the report and diagnosis flag the
sample where the LLM says recall 1.0 and the reference contexts say otherwise — in the Python API and the CLI run
path, the dry run showing it with 0 calls; `--no-cross-check` / `cross_check: False` leaves it out."""
from __future__ import annotations

import json

import pytest

from rubriceval import JudgeConfig, RunStore, Sample, evaluate, markdown_summary
from rubriceval.cli import main
from rubriceval.testing.scripted_judge import ScriptedJudge, fill_schema
from rubriceval.testing.stub_replies import grounded_statements, prompt_text

RIGHT = "工号：E2051｜姓名：张伟｜部门：市场部｜分机：8311"
OTHER = "工号：E1023｜姓名：张伟｜部门：教研部｜分机：8205"      # same name, same layout: another person
QUESTION = "市场部张伟的分机号是多少？"
TRUTH = "市场部张伟的分机是8311。"


def samples(with_references: bool = True) -> list[Sample]:
    refs = [RIGHT] if with_references else []
    return [Sample(id="wrong", question=QUESTION, answer="张伟的分机是8205。", contexts=[OTHER, "报销流程：发票需在30天内提交。"],
                   ground_truth=TRUTH, reference_contexts=[RIGHT]),
            Sample(id="right", question=QUESTION, answer="市场部张伟的分机是8311。", contexts=[RIGHT],
                   ground_truth=TRUTH, reference_contexts=refs)]


def yes_judge() -> ScriptedJudge:
    """A judge like the 1.5B one on a wrong retrieval: copies the ground truth's sentences, says "attributed" to
    everything — LLM context recall 1.0 on both samples."""
    fill = fill_schema(True)
    return ScriptedJudge(lambda request: grounded_statements(fill(request), prompt_text(request.messages)))


@pytest.fixture
def judge(monkeypatch, tmp_path):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    made = yes_judge()
    monkeypatch.setattr("rubriceval.run.evaluate.make_judge", lambda config: made)
    return made


def write_jsonl(path, rows: list[Sample]) -> str:
    path.write_text("".join(json.dumps(s.model_dump(include={"id", "question", "answer", "contexts", "ground_truth",
                                                             "reference_contexts"}), ensure_ascii=False) + "\n"
                            for s in rows), encoding="utf-8")
    return str(path)


def test_the_api_adds_the_nonllm_twin_and_the_report_flags_the_sample(tmp_path, judge, capsys):
    result = evaluate(samples(), metrics="context_recall", judge=JudgeConfig(base_url="http://127.0.0.1:9/v1",
                                                                             model="scripted"),
                      store=tmp_path / "runs.sqlite", name="auto", progress=False)
    assert "cross-check added: nonllm_context_recall beside context_recall" in capsys.readouterr().err
    assert result.cross_checks == {"nonllm_context_recall": "context_recall"}
    assert result["context_recall"] == [1.0, 1.0]          # the judge saw no problem
    assert result["nonllm_context_recall"] == [0.0, 1.0]   # the reference contexts do: the other 张伟's row
    twin = [v for v in result.verdicts if v.scorer == "nonllm_context_recall"]
    assert all(v.usage.calls == 0 for v in twin)           # no judge call
    frame = result.to_pandas()
    assert set(frame[frame.cross_check_for == "context_recall"].scorer) == {"nonllm_context_recall"}
    assert len(judge.requests) == 2 * 2                     # ground truth extraction + contexts, per sample: no more
    text = markdown_summary(RunStore(tmp_path / "runs.sqlite"), "auto", lang="en")
    assert "| non-LLM cross-check of context_recall (nonllm_context_recall) | metric | 0.50 |" in text
    flag = next(line for line in text.splitlines() if "disagree strongly on 1 sample" in line)
    assert "context_recall and nonllm_context_recall" in flag and "Driving samples: wrong)" in flag


def test_turned_off_or_already_listed_nothing_is_added(tmp_path, judge):
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="scripted")
    off = evaluate(samples(), metrics="context_recall", judge=config, store=tmp_path / "runs.sqlite", progress=False,
                   metric_options={"cross_check": False})
    assert off.keys() == ["context_recall"] and off.cross_checks == {}
    listed = evaluate(samples(), metrics="nonllm_context_recall,context_recall", judge=config,
                      store=tmp_path / "runs.sqlite", progress=False)
    assert set(listed.keys()) == {"nonllm_context_recall", "context_recall"} and listed.cross_checks == {}


def test_not_added_when_some_samples_have_no_reference_contexts(tmp_path, judge, capsys):
    result = evaluate(samples(with_references=False), metrics="context_recall",
                      judge=JudgeConfig(base_url="http://127.0.0.1:9/v1", model="scripted"),
                      store=tmp_path / "runs.sqlite", progress=False)
    assert result.keys() == ["context_recall"]
    assert "no cross-check of context_recall: 1 of 2 sample(s) have no reference_contexts" in capsys.readouterr().err


def test_the_cli_run_and_dry_run_add_it_and_no_cross_check_leaves_it_out(tmp_path, judge, capsys):
    data = write_jsonl(tmp_path / "rag.jsonl", samples())
    store = str(tmp_path / "runs.sqlite")
    base = ["run", data, "--metrics", "context_recall", "--store", store, "--quiet"]
    assert main(base + ["--dry-run"]) == 0
    plan = capsys.readouterr().out
    row = next(line for line in plan.splitlines() if line.startswith("nonllm_context_recall"))
    assert row.split()[1:5] == ["metric", "2", "0", "0"]      # kind, samples, calls, cached
    assert "cross-check added: nonllm_context_recall beside context_recall" in plan
    assert main(base + ["--dry-run", "--no-cross-check"]) == 0
    assert "nonllm_context_recall" not in capsys.readouterr().out

    assert main(base + ["--name", "with", "--out", str(tmp_path / "out")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text("utf-8").splitlines()]
    assert {(r["scorer"], r["cross_check_for"]) for r in rows} == {("context_recall", ""),
                                                                  ("nonllm_context_recall", "context_recall")}
    assert main(base + ["--name", "without", "--no-cross-check"]) == 0
    runs = RunStore(store)
    assert [r["scorer"] for r in runs.scorers("with")] == ["context_recall", "nonllm_context_recall"]
    assert [r["scorer"] for r in runs.scorers("without")] == ["context_recall"]
    assert "disagree strongly on 1 sample" in markdown_summary(runs, "with", lang="en")
    assert "disagree strongly" not in markdown_summary(runs, "without", lang="en")


def test_a_batch_api_run_adds_it_too(tmp_path, monkeypatch):
    import asyncio

    from rubriceval.batch.rounds import start_batch_run
    from rubriceval.testing.stub_batches import batch_endpoints
    from rubriceval.testing.stub_server import StubServer

    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    store = RunStore(tmp_path / "batch.sqlite")
    with StubServer() as stub:
        config = JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(tmp_path / "j.sqlite"), timeout_s=5)
        batch_run, _ = start_batch_run(samples(), [], ["context_recall"], store=store, judge_config=config,
                                       directory=tmp_path / "batches")
        endpoints = batch_endpoints(stub)
        for _ in range(4):
            endpoints.wait_idle()
            for batch in endpoints.batches():
                endpoints.advance(batch.id)
            if asyncio.run(batch_run.collect()).complete:
                break
        batch_run.close()
    twin = {v.sample_id: v.score for v in store.verdicts(batch_run.run_id) if v.scorer == "nonllm_context_recall"}
    assert twin == {"wrong": 0.0, "right": 1.0}
    assert store.run_info(batch_run.run_id).status == "complete"


def test_a_threshold_on_the_added_twin_is_taken_and_refused_when_the_twin_is_not_added(tmp_path, judge):
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="scripted")
    result = evaluate(samples(), metrics="context_recall", judge=config, store=tmp_path / "runs.sqlite",
                      name="twin-threshold", progress=False, thresholds={"nonllm_context_recall": 0.5})
    twin = {v.sample_id: v.passed for v in result.verdicts if v.scorer == "nonllm_context_recall"}
    assert twin == {"wrong": False, "right": True}
    from rubriceval.common.errors import ConfigError

    with pytest.raises(ConfigError, match="cross-check did not add it"):
        evaluate(samples(with_references=False), metrics="context_recall", judge=config,
                 store=tmp_path / "runs2.sqlite", name="no-twin", progress=False,
                 thresholds={"nonllm_context_recall": 0.5})
