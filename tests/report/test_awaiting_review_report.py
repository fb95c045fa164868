"""Issue 39 item 2 (and issue 44's pending review): a conversation whose total awaits a reviewer — an item the judge
could not decide, or a machine decision pending review — is shown as awaiting review on every surface that shows or
aggregates scorecard totals: never unscored, never clear, never averaged. And every report says, per judgement item,
how its outcomes were decided on this judge in this run (rule, judge at 0.5, judge calibrated, undecided).

The verdicts are written as a judge with calibration would store them (scorecard/verdict.py's contract), so these
tests hold the surfaces without a judge."""
from __future__ import annotations

from rubriceval.cli import main
from rubriceval.i18n import t
from rubriceval.report.gate_scorecard import scorecard_figure
from rubriceval.report.scorecard_compare import compare_scorecards, format_scorecard_deltas
from rubriceval.report.scorecard_summary import run_scorecard_summaries
from rubriceval.report.scorecards import ScorecardReport
from rubriceval.report.weekly import weekly_report
from rubriceval.report.weekly_views import markdown as weekly_markdown
from rubriceval.run.scorecard_rows import scorecard_records
from rubriceval.run.scorecard_stage import stored_totals
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore, scorecard_frame
from tests.audit.test_one_official_total import chat

CARD = {
    "id": "qa", "name": "质检", "pass_total": 90,
    "dimensions": [{"id": "服务"}, {"id": "合规"}],
    "items": [
        {"id": "closing", "name": "未询问其他问题", "dimension": "服务", "points": -5,
         "check": {"type": "final_turn", "phrases": ["还有什么"]}},
        {"id": "promise", "name": "承诺超出政策", "dimension": "合规", "points": -20, "hit_on": "yes",
         "question": "客服是否承诺了政策以外的补偿？"},
        {"id": "soothe", "name": "未安抚情绪", "dimension": "服务", "points": -10,
         "applies_when": {"question": "客户是否表现出不满？"}, "question": "客服是否安抚了客户？"},
    ],
}
# sample → item → (status, p_yes, decided_by, pending_review); agent, day (Nov 2026: 16–18 are ISO week 47)
PLAN = {
    "d1": ("agent_wang", "16", {"closing": ("clear", None, "rule", False),
                                "promise": ("clear", 0.10, "judge_calibrated", False),
                                "soothe": ("not_applicable", 0.30, None, False)}),                # 100
    "d2": ("agent_wang", "17", {"closing": ("hit", None, "rule", False),
                                "promise": ("hit", 0.90, "judge", False),
                                "soothe": ("not_applicable", 0.20, None, False)}),                # 75
    "u1": ("agent_li", "16", {"closing": ("clear", None, "rule", False),
                              "promise": ("undecided", 0.45, None, False),
                              "soothe": ("not_applicable", 0.45, None, False)}),                  # awaiting 80–100
    "p1": ("agent_li", "18", {"closing": ("clear", None, "rule", False),
                              "promise": ("hit", 0.70, "judge_calibrated", True),
                              "soothe": ("clear", 0.80, "judge", False)}),                        # awaiting 80–100
    "low": ("agent_li", "17", {"closing": ("clear", None, "rule", False),
                               "promise": ("clear", 0.40, "judge_calibrated", False),
                               "soothe": ("not_applicable", 0.10, None, False)}),                 # 100
}


def card() -> Scorecard:
    return Scorecard.model_validate(CARD)


def verdict(run_id: str, sample_id: str) -> ScorecardVerdict:
    c = card()
    outcomes = [CardItemOutcome(item=item, status=status, occurrences=int(status == "hit"), p_yes=p,
                                decided_by=by, pending_review=pending)
                for item, (status, p, by, pending) in PLAN[sample_id][2].items()]
    return ScorecardVerdict(run_id=run_id, sample_id=sample_id, scorecard=c.id, version=c.version_tag,
                            outcomes=outcomes, totals=scorecard_total(c, outcomes))


def build(path, name: str = "W47") -> str:
    """A run of the five conversations with their verdicts stored as above."""
    runs = RunStore(path)
    samples = [chat(sid, agent, day, "在吗", "在的。") for sid, (agent, day, _) in PLAN.items()]
    run_id = runs.create_run(RunConfig(), samples, [], name=name)
    store = ScorecardStore(runs)
    store.register(run_id, [card()])
    store.save(run_id, [verdict(run_id, sid) for sid in PLAN])
    runs.set_status(run_id, "complete", {})
    runs.close()
    return run_id


