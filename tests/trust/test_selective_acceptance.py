"""Selective scoring with a guarantee through the run (issue 44, items 2 and 3): a card with `auto_accept` scored by
the run's scorecard stage accepts nothing judge-decided before reviews (every total waits, with its range); after a
week of reviews the confident decisions are accepted with the guaranteed agreement; when reviewers start to disagree
with those, the item drops out of acceptance on the next run by itself; a fit for one judge is ignored with another;
a reviewed rule that disagrees with people stops being accepted. The fit reads only the reviews made before a run
started, so a report recomputes exactly what the run applied."""
from __future__ import annotations

import asyncio
import re

import pytest

from rubriceval.audit.scorecard_reviews import ReviewStore
from rubriceval.data.sample import Sample
from rubriceval.run.scorecard_stage import score_run_scorecards
from rubriceval.scorecard.schema import Scorecard
from rubriceval.stats.selective import clopper_pearson_lower
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply
from rubriceval.trust.selective import ReviewedDecision, fit_region
from rubriceval.trust.selective_reviews import regions_for_run, reviewed_decisions, run_acceptance

CARD = {"id": "qa", "name": "质检", "auto_accept": {"agreement": 0.9, "confidence": 0.95},
        "dimensions": [{"id": "d"}],
        "items": [{"id": "resolve", "name": "未解决问题", "dimension": "d", "points": -5,
                   "question": "客服是否解决了问题？"},
                  {"id": "closing", "name": "未询问其他需求", "dimension": "d", "points": -2,
                   "check": {"type": "final_turn", "phrases": ["还有什么"]}}]}
# p(yes) of "did the agent resolve it?" per conversation: 30 confident yes, 30 confident no, 20 unsure
P_YES = [0.9 + (i % 10) / 100 for i in range(30)] + [0.02 + (i % 10) / 100 for i in range(30)] + \
        [0.42 + (i % 16) / 100 for i in range(20)]


def conversation(sid: str, p_yes: float, closing: bool) -> Sample:
    answer = f"处理编号 {p_yes:.2f}。" + ("还有什么可以帮您？" if closing else "")
    return Sample.model_validate({"id": sid, "question": "", "conversation": {
        "id": sid, "turns": [{"role": "user", "content": "我的订单没到"}, {"role": "assistant", "content": answer}]},
        "metadata": {"agent_id": "a1", "started_at": "2026-12-01T10:00:00+08:00"}})


def judge(model: str = "small-judge") -> ScriptedJudge:
    def reply(request):
        return yes_no_reply(float(re.search(r"处理编号 ([0-9.]+)", request[-1]["content"]).group(1)))
    scripted = ScriptedJudge(reply)
    scripted.config = scripted.config.model_copy(update={"model": model})
    return scripted


def week(runs: RunStore, name: str, model: str = "small-judge", card: dict | None = None) -> str:
    samples = [conversation(f"{name}-{i}", p, closing=i % 4 != 0) for i, p in enumerate(P_YES)]
    run_id = runs.create_run(RunConfig(judge={"model": model}), samples, [], name=name)
    scorecard = Scorecard.model_validate(card or CARD)
    ScorecardStore(runs).register(run_id, [scorecard])
    asyncio.run(score_run_scorecards(runs, run_id, [scorecard], judge(model), concurrency=4))
    return run_id


def review_week(runs: RunStore, run_id: str, resolve_right: bool, closing_right: bool = True) -> None:
    """A reviewer decides both items of every conversation: the machine right on the confident ones (or wrong on
    all of them), and on the unsure ones right every other time."""
    reviews = ReviewStore(runs)
    for index, verdict in enumerate(ScorecardStore(runs).verdicts(run_id)):
        for outcome in verdict.outcomes:
            right = (resolve_right if index < 60 else index % 2 == 0) if outcome.item == "resolve" else closing_right
            if outcome.status == "hit":
                reviews.add(run_id, verdict, outcome.item, "confirm" if right else "reject", reviewer="ann")
            elif outcome.status == "clear":
                reviews.add(run_id, verdict, outcome.item, "clear" if right else "missed", reviewer="ann")


