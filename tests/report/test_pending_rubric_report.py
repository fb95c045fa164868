"""A rubric's verdicts pending review (issue 44) wherever the rubric's figures show: the page, the Markdown and the
workbook count them apart ("32 pending review, in no mean") and leave them out of the mean; the trend counts them in
its awaiting column; the automatic-acceptance section has the rubric's row and the gate's auto_accept checks read it;
a gate check on the rubric's mean says they were not counted."""
from __future__ import annotations

import pytest
from openpyxl import load_workbook

from rubriceval.report.excel import write_excel_report
from rubriceval.report.gate import evaluate_gate
from rubriceval.report.html import write_html_report
from rubriceval.report.markdown import markdown_summary
from rubriceval.store.runs import RunStore
from rubriceval.trend.series import compute_trend
from tests.trust.test_rubric_selective import N, review, week


@pytest.fixture
def store(tmp_path):
    runs = RunStore(tmp_path / "runs.sqlite")
    first = week(runs, "w1")                  # nothing accepted: every verdict pending
    review(runs, first)
    week(runs, "w2")                          # 32 agreeing audits: all accepted
    yield runs
    runs.close()


def test_the_reports_count_pending_verdicts_apart(store, tmp_path):
    text = markdown_summary(store, "w1", lang="en")
    # w1's verdicts were all audited since: settled, they count; the report of a fresh run shows them pending
    assert "pending review, in no mean" not in text
    week(store, "w3", model="other-judge")    # another judge: the reviews do not count, every verdict waits
    text = markdown_summary(store, "w3", lang="en")
    assert f"n/a ({N} pending review, in no mean)" in text
    assert "| 语气 (tone) | none | 0.0% | — | 0 | 32 | 0 | 32 | cannot accept anything yet" in text
    zh = markdown_summary(store, "w3", lang="zh")
    assert f"{N} 条待复核，不计入均值" in zh
    page = write_html_report(store, "w3", tmp_path / "w3.html", lang="en").read_text(encoding="utf-8")
    assert f"{N} pending review, in no mean" in page
    book = load_workbook(write_excel_report(store, "w3", tmp_path / "w3.xlsx", lang="en"), read_only=True)
    sheet = next(ws for ws in book.worksheets if any(c == "Pending review" for row in ws.iter_rows(
        max_row=1, values_only=True) for c in row))
    rows = list(sheet.iter_rows(values_only=True))
    column = rows[0].index("Pending review")
    assert [r[column] for r in rows if r[1] == "tone"] == [N]


def test_the_trend_and_the_gate(store):
    week(store, "w3", model="other-judge")
    trend = compute_trend(store, ["w1", "w2", "w3"])
    figures = {row.period: row for row in trend.rows if row.scorer == "tone"}
    assert (figures["w2"].n_awaiting, figures["w2"].n_scored) == (0, N)
    assert (figures["w3"].n_awaiting, figures["w3"].n_scored, figures["w3"].mean) == (N, 0, None)
    result = evaluate_gate(store, "w2", ["auto_accept:tone coverage>=0.9", "min_auto_agreement>=0.9",
                                         "mean:tone>=2"])
    assert [c.passed for c in result.checks] == [True, True, True]
    waiting = evaluate_gate(store, "w3", ["auto_accept:tone coverage>=0.1", "mean:tone>=2"])
    checks = {c.name: c for c in waiting.checks}
    assert not any(c.passed for c in checks.values())
    assert f"0/{N} decisions accepted, {N} pending review" in checks["auto_accept:tone coverage>=0.1"].reason
    assert f"({N} pending review, not counted)" in checks["mean:tone>=2"].reason


def test_the_lowest_examples_leave_pending_verdicts_out(store):
    from rubriceval.report.source import RunSource

    week(store, "w3", model="other-judge")
    for run, expected in (("w2", 5), ("w3", 0)):       # w2's verdicts are accepted, w3's all wait
        source = RunSource(store, run)
        try:
            assert len(source.lowest("tone", 5)) == expected
        finally:
            source.close()



def rejudge(runs: RunStore, of: str, name: str, model: str) -> str:
    """The samples of week `of` judged again in a run `name` by `model` (a judge the reviews do not name)."""
    import asyncio

    from rubriceval.judge.config import JudgeConfig
    from rubriceval.rubric.schema import Rubric
    from rubriceval.run.evaluate import start_run
    from rubriceval.run.runner import execute
    from tests.trust.test_rubric_selective import RUBRIC, samples, scripted

    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model=model)
    run_id, rubrics = start_run(samples(of), [Rubric.model_validate(RUBRIC)], [], store=runs, judge_config=config,
                                name=name)
    asyncio.run(execute(runs, run_id, None, rubrics, [], judge=scripted(), progress=False))
    return run_id


def test_compare_leaves_pending_verdicts_out_of_the_pairs_and_says_so(store):
    from rubriceval.report.compare import compare_runs, format_comparison

    rejudge(store, "w2", "w2-other", "other-judge")      # w2's conversations again: every verdict waits
    comparison = compare_runs(store, "w2", "w2-other")
    tone = next(d for d in comparison.deltas if d.scorer == "tone")
    assert (tone.n_paired, tone.n_only_a, tone.n_pending_a, tone.n_pending_b) == (0, 0, 0, N)
    assert comparison.new_unscored_total == 0 and not comparison.new_unscored     # waiting is not "unscored"
    assert f"pending review (in no pair): 0 in the baseline, {N} in the candidate" in format_comparison(
        comparison, "en")
    back = next(d for d in compare_runs(store, "w2-other", "w2").deltas if d.scorer == "tone")
    assert (back.n_paired, back.n_only_b, back.n_pending_a) == (0, 0, N)
