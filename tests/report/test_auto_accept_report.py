"""The report's automatic-acceptance section and its gate (issue 44): per item and overall the accepted region,
coverage, guaranteed agreement, reviewed decisions, pending and undecided counts, why an item accepts nothing, the
trend across runs with an item that dropped out — in the page, the Markdown and both languages; absent from a run whose
cards state no target; the gate reads coverage and agreement per card and over every card."""
from __future__ import annotations

import re

import pytest

from rubriceval.report.compose import RunReport
from rubriceval.report.gate import evaluate_gate
from rubriceval.report.gate_checks import GateConfig, GateUsageError, parse_check
from rubriceval.report.sections import SECTIONS
from rubriceval.store.runs import RunStore
from rubriceval.trust.selective_reviews import run_acceptance
from tests.trust.test_selective_acceptance import CARD, review_week, week


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    runs = RunStore(tmp_path_factory.mktemp("aa") / "runs.sqlite")
    first = week(runs, "w1")
    review_week(runs, first, resolve_right=True)
    second = week(runs, "w2")
    review_week(runs, second, resolve_right=False)
    week(runs, "w3")
    week(runs, "plain", card={**CARD, "id": "plain", "auto_accept": None})
    yield runs
    runs.close()


def test_the_section_says_coverage_guarantee_and_pending_per_item(store):
    report = RunReport.read(store, "w2", lang="en")
    section = report.inputs.built(next(s for s in SECTIONS if s.id == "auto_accept"))
    [card] = section.cards
    resolve = card.items[0]
    markdown = report.markdown()
    assert "## Automatic acceptance (guaranteed agreement)" in markdown
    assert card.judge == "small-judge" and "judge small-judge" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| 未解决问题 (resolve)"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == f"confidence ≥ {resolve.region.threshold:.2f}"
    assert cells[2] == f"{resolve.coverage * 100:.1f}%" and cells[3] == f"{resolve.region.lower_bound * 100:.1f}%"
    assert cells[4:7] == ["80", str(resolve.pending), "0"]
    page = report.html()
    assert '<section id="auto_accept">' in page and "confidence ≥" in page
    # the trend of the runs up to this one: w1 accepted nothing, w2 the confident region
    assert "Automatic acceptance across runs" in markdown and "| w1 | resolve | 0.0% | — | 0 | 80 |" in markdown


def test_an_item_with_no_reviews_says_it_cannot_accept_anything_yet_in_both_languages(store):
    en = RunReport.read(store, "w1", lang="en").markdown()
    assert "cannot accept anything yet: 0 reviews (at least 29, all agreeing, are needed)" in en
    assert "a rule not reviewed yet: applied as written" in en
    zh = RunReport.read(store, "w1", lang="zh").markdown()
    assert "## 自动采信（保证一致率）" in zh and "暂不能自动采信：仅 0 条复核" in zh


def test_the_trend_names_the_item_that_dropped_out(store):
    markdown = RunReport.read(store, "w3", lang="en").markdown()
    assert "未解决问题: no longer accepted automatically from w3" in markdown
    assert "160 reviews do not guarantee agreement ≥ 90% at 95% confidence" in markdown


def test_the_weekly_table_says_the_acceptance_of_the_run(store):
    resolve = run_acceptance(store, "w2")[0].items[0]
    report = RunReport.read(store, "w2", lang="en")
    line = (f"Automatic acceptance (this run): {resolve.accepted + 80} of 160 decisions accepted automatically "
            f"({(resolve.accepted + 80) / 160 * 100:.1f}%), "
            f"guaranteed agreement {resolve.region.lower_bound * 100:.1f}%; "
            f"{resolve.pending} pending review, 0 undecided")
    page = report.html()
    weekly = page[page.index('<section id="weekly">'):]
    assert line in weekly[:weekly.index("</section>")] and line in report.markdown()
    assert "自动采信（本次运行）" in RunReport.read(store, "w2", lang="zh").markdown()


def test_no_section_without_a_target(store):
    assert '<section id="auto_accept">' not in RunReport.read(store, "plain", lang="en").html()


def _gate(store, run: str, *checks: str):
    return evaluate_gate(store, run, GateConfig(checks=[parse_check(c) for c in checks]))


def test_the_gate_reads_coverage_and_the_guaranteed_agreement(store):
    result = _gate(store, "w2", "auto_accept:qa coverage>=0.3", "min_auto_agreement>=0.9", "min_auto_coverage>=0.99")
    assert [c.passed for c in result.checks] == [True, True, False]
    resolve = run_acceptance(store, "w2")[0].items[0]
    assert resolve.accepted >= 60
    assert result.checks[0].actual == pytest.approx((resolve.accepted + 80) / 160)     # and all 80 rule decisions
    assert result.checks[1].actual == pytest.approx(resolve.region.lower_bound)
    assert re.search(r"\d+/160 decisions accepted", result.checks[0].reason)
    nothing = _gate(store, "w1", "min_auto_agreement>=0.9")
    assert not nothing.checks[0].passed and "nothing is accepted automatically" in nothing.checks[0].reason
    with pytest.raises(GateUsageError, match="no scorecard or rubric 'other'"):
        _gate(store, "w2", "auto_accept:other coverage>=0.5")


def test_the_workbook_has_the_figures_as_numbers(store, tmp_path):
    from openpyxl import load_workbook

    resolve = run_acceptance(store, "w2")[0].items[0]
    path = RunReport.read(store, "w2", lang="en").write_excel(tmp_path / "w2.xlsx")
    book = load_workbook(path, read_only=True)
    assert book.sheetnames.index("auto_accept") == book.sheetnames.index("weekly") - 1
    rows = list(book["auto_accept"].iter_rows(values_only=True))
    assert rows[0][:4] == ("Scorecard", "Item", "Accepted region", "Coverage")
    row = next(r for r in rows if r[1] == "resolve")
    assert row[3] == pytest.approx(resolve.coverage) and row[4] == pytest.approx(resolve.region.lower_bound)
    assert row[5:9] == (80, resolve.pending, 0, resolve.waiting)
