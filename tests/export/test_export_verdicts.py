"""Verdicts written back (issue 26.6): OTel gen_ai.evaluation.result events in OTLP/JSON logs, Langfuse score
records ready to POST, checked against the published field names; unscored verdicts never become a number."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubriceval.cli import main
from rubriceval.core.verdict import Evidence, Verdict
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.data.readers.langfuse import read_langfuse
from rubriceval.data.readers.otel import read_otel
from rubriceval.data.readers.otlp_json import attributes
from rubriceval.data.sample import Sample
from rubriceval.store.runs import RunConfig, RunStore

FIXTURES = Path(__file__).parents[1] / "fixtures" / "ingest"
OTEL_ATTRIBUTES = {"gen_ai.evaluation.name", "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label",
                   "gen_ai.evaluation.explanation", "error.type", "gen_ai.conversation.id", "event.name"}
# CreateScoreRequest (POST /api/public/scores).
LANGFUSE_FIELDS = {"id", "traceId", "sessionId", "observationId", "datasetRunId", "name", "value", "comment",
                   "metadata", "environment", "dataType", "configId"}


@pytest.fixture()
def run(tmp_path):
    """A stored run over conversations read from OTel and Langfuse exports plus one plain sample: a scored
    conversation verdict with per-turn scores, an unscored one, and a verdict on a sample with no source ids."""
    otel = [conversation_sample(c) for c in read_otel(FIXTURES / "otel_genai_spans.jsonl")]
    langfuse = [conversation_sample(c) for c in read_langfuse(FIXTURES / "langfuse_traces.jsonl")]
    plain = Sample(id="row-1", question="运费多少？", answer="满99包邮。")
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = store.create_run(RunConfig(), [*otel, *langfuse, plain],
                              [("soothing", "rubric", "v1", {"threshold": 4}), ("closing", "rubric", "v1", {})],
                              name="W47")
    store.save_verdicts(run_id, [(v, "") for v in [
        Verdict(sample_id="conv-1001", scorer="soothing", score=4, passed=True, feedback="先道歉再给物流状态。",
                evidence=[Evidence(item="judge", turn=4, score=5, detail="道歉并说明状态"),
                          Evidence(item="judge", turn=6, score=3, detail="结束语一般")]),
        Verdict(sample_id="conv-1001", scorer="closing", unscored_reason="judge timed out", unscored_kind="timeout"),
        Verdict(sample_id="sess-42", scorer="soothing", score=2, passed=False, feedback="没有安抚情绪。"),
        Verdict(sample_id="tr-0100", scorer="soothing", score=5, passed=True, feedback="ok"),
        Verdict(sample_id="row-1", scorer="soothing", score=3, passed=False, feedback="一般")]])
    store.set_status(run_id, "done")
    yield store, run_id
    store.close()


def _otel_records(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r for line in lines for rl in line["resourceLogs"] for sl in rl["scopeLogs"] for r in sl["logRecords"]]


def test_otel_events_carry_the_published_names_and_their_parent_span(run, tmp_path):
    from rubriceval.export.otel import export_otel

    store, run_id = run
    out = tmp_path / "eval.jsonl"
    tally = export_otel(store, run_id, out)
    records = _otel_records(out)
    assert tally.records == len(records) == 5 + 2          # 5 verdicts + 2 per-turn events of conv-1001
    for record in records:
        assert record["eventName"] == "gen_ai.evaluation.result"
        assert int(record["timeUnixNano"]) > 0 and record["severityNumber"] == 9
        names = {a["key"] for a in record["attributes"]}
        assert names - {n for n in names if n.startswith("rubriceval.")} <= OTEL_ATTRIBUTES
    by = [(attributes(r["attributes"]), r) for r in records]
    scored = next(r for a, r in by if a.get("rubriceval.sample.id") == "conv-1001"
                  and a["gen_ai.evaluation.name"] == "soothing" and "rubriceval.turn" not in a)
    a = attributes(scored["attributes"])
    assert a["gen_ai.evaluation.score.value"] == 4.0 and a["gen_ai.evaluation.score.label"] == "pass"
    assert a["gen_ai.evaluation.explanation"] == "先道歉再给物流状态。" and a["gen_ai.conversation.id"] == "conv-1001"
    assert scored["attributes"][[x["key"] for x in scored["attributes"]].index(
        "gen_ai.evaluation.score.value")]["value"] == {"doubleValue": 4.0}
    # Parented to the conversation's invoke_agent span.
    assert (scored["traceId"], scored["spanId"]) == ("5b8efff798038103d269b633813fc60c", "a000000000000001")
    turns = {attributes(r["attributes"])["rubriceval.turn"]: r for a, r in by if "rubriceval.turn" in a}
    assert turns[4]["spanId"] == "a000000000000004" and turns[6]["spanId"] == "b000000000000001"
    assert turns[6]["traceId"] == "0af7651916cd43dd8448eb211c80319c"
    assert attributes(turns[6]["attributes"])["gen_ai.evaluation.score.value"] == 3.0
    assert attributes(turns[6]["attributes"])["rubriceval.item"] == "judge"


def test_otel_unscored_is_an_evaluation_error_not_a_zero(run, tmp_path):
    from rubriceval.export.otel import export_otel

    store, run_id = run
    out = tmp_path / "eval.jsonl"
    tally = export_otel(store, run_id, out)
    unscored = [attributes(r["attributes"]) for r in _otel_records(out)
                if attributes(r["attributes"])["gen_ai.evaluation.name"] == "closing"]
    assert len(unscored) == 1 and tally.unscored_written == 1
    assert unscored[0]["error.type"] == "timeout" and unscored[0]["gen_ai.evaluation.explanation"] == "judge timed out"
    assert "gen_ai.evaluation.score.value" not in unscored[0] and "gen_ai.evaluation.score.label" not in unscored[0]


def test_otel_samples_without_trace_context_are_written_unparented_and_counted(run, tmp_path):
    from rubriceval.export.otel import export_otel

    store, run_id = run
    out = tmp_path / "eval.jsonl"
    tally = export_otel(store, run_id, out)
    plain = [r for r in _otel_records(out) if attributes(r["attributes"])["rubriceval.sample.id"] in
             ("row-1", "sess-42", "tr-0100")]
    assert all("traceId" not in r and "spanId" not in r for r in plain)     # Langfuse ids are not OTel ids
    assert tally.unparented == 3 and not tally.skipped
    assert attributes(plain[0]["attributes"]).get("gen_ai.conversation.id") in ("sess-42", "tr-0100", None)


def test_langfuse_scores_are_create_score_requests(run, tmp_path):
    from rubriceval.export.langfuse import export_langfuse

    store, run_id = run
    out = tmp_path / "scores.jsonl"
    tally = export_langfuse(store, run_id, out)
    scores = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for score in scores:
        assert set(score) <= LANGFUSE_FIELDS and {"id", "name", "value", "dataType"} <= set(score)
        assert ("traceId" in score) or ("sessionId" in score)
        assert score["dataType"] == "NUMERIC" and isinstance(score["value"], float)
    session = next(s for s in scores if s.get("sessionId") == "sess-42")
    assert (session["name"], session["value"], session["comment"]) == ("soothing", 2.0, "没有安抚情绪。")
    assert session["metadata"]["label"] == "fail" and session["environment"] == "production"
    assert "traceId" not in session                                 # a session-level score
    single = next(s for s in scores if s.get("traceId") == "tr-0100")
    assert single["value"] == 5.0
    otel = [s for s in scores if s.get("traceId") == "5b8efff798038103d269b633813fc60c"]
    assert {s.get("observationId") for s in otel} == {"a000000000000001", "a000000000000004"}
    turn6 = next(s for s in scores if s.get("traceId") == "0af7651916cd43dd8448eb211c80319c")
    assert (turn6["name"], turn6["value"], turn6["metadata"]["turn"], turn6["metadata"]["item"]) == \
        ("soothing.per_turn", 3.0, 6, "judge")
    # Unscored and id-less verdicts are skipped and counted, never posted as 0.
    assert all(s["name"] != "closing" for s in scores) and all(s["value"] != 0 for s in scores)
    assert tally.skipped == {"unscored (timeout): Langfuse has no unscored value": 1,
                             "no Langfuse trace/session or OTel trace id in the sample's metadata": 1}
    assert len(scores) == tally.records == 3 + 2
    # Posting twice updates: ids are stable across exports of the same run, distinct across records.
    again = tmp_path / "again.json"
    export_langfuse(store, run_id, again)
    assert [s["id"] for s in json.loads(again.read_text(encoding="utf-8"))] == [s["id"] for s in scores]
    assert len({s["id"] for s in scores}) == len(scores)


def test_export_command(run, tmp_path, capsys):
    store, run_id = run
    out = tmp_path / "scores.jsonl"
    assert main(["export", "langfuse", "W47", "--store", str(store.path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "5 Langfuse score record(s) from 5 verdict(s)" in printed and "skipped 1: unscored (timeout)" in printed
    assert main(["export", "otel", "W47", "--store", str(store.path), "--out", str(tmp_path / "e.jsonl")]) == 0
    assert "7 gen_ai.evaluation.result record(s)" in capsys.readouterr().out
    assert main(["export", "otel", "no-such-run", "--store", str(store.path), "--out", str(out)]) == 2


CHECKS_ONLY = """id: closing_check
name: 结束语（规则）
version: 1
language: zh
scope: conversation
judge_sees: []
threshold: 4
criterion: 客服最后一轮是否询问还有其他需要。
score_descriptions: {1: 没有询问。, 2: 很差。, 3: 一般。, 4: 较好。, 5: 询问了是否还有其他需要。}
items:
  - {id: closing_question, type: final_turn, phrases: ["还有其他需要|其他可以帮您"]}