@pytest.fixture
def runs(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    yield store
    store.close()


def outcomes(runs: RunStore, run_id: str, item: str) -> list:
    return [v.outcome(item) for v in ScorecardStore(runs).verdicts(run_id)]


def test_nothing_judge_decided_is_accepted_before_reviews(runs):
    first = week(runs, "w1")
    verdicts = ScorecardStore(runs).verdicts(first)
    assert all(v.outcome("resolve").pending_review for v in verdicts)
    assert not any(v.outcome("closing").pending_review for v in verdicts)        # a rule applies as written
    assert all(v.totals.total is None and v.totals.pending == ["resolve"] for v in verdicts)
    hit = next(v for v in verdicts if v.outcome("resolve").status == "hit" and v.outcome("closing").status == "clear")
    assert hit.totals.total_range == (95, 100)
    [card] = run_acceptance(runs, first)
    [resolve, closing] = card.items
    assert (resolve.accepted, resolve.pending, resolve.coverage, resolve.region.n_reviewed) == (0, 80, 0.0, 0)
    assert resolve.region.accepts == "none" and resolve.region.reason.key == "aa_cannot_yet"
    assert closing.coverage == 1.0 and closing.region.reason.key == "aa_rule_unreviewed"


def test_reviews_open_the_confident_region_and_disagreement_closes_it_on_the_next_run(runs):
    first = week(runs, "w1")
    review_week(runs, first, resolve_right=True)
    second = week(runs, "w2")
    [card] = run_acceptance(runs, second)
    resolve = card.items[0]
    region = resolve.region
    # 60 confident decisions agreed, the 20 unsure ones half: the region holds every confident one (and the few most
    # confident unsure ones as long as the bound holds), its bound reaches 0.9; the rest wait
    assert region.accepts == "confident" and region.n_reviewed == 80
    assert 60 <= region.n < 80 and region.lower_bound >= 0.9
    assert region.lower_bound == pytest.approx(clopper_pearson_lower(region.agreements, region.n, 0.95))
    second_outcomes = outcomes(runs, second, "resolve")
    inside = [abs(o.p_yes - 0.5) >= region.threshold for o in second_outcomes]
    assert all(inside[:60]) and not all(inside[60:])
    assert [o.pending_review for o in second_outcomes] == [not i for i in inside]
    assert (resolve.accepted, resolve.pending) == (sum(inside), 80 - sum(inside))
    assert resolve.coverage == sum(inside) / 80
    accepted = ScorecardStore(runs).verdicts(second)[0]
    assert accepted.totals.total is not None and accepted.totals.pending == []
    # the fit is reproducible: the reviews made after the run started do not change what it applied
    review_week(runs, second, resolve_right=False)
    assert run_acceptance(runs, second)[0].items[0].region == region
    # the judge went wrong on the confident decisions: reviewed agreement 60 of 120 there, the item drops out
    third = week(runs, "w3")
    dropped = run_acceptance(runs, third)[0].items[0]
    assert dropped.region.accepts == "none" and dropped.accepted == 0 and dropped.region.n_reviewed == 160
    assert dropped.region.reason.key == "aa_below_target"
    assert all(o.pending_review for o in outcomes(runs, third, "resolve"))


def test_a_fit_names_its_judge_and_is_ignored_with_another(runs):
    first = week(runs, "w1")
    review_week(runs, first, resolve_right=True)
    other = week(runs, "w2-other", model="bigger-judge")
    region = run_acceptance(runs, other)[0].items[0].region
    assert region.judge == "bigger-judge" and region.n_reviewed == 0 and region.accepts == "none"
    assert all(o.pending_review for o in outcomes(runs, other, "resolve"))
    same = week(runs, "w2", model="small-judge")
    assert regions_for_run(runs, same, Scorecard.model_validate(CARD))["resolve"].judge == "small-judge"
    assert not outcomes(runs, same, "resolve")[0].pending_review


def test_a_reviewed_rule_that_disagrees_with_people_stops_being_accepted(runs):
    first = week(runs, "w1")
    review_week(runs, first, resolve_right=True, closing_right=False)
    second = week(runs, "w2")
    closing = run_acceptance(runs, second)[0].items[1]
    assert closing.region.accepts == "none" and closing.region.reason.key == "aa_rule_below"
    assert all(o.pending_review for o in outcomes(runs, second, "closing"))


def test_an_item_without_a_target_is_left_alone(runs):
    card = {**CARD, "auto_accept": None,
            "items": [{**CARD["items"][0], "auto_accept": {"agreement": 0.8}}, CARD["items"][1]]}
    first = week(runs, "w1", card=card)
    assert all(o.pending_review for o in outcomes(runs, first, "resolve"))
    assert not any(o.pending_review for o in outcomes(runs, first, "closing"))
    assert [i.item for i in run_acceptance(runs, first)[0].items] == ["resolve"]


def test_an_item_with_a_new_question_does_not_inherit_the_old_reviews(runs):
    first = week(runs, "w1")
    review_week(runs, first, resolve_right=True)
    changed = Scorecard.model_validate({**CARD, "items": [{**CARD["items"][0], "question": "问题是否已解决？"},
                                                           CARD["items"][1]]})
    found = reviewed_decisions(runs, changed, "small-judge")
    assert found["resolve"] == [] and len(found["closing"]) == 80


def test_the_fit_is_pure_for_the_simulation():
    """Reviewed decisions in, a region out: no store needed (the four-week simulation calls it so)."""
    target = Scorecard.model_validate(CARD).auto_accept
    decisions = [ReviewedDecision(item="resolve", machine_hit=True, reviewer_hit=True, confidence=0.4)] * 40
    region = fit_region("resolve", "confidence", decisions, target, "small-judge")
    assert region.accepts == "confident" and region.threshold == 0.4 and region.coverage == 1.0
    assert fit_region("resolve", "band", decisions[:28], target, "j").accepts == "none"
    assert fit_region("resolve", "band", decisions[:29], target, "j").accepts == "all"



def test_pending_decisions_go_to_the_review_queue_and_a_review_settles_the_total(runs):
    """The pending mark is what the risk-first sampler (audit/review_priority.py) and the official totals read: every
    pending verdict is queued, and once a reviewer decided its items its official total is a number again."""
    from rubriceval.audit.review_priority import awaiting_reasons
    from rubriceval.audit.scorecard_official import official_totals

    first = week(runs, "w1")
    verdicts = ScorecardStore(runs).verdicts(first)
    assert all(awaiting_reasons(v) == ["pending_review"] for v in verdicts)
    assert set(official_totals(runs, first).values()) == {None}
    review_week(runs, first, resolve_right=True)
    totals = official_totals(runs, first)
    assert None not in totals.values()
    machine = verdicts[0]          # p(yes) 0.90: resolved, the deduction clear; the reviewer agreed
    assert totals[(machine.sample_id, "qa")] == (98 if machine.outcome("closing").status == "hit" else 100)


def test_scorecard_trust_prints_what_the_run_accepted(runs, capsys):
    from rubriceval.cli import main

    first = week(runs, "w1")
    review_week(runs, first, resolve_right=True)
    week(runs, "w2")
    assert main(["scorecard", "trust", "w2", "--store", str(runs.path)]) == 0
    out = capsys.readouterr().out
    assert "质检: target agreement ≥ 90% at 95% confidence, judge small-judge" in out
    line = next(line for line in out.splitlines() if line.startswith("未解决问题 (resolve)"))
    assert "confidence ≥" in line and " 80 " in line
    assert "cannot accept" not in out


def test_the_run_says_what_it_cannot_accept_yet(runs, capsys):
    week(runs, "w1")
    err = capsys.readouterr().err
    assert "note: scorecard qa: auto_accept on judge small-judge: 1 of 2 item(s) accept decisions automatically" in err
    assert "  resolve: cannot accept anything yet: 0 reviews (at least 29, all agreeing, are needed)" in err


def test_confidence_is_read_against_the_cut_off_the_decision_used():
    """A decision read against a cut-off made at run time (from the item's examples) is as sure as its distance from
    that cut-off, not from the item's stored calibration or 0.5; a decision by drafted evidence ranks first."""
    from rubriceval.scorecard.verdict import CardItemOutcome
    from rubriceval.trust.selective import decision_confidence

    item = Scorecard.model_validate(CARD).items[0]
    at_run_time = CardItemOutcome(item="resolve", status="hit", p_yes=0.35, cutoff=0.3, decided_by="judge_calibrated")
    assert decision_confidence(item, at_run_time, "small-judge") == pytest.approx(0.05)
    plain = CardItemOutcome(item="resolve", status="hit", p_yes=0.35)          # stored before cut-offs were recorded
    assert decision_confidence(item, plain, "small-judge") == pytest.approx(0.15)
    by_evidence = CardItemOutcome(item="resolve", status="hit", p_yes=0.35, decided_by="rule")
    assert decision_confidence(item, by_evidence, "small-judge") == 1.0
    assert decision_confidence(item, CardItemOutcome(item="resolve", status="hit"), "small-judge") is None
