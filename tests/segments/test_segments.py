"""Segments (`--by`): time buckets in a configured zone, per-segment tables of a run (metadata fields, tags, the
'(none)' group, crossed fields), the report's Excel sheet / Markdown / HTML sections, gate checks per segment, and
the errors (a field no sample has, a timestamp that does not parse, an unknown zone)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import openpyxl
import pytest

from rubriceval import RunStore, evaluate
from rubriceval.cli import main
from rubriceval.data.segment_spec import SegmentError, TimeSettings, parse_by
from rubriceval.data.segment_values import SampleKeys, bucket_label, parse_instant, segment_keys
from rubriceval.report.gate import evaluate_gate
from rubriceval.segments.table import segment_tables
from tests.qa_week_data import APOLOGY, conversation, write_jsonl

MONDAY = datetime(2026, 11, 9, 2, tzinfo=timezone.utc)     # ISO week 2026-W46 starts on Monday 9 November


def test_week_day_and_month_are_counted_in_the_configured_zone():
    late_sunday = parse_instant("2026-11-15T17:30:00Z")          # Monday 01:30 in Shanghai
    assert bucket_label(late_sunday, "day", "UTC") == "2026-11-15"
    assert bucket_label(late_sunday, "week", "UTC") == "2026-W46"
    assert bucket_label(late_sunday, "day", "Asia/Shanghai") == "2026-11-16"
    assert bucket_label(late_sunday, "week", "Asia/Shanghai") == "2026-W47"
    assert bucket_label(parse_instant("2026-11-30T20:00:00Z"), "month", "Asia/Shanghai") == "2026-12"
    assert bucket_label(parse_instant("2026-11-30T20:00:00Z"), "month", "UTC") == "2026-11"


def test_timestamps_are_utc_instants_and_naive_ones_take_the_naive_zone():
    assert parse_instant("2026-11-16 09:30:00", "Asia/Shanghai") == datetime(2026, 11, 16, 1, 30, tzinfo=timezone.utc)
    assert parse_instant("2026-11-16 09:30:00") == datetime(2026, 11, 16, 9, 30, tzinfo=timezone.utc)
    assert parse_instant("2026-11-16T09:30:00+08:00", "Europe/Berlin") == datetime(2026, 11, 16, 1, 30,
                                                                                 tzinfo=timezone.utc)
    assert parse_instant(1_763_256_600) == parse_instant(1_763_256_600_000)          # seconds or milliseconds
    keys = SampleKeys("c1", {"started_at": "2026-11-16 00:30:00"}, [], "")
    week = parse_by("week")[0]
    assert segment_keys(keys, week, TimeSettings(zone="UTC", naive_zone="Asia/Shanghai")) == [("2026-W46",)]
    assert segment_keys(keys, week, TimeSettings()) == [("2026-W47",)]


def test_a_timestamp_that_does_not_parse_names_the_sample_and_field():
    keys = SampleKeys("c7", {"started_at": "next tuesday"}, [], "")
    with pytest.raises(SegmentError, match=r"\[sample c7: metadata.started_at\].*'next tuesday' is not a date-time"):
        segment_keys(keys, parse_by("week")[0], TimeSettings())
    with pytest.raises(SegmentError, match=r"\[tz\].*unknown time zone 'Mars/Olympus'"):
        TimeSettings(zone="Mars/Olympus")


def test_by_spec_separates_tables_with_commas_and_crosses_fields_with_plus():
    groupings = parse_by("agent_id,metadata.skill_group+week,tags,month:ended_at")
    assert [g.label for g in groupings] == ["agent_id", "skill_group+week", "tag", "month:ended_at"]
    with pytest.raises(SegmentError, match=r"\[by\]"):
        parse_by("agent_id,,+")


def _records() -> list[dict]:
    """12 conversations: agent a1 apologises in all 4, a2 in 2 of 4, a3 in none of 3; one has no agent id."""
    plan = [("a1", True)] * 4 + [("a2", True), ("a2", True), ("a2", False), ("a2", False)] + [("a3", False)] * 3
    records = [conversation(f"c{i}", agent=agent, group="售后" if i % 2 else "售前",
                            start=MONDAY + timedelta(days=i), good=good, tags=["vip"] if i < 2 else [])
               for i, (agent, good) in enumerate(plan)]
    records[0]["tags"] = ["vip", "退款"]
    orphan = conversation("c99", agent="", group="售后", start=MONDAY, good=True)
    del orphan["metadata"]["agent_id"]
    return records + [orphan]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("segments")
    data = write_jsonl(folder / "week.jsonl", _records())
    result = evaluate(str(data), rubrics=[APOLOGY], store=folder / "runs.sqlite", progress=False, name="w46")
    return folder / "runs.sqlite", result.run_id


def test_segment_table_per_agent_counts_means_and_pass_rates(run):
    path, run_id = run
    [table] = segment_tables(RunStore(path), run_id, parse_by("agent_id"))
    rows = {r.values["agent_id"]: r for r in table.rows}
    assert set(rows) == {"a1", "a2", "a3", "(none)"}                      # the sample without agent id: counted
    assert (rows["a1"].n_samples, rows["a1"].mean, rows["a1"].pass_rate) == (4, 5.0, 1.0)
    assert (rows["a2"].n_samples, rows["a2"].mean, rows["a2"].pass_rate) == (4, 3.0, 0.5)
    assert (rows["a3"].n_samples, rows["a3"].mean, rows["a3"].pass_rate) == (3, 1.0, 0.0)
    assert rows["(none)"].n_samples == 1
    assert sum(r.n_unscored for r in table.rows) == 0
    assert rows["a1"].scorecard_total is None and rows["a1"].fatal_rate is None     # no scorecard verdicts


def test_tags_expand_and_crossed_fields_split_by_week(run):
    path, run_id = run
    tags, crossed = segment_tables(RunStore(path), run_id, parse_by("tag,agent_id+week"))
    tag_rows = {r.values["tag"]: r.n_samples for r in tags.rows}
    assert tag_rows == {"vip": 2, "退款": 1, "(none)": 10}
    cells = {(r.values["agent_id"], r.values["week"]): r.n_samples for r in crossed.rows}
    # c0..c6 start in W46 (9–15 November), c7..c10 in W47
    assert cells[("a1", "2026-W46")] == 4 and cells[("a2", "2026-W46")] == 3 and cells[("a2", "2026-W47")] == 1
    assert cells[("a3", "2026-W47")] == 3


def test_a_field_no_sample_has_is_an_error_naming_it(run):
    path, run_id = run
    with pytest.raises(SegmentError, match=r"\[agent\]: no sample of run 'w46' has the field 'agent'"):
        segment_tables(RunStore(path), run_id, parse_by("agent"))
    assert main(["report", run_id, "--store", str(path), "--by", "skill", "--out", str(path.parent / "x")]) == 2


def test_report_by_writes_a_sheet_per_grouping_and_markdown_and_html_sections(run, capsys):
    path, run_id = run
    out = path.parent / "reports"
    assert main(["report", run_id, "--store", str(path), "--by", "agent_id,skill_group+week", "--out", str(out),
                 "--lang", "en"]) == 0
    md = (out / "w46.md").read_text(encoding="utf-8")
    assert "## Results by agent_id" in md and "| a3 | 致歉 | 3 | 3 | 0 | 1.00 | 0.0% |" in md
    book = openpyxl.load_workbook(out / "w46.xlsx", read_only=True)
    assert {"by_agent_id", "by_skill_group+week"} <= set(book.sheetnames)
    rows = list(book["by_agent_id"].iter_rows(values_only=True))
    assert rows[0][:7] == ("agent_id", "Scorer", "Samples", "Scored", "Unscored", "Mean", "Pass rate")
    assert ("a2", "致歉", 4, 4, 0, 3, 0.5) in [r[:7] for r in rows[1:]]
    html = (out / "w46.html").read_text(encoding="utf-8")
    assert 'id="segments"' in html and "Results by skill_group+week" in html


def test_segment_values_are_escaped_in_html(tmp_path):
    record = conversation("x1", agent="<script>alert(1)</script>", group="g", start=MONDAY, good=True)
    data = write_jsonl(tmp_path / "x.jsonl", [record])
    result = evaluate(str(data), rubrics=[APOLOGY], store=tmp_path / "r.sqlite", progress=False, name="x")
    assert main(["report", result.run_id, "--store", str(tmp_path / "r.sqlite"), "--by", "agent_id", "--out",
                 str(tmp_path / "o")]) == 0
    html = (tmp_path / "o" / "x.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_gate_per_segment_names_the_failing_segments(run):
    path, run_id = run
    result = evaluate_gate(RunStore(path), run_id, ["apology mean>=3 by agent_id", "apology pass_rate>=0.5 by skill_group",
                                                    "apology>=1"])
    by_name = {c.name: c for c in result.checks}
    failed = by_name["apology mean>=3 by agent_id"]
    assert not failed.passed and "in 1 of 4 segments: a3 (1, n=3)" in failed.reason
    assert "a2" not in failed.reason                              # a2's mean is exactly 3: passes >= 3
    assert by_name["apology>=1"].passed
    assert main(["gate", run_id, "--store", str(path), "--check", "apology mean>=3 by agent_id"]) == 1
    assert main(["gate", run_id, "--store", str(path), "--check", "apology mean>=1 by agent_id"]) == 0
    assert main(["gate", run_id, "--store", str(path), "--check", "apology mean>=1 by nobody"]) == 2


def test_turn_timestamps_are_the_start_time_when_metadata_has_none_on_both_engines(tmp_path, store_target):
    records = _records()[:8]
    for record in records:
        del record["metadata"]["started_at"]                     # first turn's timestamp instead
    data = write_jsonl(tmp_path / "w.jsonl", records)
    result = evaluate(str(data), rubrics=[APOLOGY], store=store_target, progress=False, name="turns")
    [table] = segment_tables(RunStore(store_target), result.run_id, parse_by("agent_id+week"))
    assert {(r.values["agent_id"], r.values["week"]): r.n_samples for r in table.rows} == {
        ("a1", "2026-W46"): 4, ("a2", "2026-W46"): 3, ("a2", "2026-W47"): 1}


def test_scorecard_totals_and_fatal_rates_per_segment_and_the_gate_on_them(tmp_path):
    from rubriceval.scorecard.verdict import ScorecardVerdict, Totals
    from rubriceval.store.scorecards import ScorecardStore

    data = write_jsonl(tmp_path / "w.jsonl", _records()[:8])
    result = evaluate(str(data), rubrics=[APOLOGY], store=tmp_path / "r.sqlite", progress=False, name="qa")
    store = RunStore(tmp_path / "r.sqlite")
    cards = ScorecardStore(store)
    store.conn.execute("INSERT INTO scorecard_defs VALUES (?,?,?,?)", (result.run_id, "qa", "v1", '{"pass_total": 80}'))
    # a1 (c0..c3): 100, 90, 80, 0 with a fatal hit; a2 (c4..c7): 70 each
    totals = [100, 90, 80, 0, 70, 70, 70, 70]
    cards.save(result.run_id, [ScorecardVerdict(sample_id=f"c{i}", scorecard="qa", version="v1", outcomes=[],
                                                totals=Totals(base=100, total=total, fatal=["辱骂客户"] if i == 3 else []))
                               for i, total in enumerate(totals)])
    [table] = segment_tables(store, result.run_id, parse_by("agent_id"))
    qa = {r.values["agent_id"]: r for r in table.for_scorer("qa")}
    assert (qa["a1"].scorecard_total, qa["a1"].fatal_rate, qa["a1"].pass_rate) == (67.5, 0.25, 0.75)
    assert (qa["a2"].scorecard_total, qa["a2"].fatal_rate, qa["a2"].pass_rate) == (70.0, 0.0, 0.0)
    assert {r.scorer for r in table.rows} == {"apology", "qa"}
    gate = evaluate_gate(store, result.run_id, ["qa total mean>=68 by agent_id"]).checks[0]
    assert not gate.passed and "a1 (67.5, n=4)" in gate.reason and "a2" not in gate.reason