combine: {rule: min}
"""


@pytest.mark.parametrize("source, fmt, parented", [
    ("tests/fixtures/ingest/otel_genai_spans.jsonl", None, True),
    ("tests/fixtures/ingest/langfuse_session.json", None, False),
    ("datasets/chatlog_week_zh.yaml", None, False),
    ("tests/fixtures/ingest/langfuse_traces.jsonl", "langfuse", False),
])
def test_run_reads_each_source_and_its_verdicts_export(tmp_path, capsys, source, fmt, parented):
    """rubriceval run takes each production source as it is (format sniffed, or --format), the run's samples keep
    their metadata, and export writes the verdicts back (checks only: no judge call)."""
    repo = Path(__file__).parents[2]
    rubric = tmp_path / "closing_check.yaml"
    rubric.write_text(CHECKS_ONLY, encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    argv = ["run", str(repo / source), "--rubrics", str(rubric), "--store", str(store), "--name", "W47", "--quiet"]
    assert main(argv + (["--format", fmt] if fmt else [])) == 0
    opened = RunStore(store)
    samples = opened.samples("W47")
    opened.close()
    assert samples and all(s.conversation is not None and s.metadata.get("started_at") for s in samples)
    assert all(s.metadata["started_at"].endswith("Z") for s in samples)
    capsys.readouterr()
    assert main(["export", "otel", "W47", "--store", str(store), "--out", str(tmp_path / "e.jsonl")]) == 0
    records = _otel_records(tmp_path / "e.jsonl")
    assert len(records) == len(samples)
    assert all(("spanId" in r) == parented for r in records)