def test_the_summary_counts_awaiting_apart_and_means_are_over_decided_totals(tmp_path):
    path = tmp_path / "runs.sqlite"
    build(path)
    [s] = run_scorecard_summaries(RunStore(path), "W47")
    assert s.n == 5 and s.n_scored == 3 and s.n_unscored == 0 and s.unscored_reasons == {}
    assert [a.sample_id for a in s.awaiting] == ["u1", "p1"]
    assert s.awaiting[0].undecided == ["promise"] and s.awaiting[1].pending == ["promise"]
    assert s.awaiting[0].total_range == (80, 100) and s.awaiting_range == (80, 100)
    assert s.totals == [100, 75, 100] and round(s.mean, 2) == 91.67     # the waiting ones in no mean
    assert s.pass_rate == 2 / 3 and s.awaiting_review_rate == 0.4
    promise = next(i for i in s.items if i.item == "promise")
    # neither a hit (pending) nor clear (undecided): counted apart, out of the hit rate
    assert (promise.n_hit, promise.n_clear, promise.n_undecided, promise.n_pending) == (1, 2, 1, 1)
    assert promise.how == {"rule": 0, "judge": 1, "judge_calibrated": 2, "checker": 0, "rubric": 0, "undecided": 1,
                           "pending": 1, "not_applicable": 0, "unscored": 0}
    soothe = next(i for i in s.items if i.item == "soothe")
    assert soothe.how["not_applicable"] == 4 and soothe.how["judge"] == 1
    assert next(i for i in s.items if i.item == "closing").how is None          # a rule item: no breakdown


def test_every_report_output_shows_awaiting_review_and_how_each_judgement_item_was_decided(tmp_path):
    path = tmp_path / "runs.sqlite"
    build(path)
    report = ScorecardReport(RunStore(path), "W47", "en")
    md = report.markdown()
    assert t("aw_counts", "en", n=2, share="40.0%", undecided=1, pending=1, low=80, high=100) in md
    assert t("aw_list", "en") in md and "| u1 | 承诺超出政策 |  | 80–100 |" in md
    assert t("how_title", "en") in md
    assert "| 承诺超出政策 | 0 | 1 | 2 | 1 | 1 | 0 |" in md        # rule, judge, calibrated, undecided, pending, N/A
    html = report.html()
    assert "awaiting review (80–100)" in html and "how-decided" in html and "awaiting-review" in html
    assert "u1 · Total unscored" not in html
    rows = list(report._sheet_rows(report.cards[0], report.summaries[0]))
    text = [r[0] for r in rows if len(r) == 1]
    assert any(line.startswith("承诺超出政策: rule 0; judge (plain 0.5) 1; judge (calibrated) 2") for line in text)
    head = next(r for r in rows if r and r[0] == "sample_id")
    waiting = head.index(t("sc_col_awaiting_review", "en"))
    u1 = next(r for r in rows if r and r[0] == "u1")
    assert u1[waiting] == "80–100" and u1[head.index("承诺超出政策")] == t("sc_cell_undecided", "en")
    zh = ScorecardReport(RunStore(path), "W47", "zh").markdown()
    assert "待复核 2 通" in zh and t("how_title", "zh") in zh


def test_store_rows_run_rows_and_stage_counts_say_awaiting_review(tmp_path):
    path = tmp_path / "runs.sqlite"
    run_id = build(path)
    runs = RunStore(path)
    frame = scorecard_frame(card(), ScorecardStore(runs).verdicts(run_id))
    by_id = frame.set_index("sample_id")
    assert by_id.loc["u1", "awaiting_review"] == "80–100" and by_id.loc["u1", "promise"] == "undecided"
    assert by_id.loc["p1", "promise"] == "pending" and by_id.loc["d1", "awaiting_review"] == ""
    records = list(scorecard_records(runs, run_id))
    total = next(r for r in records if r["sample_id"] == "u1" and r["item"] == "total")
    assert total["status"] == "awaiting_review" and total["score"] is None and total["total_range"] == "80–100"
    pending = next(r for r in records if r["sample_id"] == "p1" and r["item"] == "promise")
    assert pending["status"] == "pending_review" and pending["score"] is None
    decided = next(r for r in records if r["sample_id"] == "d2" and r["item"] == "promise")
    assert decided["decided_by"] == "judge" and decided["score"] == -20
    counts = stored_totals(runs, run_id)
    assert (counts.done, counts.awaiting, counts.unscored) == (5, 2, 0)


