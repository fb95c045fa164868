"""Reports, compare, gate and the Python API read official scores (audit/official.py): a human decision replaces the
judge's score in every figure, each figure says how many rows are human-decided with the machine's figure beside it,
and --machine-only gives the judge's view. SQLite and PostgreSQL."""
from __future__ import annotations

import pytest

from rubriceval.audit.appeals import Appeals
from rubriceval.audit.official import official_scores
from rubriceval.audit.team import TeamStore
from rubriceval.cli import main
from rubriceval.core.verdict import Verdict
from rubriceval.report.compare import compare_runs
from rubriceval.report.gate import evaluate_gate
from rubriceval.report.official_figures import official_note
from rubriceval.report.run_data import load_run
from rubriceval.store.runs import RunStore
from tests.helpers.appeal_store import CHECK, RUBRIC, build_appeal_store


def _override(team: TeamStore, run_id: str, sample: str, score: int) -> None:
    assert team.audit.save_response(run_id, sample, RUBRIC, expert="qa_zhang", score=score, reason="复核",
                                    expected=team.audit.versions(run_id, sample, RUBRIC)).ok


@pytest.fixture()
def decided(store_target):
    """Machine scores of soothing: c000 2 (capped), c004 2 (capped), c008 unscored; others 4 or 5. A person
    overrides c004 to 5 and scores the unscored c008 as 3; agent_wang's appeal on c000's deduction is accepted."""
    run_id = build_appeal_store(store_target, n=9)
    store = RunStore(store_target)
    store.delete_verdicts(run_id, [("c008", RUBRIC)])
    store.save_verdicts(run_id, [(Verdict.unscored("c008", RUBRIC, "timeout", "slow judge"), "")])
    with TeamStore(store_target) as team:
        _override(team, run_id, "c004", 5)
        _override(team, run_id, "c008", 3)
        appeals = Appeals(team)
        a = appeals.submit(run_id, "c000", RUBRIC, agent="agent_wang", role="agent", reason="知识库允许包邮",
                           item=CHECK)
        assert appeals.decide(a.appeal_id, reviewer="qa_zhao", role="expert", outcome="accepted", reason="属实",
                              expected_version=a.version).ok
    yield store, run_id
    store.close()


def test_summary_is_official_with_the_machine_beside(decided):
    store, run_id = decided
    machine = [2, 4, 4, 5, 2, 4, 5, 4]                   # c000…c007 as judged; c008 unscored
    official = [5, 4, 4, 5, 5, 4, 5, 4, 3]               # c000 appeal (5), c004 override (5), c008 scored (3)
    s = load_run(store, run_id).summary.get(RUBRIC)
    assert s.mean == pytest.approx(sum(official) / 9) and s.n_scored == 9 and s.n_unscored == 0
    assert s.n_human == 3
    assert s.machine_mean == pytest.approx(sum(machine) / 8) and s.machine_n_scored == 8
    assert s.pass_rate == pytest.approx(8 / 9) and s.machine_pass_rate == pytest.approx(6 / 8)
    assert official_note(s) == f"3 human-decided; machine {sum(machine) / 8:.2f}"
    assert official_note(s, "zh") == f"3 行人工裁定；机器分 {sum(machine) / 8:.2f}"
    data = load_run(store, run_id)
    assert data.summary.n_human_decided == 3 and data.summary.n_unscored == 0
    assert data.summary.machine_business_score == pytest.approx(sum(machine) / 8)
    assert data.summary.get("rouge_l").n_human == 0
    judge = load_run(store, run_id, machine_only=True).summary
    assert judge.get(RUBRIC).mean == pytest.approx(sum(machine) / 8) and judge.get(RUBRIC).n_unscored == 1
    assert judge.machine_only and judge.n_human_decided == 0


def test_gate_and_compare_read_official_scores(decided):
    store, run_id = decided
    assert evaluate_gate(store, run_id, ["soothing mean>=4.2"]).passed
    assert not evaluate_gate(store, run_id, ["soothing mean>=4.2"], machine_only=True).passed
    rerun = build_appeal_store(store.path, n=9, name="qa-week-rerun")      # the same machine scores, no decisions
    store.delete_verdicts(rerun, [("c008", RUBRIC)])
    store.save_verdicts(rerun, [(Verdict.unscored("c008", RUBRIC, "timeout", "slow judge"), "")])
    delta = next(d for d in compare_runs(store, rerun, run_id, n_boot=50).deltas if d.scorer == RUBRIC)
    assert delta.n_paired == 8 and delta.delta == pytest.approx(6 / 8) and delta.n_only_b == 1
    # seesaw samples are found on official scores too (tests/report/test_official_segments_trend.py): no caveat note
    assert not any("judge's scores" in n for n in compare_runs(store, rerun, run_id, n_boot=50).notes)
    judge = next(d for d in compare_runs(store, rerun, run_id, n_boot=50, machine_only=True).deltas
                 if d.scorer == RUBRIC)
    assert judge.delta == 0 and judge.n_only_b == 0


