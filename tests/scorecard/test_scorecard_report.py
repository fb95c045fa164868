"""Scorecard figures in reports, gate and compare (issue 25.3): totals distribution, mean per dimension, top
deductions, fatal conversations first, per-item hit rate with N/A left out, the Excel sheet (a row per conversation,
a column per item), hostile transcripts escaped in HTML, gate checks, compare deltas and version changes."""
import asyncio
import json

import openpyxl
import pytest

from rubriceval.cli import main
from rubriceval.data.sample import Sample
from rubriceval.report.excel_book import ExcelBook
from rubriceval.report.gate import evaluate_gate
from rubriceval.report.scorecard_compare import compare_scorecards
from rubriceval.report.scorecard_summary import run_scorecard_summaries
from rubriceval.report.scorecards import ScorecardReport
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore

CARD = {
    "id": "qa", "name": "质检", "pass_total": 90,
    "dimensions": [{"id": "服务"}, {"id": "合规"}],
    "items": [
        {"id": "closing", "name": "未询问其他问题", "dimension": "服务", "points": -5,
         "check": {"type": "final_turn", "phrases": ["还有什么"]}},
        {"id": "refund_time", "name": "未说到账时效", "dimension": "服务", "points": -10,
         "applies_when": {"tags": ["退款"]}, "check": {"type": "max_count", "phrases": ["工作日"], "min": 1, "max": 9}},
        {"id": "password", "name": "索要密码", "dimension": "合规", "fatal": True,
         "check": {"type": "must_not_mention", "phrases": ["密码"], "turns": "assistant"}},
    ],
}


def conversation(sid, *turns, tags=()):
    roles = ["user", "assistant"] * len(turns)
    return Sample.model_validate({"id": sid, "question": "", "tags": list(tags), "conversation": {
        "id": sid, "turns": [{"role": r, "content": c} for r, c in zip(roles, turns)]}})


SAMPLES = [
    conversation("good", "在吗", "在的，还有什么可以帮您？"),
    conversation("no-closing", "在吗", "在。"),
    conversation("refund-slow", "退款", "已退款。", tags=["退款"]),                    # −5 −10
    conversation("refund-ok", "退款", "3 个工作日到账，还有什么可以帮您？", tags=["退款"]),
    conversation("secret", "登不上", "把密码发我 <script>alert(1)</script>"),          # fatal
]


def make_run(store: RunStore, name: str, card: Scorecard, samples=SAMPLES) -> str:
    run_id = store.create_run(RunConfig(), samples, [], name=name)
    cards = ScorecardStore(store)
    cards.register(run_id, [card])
    cards.save(run_id, [asyncio.run(score_scorecard(card, s, None, run_id=run_id)) for s in samples])
    return run_id


@pytest.fixture
def store(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    make_run(store, "a", Scorecard.model_validate(CARD))
    return store


def test_summary_figures(store):
    [s] = run_scorecard_summaries(store, "a")
    assert (s.n, s.n_scored, s.n_unscored) == (5, 5, 0)
    assert s.totals == [100, 95, 85, 100, 0] and s.mean == 76.0 and s.pass_rate == 0.6
    assert [f.sample_id for f in s.fatal] == ["secret"] and s.fatal_rate == 0.2
    refund = next(i for i in s.items if i.item == "refund_time")
    assert (refund.n_hit, refund.n_decided, refund.n_na, refund.hit_rate) == (1, 2, 3, 0.5)   # N/A left out
    closing = next(i for i in s.items if i.item == "closing")
    assert (closing.n_hit, closing.n_decided, closing.points_total) == (3, 5, -15)
    assert [i.item for i in s.top_deductions()] == ["closing", "refund_time", "password"]
    service = next(d for d in s.dimensions if d.dimension == "服务")
    assert service.mean == pytest.approx(-25 / 5)
    assert dict(s.distribution())["100"] == 2 and dict(s.distribution())["0"] == 1


def test_markdown_html_and_excel(store, tmp_path):
    report = ScorecardReport(store, "a", "zh")
    md = report.markdown()
    assert "一票否决的对话" in md and "| secret | password |" in md
    assert "| 未说到账时效 | 服务 | -10 | 规则 | 1 | 2 | 50.0% | 3 | 0 | -10 |" in md
    html = report.html()
    assert html.startswith('<section class="scorecards">') and "质检评分表" in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html
    assert "<mark>索要密码 (一票否决)</mark>" in html
    book = ExcelBook(tmp_path / "r.xlsx", "zh")           # streamed, as the report's workbook writes it
    for name, rows in report.sheets(book.taken):
        book.plain_sheet(name, rows)
    sheet = openpyxl.load_workbook(book.close())["scorecard qa"]
    rows = list(sheet.iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r[0] == "sample_id")
    body = {r[0]: dict(zip(rows[header], r)) for r in rows[header + 1:]}
    assert len(body) == 5
    assert body["refund-slow"]["未说到账时效"] == -10 and body["good"]["未说到账时效"] == "N/A"
    assert body["secret"]["索要密码"] == "一票否决" and body["secret"]["总分"] == 0     # a Chinese sheet (issue 43.4)


def test_gate_figures(store):
    def gate(*checks):
        return {c.name: c for c in evaluate_gate(store, "a", list(checks)).checks}

    checks = gate("scorecard:qa total mean>=75", "scorecard:qa fatal_rate<=0.1", "fatal_rate<=0.25",
                  "scorecard:qa pass_rate>=60%", "scorecard:qa min>=1")
    assert checks["scorecard:qa total mean>=75"].passed and checks["scorecard:qa total mean>=75"].actual == 76
    assert not checks["scorecard:qa fatal_rate<=0.1"].passed
    assert checks["fatal_rate<=0.25"].passed and "1/5 conversations fatal" in checks["fatal_rate<=0.25"].reason
    assert checks["scorecard:qa pass_rate>=60%"].passed
    assert not checks["scorecard:qa min>=1"].passed


def test_gate_usage_errors(store, capsys):
    assert main(["gate", "a", "--store", str(store.path), "--check", "scorecard:nope total mean>=1"]) == 2
    assert "no scorecard 'nope'" in capsys.readouterr().err
    assert main(["gate", "a", "--store", str(store.path), "--check", "scorecard: mean>=1"]) == 2


def test_compare_pairs_totals_and_says_when_the_scorecard_changed(store):
    edited = json.loads(json.dumps(CARD))
    edited["items"][0]["points"] = -2           # a points edit: a new version
    make_run(store, "b", Scorecard.model_validate(edited))
    [delta] = compare_scorecards(store, "a", "b", n_boot=200)
    assert delta.version_changed and delta.n_paired == 5
    assert delta.delta == pytest.approx(6 / 5)            # two −5 became −2 (the fatal one stays 0)
    same = make_run(store, "c", Scorecard.model_validate(CARD), SAMPLES[:3])
    [delta] = compare_scorecards(store, "a", same, n_boot=200)
    assert not delta.version_changed and delta.n_paired == 3 and delta.delta == 0


def test_a_run_holding_two_versions_reports_one_and_says_so(store):
    edited = Scorecard.model_validate({**CARD, "items": [{**CARD["items"][0], "points": -1}, *CARD["items"][1:]]})
    run_id = store.resolve("a")
    ScorecardStore(store).save(run_id, [asyncio.run(score_scorecard(edited, SAMPLES[0], None))])
    [s] = run_scorecard_summaries(store, "a")
    assert "2 versions" in s.note and s.n == 4             # the stale verdict is left out, and that is said