def test_the_gate_fails_on_too_many_awaiting_review_and_reads_them_in_its_figures(tmp_path, capsys):
    path = tmp_path / "runs.sqlite"
    build(path)
    summaries = run_scorecard_summaries(RunStore(path), "W47")
    value, why, extra = scorecard_figure(summaries, "qa", "awaiting_review_rate")
    assert value == 0.4 and why is None and "2 awaiting review" in extra
    assert scorecard_figure(summaries, None, "awaiting_review_rate")[0] == 0.4
    assert scorecard_figure(summaries, "qa", "n_awaiting_review")[0] == 2.0
    assert main(["gate", "W47", "--check", "scorecard:qa awaiting_review_rate<=0.2", "--store", str(path)]) == 1
    assert main(["gate", "W47", "--check", "awaiting_review_rate<=0.5", "--store", str(path)]) == 0
    assert main(["gate", "W47", "--check", "scorecard:qa n_awaiting_review<=1", "--store", str(path)]) == 1


def test_compare_leaves_awaiting_conversations_out_of_the_pairs_and_counts_them(tmp_path):
    path = tmp_path / "runs.sqlite"
    build(path, "A")
    build(path, "B")
    [delta] = compare_scorecards(RunStore(path), "A", "B", n_boot=50)
    assert delta.n_paired == 3 and delta.n_awaiting_a == delta.n_awaiting_b == 2
    assert "awaiting review 2 → 2 (not in the means)" in format_scorecard_deltas([delta])


def test_the_weekly_figures_count_awaiting_review_apart_from_the_mean(tmp_path):
    path = tmp_path / "runs.sqlite"
    build(path)
    report = weekly_report(RunStore(path), scorecard="qa")
    li = report.row("agent", "agent_li")
    everyone = report.row("all")
    assert li.conversations == 3 and li.awaiting == 2 and li.scored == 1 and li.mean == 100.0
    assert everyone.awaiting == 2 and everyone.scored == 3 and round(everyone.mean, 2) == 91.67
    lines = "\n".join(weekly_markdown([report], "en"))
    assert t("wk_awaiting", "en") in lines


def test_segment_tables_and_the_trend_count_awaiting_review_apart_from_unscored(tmp_path):
    from rubriceval.data.segment_spec import parse_by
    from rubriceval.report.segment_views import headers as segment_headers
    from rubriceval.report.trend_views import format_trend
    from rubriceval.segments.table import segment_tables
    from rubriceval.trend.series import compute_trend

    path = tmp_path / "runs.sqlite"
    build(path)
    runs = RunStore(path)
    [table] = segment_tables(runs, "W47", parse_by("agent_id"))
    li = next(r for r in table.rows if r.scorer == "qa" and r.values == {"agent_id": "agent_li"})
    assert (li.n_samples, li.n_scored, li.n_awaiting, li.n_unscored, li.mean) == (3, 1, 2, 0, 100.0)
    assert t("wk_awaiting", "en") in segment_headers(table, "en")
    trend = compute_trend(runs, ["W47"], scorers=["qa"])
    [point] = trend.rows
    assert (point.n_awaiting, point.n_unscored, point.n_scored) == (2, 0, 3) and round(point.mean, 2) == 91.67
    assert t("wk_awaiting", "en") in format_trend(trend, "en")


def test_a_turn_checkers_decision_is_counted_apart_from_the_judges(tmp_path, monkeypatch):
    """A judgement item decided by rubriceval's turn checker (issue 39 round 4) may have asked no judge at all: the
    report says so in its own column, not as a calibrated judge."""
    agent, day, items = PLAN["d1"]
    monkeypatch.setitem(PLAN, "d1", (agent, day, {**items, "promise": ("clear", 0.10, "checker", False)}))
    path = tmp_path / "runs.sqlite"
    build(path)
    [s] = run_scorecard_summaries(RunStore(path), "W47")
    promise = next(i for i in s.items if i.item == "promise")
    assert promise.how["checker"] == 1 and promise.how["judge_calibrated"] == 1
    md = ScorecardReport(RunStore(path), "W47", "en").markdown()
    assert t("how_checker", "en") in md
    assert "| 承诺超出政策 | 0 | 1 | 1 | 1 | 1 | 1 | 0 |" in md   # rule, judge, calibrated, checker, undecided, pending, N/A