def test_cli_machine_only_and_python_api(decided, tmp_path, capsys):
    store, run_id = decided
    args = ["gate", run_id, "--store", str(store.path), "--check", "soothing mean>=4.2"]
    assert main(args) == 0
    assert main(args + ["--machine-only"]) == 1
    frame = official_scores(store.path, run_id)
    row = frame[(frame.sample_id == "c000") & (frame.scorer == RUBRIC)].iloc[0]
    assert (row.machine_score, row.official_score, row.decided_by) == (2.0, 5.0, "appeal")
    assert int(frame.human_decided.sum()) == 3


def test_report_outputs_say_human_decided(decided, tmp_path):
    from openpyxl import load_workbook

    from rubriceval.report.excel import write_workbook
    from rubriceval.report.html import render_html_report
    from rubriceval.report.markdown import render_markdown

    store, run_id = decided
    data = load_run(store, run_id)
    md = render_markdown(data, lang="en", findings=[])
    assert "3 human-decided; machine 3.75" in md and "3 row(s) human-decided" in md
    assert "3 行人工裁定；机器分 3.75" in render_markdown(data, lang="zh", findings=[])
    html = render_html_report(data, lang="en", findings=[])
    assert 'class="note human-decided"> 3 human-decided; machine 3.75' in html and 'id="official-headline"' in html
    judge = load_run(store, run_id, machine_only=True)
    assert "Machine only" in render_markdown(judge, lang="en", findings=[])
    assert "human-decided" not in render_html_report(judge, lang="en", findings=[])
    book = load_workbook(write_workbook(data, tmp_path / "r.xlsx", lang="en", findings=[]))
    summary = [[c.value for c in row] for row in next(ws for ws in book.worksheets if ws.max_row < 10).iter_rows()]
    head = summary[0]
    soothing = next(r for r in summary if r[1] == RUBRIC)
    assert soothing[head.index("human-decided")] == 3 and soothing[head.index("Machine mean")] == 3.75
    samples = next(ws for ws in book.worksheets if ws.max_row > 10)
    rows = [[c.value for c in row] for row in samples.iter_rows()]
    head = rows[0]
    c000 = next(r for r in rows if r[0] == "c000" and r[head.index("Machine score")] is not None)
    assert c000[3] == 5 and c000[head.index("Machine score")] == 2 and "accepted appeal · qa_zhao" in c000[-1]


def test_lowest_examples_are_ordered_by_official_score_and_say_who_decided(decided):
    from rubriceval.report.html import worst_examples

    store, run_id = decided
    shown = worst_examples(load_run(store, run_id), RUBRIC)
    assert [x["sample_id"] for x in shown] == ["c008", "c001", "c002"]       # c000, c004 decided up to 5
    assert shown[0]["score"] == 3 and shown[0]["official"]["source"] == "override"
    assert shown[0]["official"]["machine_score"] is None and shown[1]["official"] is None
    judge = worst_examples(load_run(store, run_id, machine_only=True), RUBRIC)
    assert [x["sample_id"] for x in judge] == ["c000", "c004", "c001"]


def test_segments_per_agent_read_official_scores(decided):
    from rubriceval.data.segment_spec import parse_by
    from rubriceval.segments.table import segment_tables

    store, run_id = decided
    [table] = segment_tables(store, run_id, parse_by("agent_id"))
    by_agent = {r.values["agent_id"]: r for r in table.for_scorer(RUBRIC)}
    # agent_wang: c000 5 (appeal), c002 4, c004 5 (override), c006 5, c008 3 (scored by a person)
    assert by_agent["agent_wang"].mean == pytest.approx(22 / 5) and by_agent["agent_wang"].n_unscored == 0
    assert by_agent["agent_li"].mean == pytest.approx((4 + 5 + 4 + 4) / 4)


def test_verdict_exports_read_official_scores(decided):
    from rubriceval.export.results import judged_items, label

    store, run_id = decided
    _, items = judged_items(store, run_id)          # the one read path of the OTel and Langfuse exports
    soothing = {i.verdict.sample_id: i.verdict for i in items if i.verdict.scorer == RUBRIC}
    assert soothing["c000"].score == 5.0 and label(soothing["c000"]) == "pass"
    assert soothing["c000"].details["official"]["source"] == "appeal"
    assert soothing["c008"].score == 3.0 and soothing["c001"].score == 4.0   # c008: unscored, scored by a person


def test_python_api_result_is_official(decided):
    from rubriceval.run.evaluate import EvaluationResult

    store, run_id = decided
    result = EvaluationResult(run_id=run_id, run_name="qa-week", store_path=str(store.path), totals={}, verdicts=[])
    s = result.summary().get(RUBRIC)
    assert s.n_human == 3 and s.mean == pytest.approx(39 / 9) and s.machine_mean == pytest.approx(3.75)
    assert result.summary(machine_only=True).get(RUBRIC).mean == pytest.approx(3.75)
    frame = result.official_scores()
    assert int(frame.human_decided.sum()) == 3
