"""The weekly QA report (issue 40.4, acceptance): on datasets/qa_exports/ (two weeks, 4 agents, 2 skill groups) with
the example card, one table gives per agent (id and name), per skill group and for everyone: conversations, reviewed
share, the official mean total with its CI, the change against the week before and whether it is beyond noise, the
fatal COUNT and the top deductions — with Chinese headers for a Chinese card, in the Markdown, the HTML page and a
workbook sheet. Totals are the official ones (a reviewer's added fatal item counts) and agree with `trend`."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook

from rubriceval.audit.scorecard_official import official_pairs
from rubriceval.audit.scorecard_reviews import ReviewStore
from rubriceval.cli import main
from rubriceval.data.segment_spec import Grouping, SegmentField, TimeSettings
from rubriceval.report.weekly import weekly_report
from rubriceval.store.runs import RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.trend.series import compute_trend

ROOT = Path(__file__).resolve().parents[2]
EXPORTS = ROOT / "datasets" / "qa_exports"
CARD = ROOT / "benchmarks" / "pipeline" / "qa_scorecards" / "weekly_qa_zh.yaml"
SHANGHAI = TimeSettings(zone="Asia/Shanghai")


@pytest.fixture
def store(tmp_path) -> str:
    path = str(tmp_path / "runs.sqlite")
    for week in ("W46", "W47"):
        assert main(["run", str(EXPORTS / f"2026-{week}.jsonl"), "--scorecards", str(CARD), "--store", path,
                     "--name", week, "--quiet"]) == 0
    return path


def test_one_table_per_agent_and_skill_group_with_fatal_counts_and_week_over_week_change(store):
    report = weekly_report(RunStore(store), settings=SHANGHAI)
    assert (report.period, report.previous, report.language) == ("2026-W47", "2026-W46", "zh")
    li_lei = report.row("agent", "A-02")
    assert li_lei.name == "李雷" and li_lei.conversations == li_lei.previous_conversations == 5
    assert (li_lei.fatal, li_lei.previous_fatal) == (3, 0)              # a count, not a rate
    assert li_lei.mean == 40.0 and li_lei.previous_mean == 100.0 and li_lei.change == -60.0
    assert [d.item for d in li_lei.top_deductions] == ["eta", "free_shipping"]
    assert li_lei.top_deductions[0].count == 3 and li_lei.top_deductions[0].points == -15
    zhang = report.row("agent", "A-07")                                 # every W47 reply of hers lacks an apology
    assert zhang.mean == 90.0 and zhang.change == -10.0 and zhang.beyond_noise is True and zhang.p_value < 0.05
    assert zhang.top_deductions[0].name == "未向久等的用户致歉" and zhang.top_deductions[0].count == 5
    after_sales = report.row("skill_group", "售后组")
    assert (after_sales.conversations, after_sales.fatal, after_sales.previous_fatal) == (10, 3, 0)
    everyone = report.row("all")
    assert everyone.conversations == 20 and everyone.fatal == 3
    assert [r.kind for r in report.rows] == ["agent"] * 4 + ["skill_group"] * 2 + ["all"]
    # the same numbers as `rubriceval trend --period week --by agent_id` (one statistic machinery)
    trend = compute_trend(RunStore(store), period="week", by=Grouping(fields=[SegmentField(name="agent_id")]),
                          scorers=["weekly_qa_zh"], settings=SHANGHAI)
    point = next(r for r in trend.rows if r.period == "2026-W47" and r.segment == {"agent_id": "A-07"})
    assert (point.mean, point.mean_low, point.mean_high) == (zhang.mean, zhang.mean_low, zhang.mean_high)
    assert (point.change.delta, point.change.p_value) == (zhang.change, zhang.p_value)


def test_a_reviewers_added_fatal_item_is_in_the_weekly_counts_and_totals(store):
    runs = RunStore(store)
    verdict = next(v for v in ScorecardStore(runs).verdicts("W47") if v.sample_id == "w47-00")      # A-01, W47
    ReviewStore(runs).add("W47", verdict, "free_shipping", "missed", reviewer="ann")
    report = weekly_report(runs, settings=SHANGHAI)
    wang = report.row("agent", "A-01")
    assert wang.fatal == 1 and wang.reviewed == 1 and wang.reviewed_share == 0.2
    official = {(v.sample_id, v.scorecard): v.totals.total for v, _ in official_pairs(runs, "W47")}
    mine = [official[(v.sample_id, "weekly_qa_zh")] for v in ScorecardStore(runs).verdicts("W47")
            if v.sample_id in {"w47-00", "w47-04", "w47-08", "w47-12", "w47-16"}]
    assert official[("w47-00", "weekly_qa_zh")] == 0 and wang.mean == sum(mine) / len(mine) == 80.0


def test_the_report_shows_it_in_chinese_in_markdown_html_and_the_workbook(store, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["report", "W47", "--store", store, "--tz", "Asia/Shanghai", "--out", str(out)]) == 0
    markdown = (out / "W47.md").read_text(encoding="utf-8")
    assert "## 质检周报：售后质检评分表（周报示例）（2026-W47，对比 2026-W46）" in markdown
    header = next(line for line in markdown.splitlines() if line.startswith("| 分组类型"))
    for column in ("工号 / 技能组", "姓名", "会话数", "复核占比", "官方均分", "95% 区间", "较上期变化", "超出噪声",
                   "一票否决数", "上期一票否决数", "主要扣分项"):
        assert column in header
    assert "| 客服 | A-02 | 李雷 | 5 | 5 | 0.0% | 40.0 |" in markdown
    assert "| 技能组 | 售后组 |  | 10 | 10 |" in markdown
    page = (out / "W47.html").read_text(encoding="utf-8")
    assert '<section id="weekly">' in page and "李雷" in page and "一票否决数" in page
    book = load_workbook(out / "W47.xlsx", read_only=True)
    rows = list(book["weekly"].iter_rows(values_only=True))
    assert rows[0][0] == "分组类型" and "一票否决数" in rows[0]
    li_lei = next(r for r in rows if r[1] == "A-02")
    fatal_column = rows[0].index("一票否决数")
    assert li_lei[2] == "李雷" and li_lei[fatal_column] == 3 and li_lei[rows[0].index("较上期变化")] == -60.0
    with zipfile.ZipFile(out / "W47.xlsx") as z:       # numbers stay numbers, no formula anywhere
        assert not any(b"<f>" in z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/"))


def test_english_headers_when_asked_and_a_named_period(store):
    report = weekly_report(RunStore(store), settings=SHANGHAI, period="2026-W46", lang="en")
    assert report.previous is None and report.row("agent", "A-02").change is None
    from rubriceval.report.weekly_views import headers, markdown

    assert "Fatal count" in headers("en") and "Weekly QA" in markdown([report], "en")[0]
