"""Issue 39 item 3 and the official side of item 2: items awaiting review go to the review queue, as does each
judgement item's highest-p(yes) conversation of the period that the machine let pass (below any cut-off), through
the one card sampler (audit/team_cards.card_plan_items), each with its reason; and a reviewer's decision on an
undecided or pending item decides it, so the official total counts."""
from __future__ import annotations

from rubriceval.audit.plan import SamplingPlan, parse_plan
from rubriceval.audit.review_priority import reason_text, selection_text, top_p_yes
from rubriceval.audit.scorecard_official import appealable_items, official_totals
from rubriceval.audit.scorecard_reviews import ReviewStore
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_cards import card_plan_items, open_card_item, save_card_review
from rubriceval.cli import main
from rubriceval.report.scorecard_summary import run_scorecard_summaries
from rubriceval.store.runs import RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.store.team_models import TaskSpec
from tests.report.test_awaiting_review_report import build, card, verdict

EVERY_ITEM_CLEAR = {"closing": "clear", "promise": "clear", "soothe": "not_applicable"}


def test_a_review_of_an_undecided_or_pending_item_makes_the_official_total(tmp_path):
    path = tmp_path / "runs.sqlite"
    run_id = build(path)
    runs = RunStore(path)
    assert official_totals(runs, run_id)[("u1", "qa")] is None                     # waiting: no total yet
    verdicts = {v.sample_id: v for v in ScorecardStore(runs).verdicts(run_id)}
    reviews = ReviewStore(runs)
    reviews.add(run_id, verdicts["u1"], "promise", "missed", reviewer="qa_zhang")   # the undecided item hits
    reviews.add(run_id, verdicts["p1"], "promise", "confirm", reviewer="qa_zhang")  # the pending hit is accepted
    totals = official_totals(runs, run_id)
    assert totals[("u1", "qa")] == 80 and totals[("p1", "qa")] == 80
    [summary] = run_scorecard_summaries(runs, run_id)
    assert summary.awaiting == [] and summary.n_scored == 5 and summary.totals == [100, 75, 80, 80, 100]
    assert next(i for i in summary.items if i.item == "promise").how["undecided"] == 1   # the judge's, as it was


def test_an_item_awaiting_review_is_not_appealable_until_decided():
    assert appealable_items(card(), verdict("r", "p1")) == []               # the pending hit is no deduction yet
    assert appealable_items(card(), verdict("r", "d2")) == ["closing", "promise"]


def test_a_reviewers_clear_on_an_undecided_item_is_recorded_and_decides_it(tmp_path):
    """The card review task's save turns every status into a decision on a waiting item — a plain clear too, which
    agreeing with a machine 'non-hit' used to record nothing for (the item would have waited for ever)."""
    path = tmp_path / "runs.sqlite"
    run_id = build(path)
    with TeamStore(path) as team:
        info = team.create_task(TaskSpec(run=run_id, scorecards=["qa"], n=5, overlap=1, experts=["qa_zhang"]),
                                created_by="lead")
        for item_no, sample_id in team.query("SELECT item_no, sample_id FROM team_task_items WHERE task_id = :t",
                                             {"t": info.task_id}):
            if sample_id in ("u1", "p1"):
                opened = open_card_item(team, info.task_id, item_no, "qa_zhang")
                assert save_card_review(team, info.task_id, item_no, "qa_zhang", EVERY_ITEM_CLEAR,
                                        expected_version=opened.version).ok
                shown = open_card_item(team, info.task_id, item_no, "qa_zhang").machine
                assert shown["promise"] == ("undecided" if sample_id == "u1" else "pending_hit")
    runs = RunStore(path)
    decided = {(r.sample_id, r.item): r.decision for r in ReviewStore(runs).reviews(run_id)}
    assert decided[("u1", "promise")] == "clear" and decided[("p1", "promise")] == "reject"
    totals = official_totals(runs, run_id)
    assert totals[("u1", "qa")] == 100 and totals[("p1", "qa")] == 100


def test_the_queue_holds_each_items_top_p_yes_below_the_cut_off_and_every_waiting_conversation(tmp_path):
    path = tmp_path / "runs.sqlite"
    run_id = build(path)
    plan = parse_plan("1 per week", top_p_yes=1)
    with TeamStore(path) as team:
        # seed 1 draws d2 as the random part (one stratum of five: random.Random(1).sample)
        planned = {i.candidate.sample_id: i.selection for i in card_plan_items(team, run_id, "qa", plan, seed=1)}
    # 'low' was cleared by the judge (p(yes) 0.40 under the cut-off) yet has the highest p(yes) of the promise item
    # among the conversations the machine let pass; d1's 'soothe' applies-when p(yes) 0.30 is that item's highest
    assert {"u1", "p1", "low", "d1"} <= set(planned)
    reasons = {sid: set(sel.removeprefix("risk:").split(",")) for sid, sel in planned.items() if sel != "random"}
    expected = {"u1": {"undecided"}, "p1": {"pending_review"}, "low": {"top_p_yes:promise"},
                "d1": {"top_p_yes:soothe"}}
    assert reasons == expected and planned["d2"] == "random"   # d2's hit is no top p(yes): shown, appealable
    with TeamStore(path) as team:
        plain = {i.candidate.sample_id for i in card_plan_items(team, run_id, "qa",
                                                                 plan.model_copy(update={"top_p_yes": 0}), seed=0)}
    assert {"u1", "p1"} <= plain and len(plain) <= 3              # k = 0: the waiting ones and the random draw


def test_top_p_yes_ranks_per_item_and_period_and_says_why_in_words(tmp_path):
    path = tmp_path / "runs.sqlite"
    run_id = build(path)
    verdicts = ScorecardStore(RunStore(path)).verdicts(run_id)
    weeks = {"d1": "W47", "d2": "W47", "u1": "W47", "p1": "W47", "low": "W48"}
    ranked = top_p_yes(card(), verdicts, weeks, 1)
    # W47's promise: d1 (0.10; d2 is a hit, u1 and p1 wait); W48's: low
    assert ranked["low"] == ["top_p_yes:promise", "top_p_yes:soothe"] and "top_p_yes:promise" in ranked["d1"]
    names = {i.id: i.label for i in card().items}
    assert reason_text("top_p_yes:promise", "en", names) == "highest p(yes) for 承诺超出政策"
    assert selection_text("risk:undecided,pending_review", "en") == "undecided; pending review"
    assert selection_text("risk:top_p_yes:promise", "zh", names) == "承诺超出政策 的 p(yes) 最高"
    assert SamplingPlan(n=1).top_p_yes == 2                      # the default k


def test_audit_task_create_prints_the_reasons(tmp_path, capsys):
    path = tmp_path / "runs.sqlite"
    build(path)
    assert main(["audit-task", "create", "W47", "--scorecards", "qa", "--plan", "1 per week", "--top-p-yes", "1",
                 "--experts", "qa_zhang", "--seed", "1", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "risk-first additions: 4" in out
    assert "undecided: 1" in out and "pending review: 1" in out and "highest p(yes) for 承诺超出政策: 1" in out
