"""Official scores and appeals in the run store, on SQLite and PostgreSQL: the latest human decision (override,
adjudication, accepted appeal) is the official score, derived at read time from the append-only records; a rejected
appeal changes nothing; an agent sees and appeals only their own conversations, only before the deadline; two
reviewers deciding one appeal at once — one wins, the other is told."""
from __future__ import annotations

import threading

import pytest

from rubriceval.audit.appeals import Appeals
from rubriceval.audit.official import OfficialScores, human_decisions, official_frame, score_without
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import adjudicate, item_version
from rubriceval.store.appeal_models import AppealError
from rubriceval.store.team_models import TaskSpec
from tests.helpers.appeal_store import CHECK, DEFINITION, RUBRIC, build_appeal_store


class Clock:
    """Every reading a little later than the last: the order of decisions is the order they were made."""

    def __init__(self, start: float):
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture()
def run(store_target):
    run_id = build_appeal_store(store_target)
    with TeamStore(store_target) as team:
        yield team, run_id


def official(team: TeamStore, run_id: str, sample: str = "c000") -> float | None:
    machine = team.query("SELECT score FROM verdicts WHERE run_id = :r AND sample_id = :s AND scorer = :c",
                         {"r": run_id, "s": sample, "c": RUBRIC})[0][0]
    return OfficialScores.load(team.conn, run_id).score(sample, RUBRIC, machine)


def override(team: TeamStore, run_id: str, score: int, expert: str = "qa_zhang", sample: str = "c000") -> None:
    versions = team.audit.versions(run_id, sample, RUBRIC)
    result = team.audit.save_response(run_id, sample, RUBRIC, expert=expert, score=score, reason="看错了",
                                      expected=versions)
    assert result.ok


def test_rubric_recompute_without_a_deduction():
    details = {"item_scores": {"judge": 4, CHECK: False}}
    assert score_without("rubric", DEFINITION, details, []) == 2.0        # the failed must caps at 2
    assert score_without("rubric", DEFINITION, details, [CHECK]) == 4.0   # removed: the judge's 4 stands
    assert score_without("rubric", DEFINITION, details, ["judge"]) is None  # a judge item needs a reviewer's score
    assert score_without("no_such_kind", {}, details, [CHECK]) is None    # nothing registered for that kind


def test_official_score_latest_human_decision_wins(run):
    team, run_id = run
    # The wall clock, as overrides and adjudications have: a clock counted from the run's creation fell behind them
    # whenever the test took more than a few seconds to reach the appeal, and the appeal lost to older decisions.
    appeals = Appeals(team)
    assert official(team, run_id) == 2.0                                  # the machine's, nobody decided
    override(team, run_id, 3)
    assert official(team, run_id) == 3.0
    override(team, run_id, 1, expert="qa_zhao")                           # a second override: the latest wins
    assert official(team, run_id) == 1.0
    # An adjudication after that wins over it.
    task = team.create_task(TaskSpec(run=run_id, rubrics=[RUBRIC], n=8, overlap=1, experts=["qa_zhang"],
                                     sampling="lowest"), "lead_chen")
    item = next(r.item_no for r in team.queue(task.task_id, "qa_zhang", as_lead=True, page_size=50).rows
                if r.sample_id == "c000")
    assert adjudicate(team, task.task_id, item, "lead_chen", label=5, reason="标杆",
                      expected_version=item_version(team, task.task_id, item)).ok
    assert official(team, run_id) == 5.0
    assert human_decisions(team.conn, run_id)[("c000", RUBRIC)].source == "adjudication"
    # A rejected appeal changes nothing; an accepted one is the newest decision.
    a = appeals.submit(run_id, "c000", RUBRIC, agent="agent_wang", role="agent", reason="没有承诺包邮",
                       item=CHECK)
    rejected = appeals.decide(a.appeal_id, reviewer="qa_zhang", role="expert", outcome="rejected",
                              reason="确实承诺了", expected_version=a.version)
    assert rejected.ok and official(team, run_id) == 5.0
    b = appeals.submit(run_id, "c000", RUBRIC, agent="agent_wang", role="agent", reason="整体打分太低")
    with pytest.raises(AppealError, match="score"):                       # whole verdict: the reviewer says
        appeals.decide(b.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted", reason="同意",
                       expected_version=b.version)
    assert appeals.decide(b.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted", reason="同意",
                          score=4, expected_version=b.version).ok
    assert official(team, run_id) == 4.0
    override(team, run_id, 3, expert="qa_zhao")                           # an override after the appeal: latest
    assert official(team, run_id) == 3.0
    assert human_decisions(team.conn, run_id)[("c000", RUBRIC)].source == "override"
    # The machine's score is untouched, and machine_only gives it back.
    assert OfficialScores.load(team.conn, run_id, machine_only=True).score("c000", RUBRIC, 2.0) == 2.0
    frame = official_frame(team.conn, run_id)
    row = frame[(frame.sample_id == "c000") & (frame.scorer == RUBRIC)].iloc[0]
    assert (row.machine_score, row.official_score, row.decided_by) == (2.0, 3.0, "override")
    assert frame.human_decided.sum() == 1
    # Every step is in the append-only log, with who and when.
    actions = [(e.action, e.expert) for e in team.audit.audit_log(run_id) if e.action.startswith("appeal_")]
    assert actions == [("appeal_submit", "agent_wang"), ("appeal_decide", "qa_zhang"),
                       ("appeal_submit", "agent_wang"), ("appeal_decide", "qa_zhang")]
    saves = [e.expert for e in team.audit.audit_log(run_id) if e.action == "save_response" and e.outcome == "saved"]
    assert saves == ["qa_zhang", "qa_zhao", "qa_zhao"]                     # every override kept, none written over
    with pytest.raises(Exception, match="append-only"):
        with team.writing() as conn:
            conn.execute("UPDATE appeal_events SET score = 1")


def test_deduction_appeal_accepted_recomputes_and_lead_final_overturns(run):
    team, run_id = run
    appeals = Appeals(team, clock=Clock(team.audit.runs.run_info(run_id).created_at))
    a = appeals.submit(run_id, "c000", RUBRIC, agent="agent_wang", role="agent", reason="知识库里有包邮政策",
                       item=CHECK)
    assert (a.state, a.machine_score, a.proposed_score) == ("submitted", 2.0, 5.0)
    taken = appeals.review(a.appeal_id, reviewer="qa_zhang", role="expert", expected_version=a.version)
    assert taken.ok and taken.appeal.state == "under_review"
    accepted = appeals.decide(a.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted",
                              reason="知识库第3条允许", expected_version=taken.appeal.version)
    assert accepted.ok and accepted.appeal.decided_score == 5.0
    assert official(team, run_id) == 5.0
    with pytest.raises(AppealError, match="cannot close"):
        appeals.finalize(a.appeal_id, lead="qa_zhang", role="expert", outcome="rejected", reason="x",
                         expected_version=accepted.appeal.version)
    final = appeals.finalize(a.appeal_id, lead="lead_chen", role="lead", outcome="rejected", reason="政策已过期",
                             expected_version=accepted.appeal.version)
    assert final.ok and final.appeal.state == "final"
    assert official(team, run_id) == 2.0                                  # overturned: the machine's again
    assert [e.action for e in appeals.events(a.appeal_id)] == ["submit", "review", "decide", "final"]
    assert [x.appeal_id for x in appeals.list(state="final")] == [a.appeal_id]


def test_agent_sees_and_appeals_only_their_own_conversations_before_the_deadline(run):
    team, run_id = run
    created = team.audit.runs.run_info(run_id).created_at
    clock = Clock(created)
    appeals = Appeals(team, clock=clock)
    mine = appeals.agent_verdicts(run_id, "agent_wang")
    assert {v.sample_id for v in mine} == {"c000", "c002", "c004", "c006"}
    assert next(v for v in mine if v.sample_id == "c000").deductions == [CHECK]
    with pytest.raises(AppealError, match="not one of your conversations"):
        appeals.submit(run_id, "c001", RUBRIC, agent="agent_wang", role="agent", reason="x")
    with pytest.raises(AppealError, match="only an agent"):
        appeals.submit(run_id, "c000", RUBRIC, agent="qa_zhang", role="expert", reason="x")
    with pytest.raises(AppealError, match="not a deduction"):
        appeals.submit(run_id, "c002", RUBRIC, agent="agent_wang", role="agent", reason="x", item=CHECK)
    with pytest.raises(AppealError, match="cannot review"):
        appeals.review("nope", reviewer="agent_li", role="agent", expected_version=1)
    appeals.set_window(run_id, days=1, by="lead_chen")
    clock.now = created + 2 * 86400
    with pytest.raises(AppealError, match="closed"):
        appeals.submit(run_id, "c000", RUBRIC, agent="agent_wang", role="agent", reason="晚了")
    assert appeals.list(agent="agent_wang") == []


def test_two_reviewers_decide_one_appeal_at_once_one_wins_the_other_is_told(run):
    team, run_id = run
    appeals = Appeals(team, clock=Clock(team.audit.runs.run_info(run_id).created_at))
    a = appeals.submit(run_id, "c000", RUBRIC, agent="agent_wang", role="agent", reason="没有承诺包邮", item=CHECK)
    results = {}
    start = threading.Barrier(2)

    def decide(reviewer: str, outcome: str) -> None:
        start.wait()
        results[reviewer] = appeals.decide(a.appeal_id, reviewer=reviewer, role="expert", outcome=outcome,
                                           reason="复核", expected_version=a.version)

    threads = [threading.Thread(target=decide, args=args) for args in (("qa_zhang", "accepted"),
                                                                         ("qa_zhao", "rejected"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [r for r in results.values() if r.ok]
    losers = [r for r in results.values() if not r.ok]
    assert len(winners) == 1 and len(losers) == 1
    winner = next(name for name, r in results.items() if r.ok)
    assert f"by {winner}" in losers[0].message and "reload" in losers[0].message
    assert appeals.get(a.appeal_id).reviewer == winner
    conflicts = [e for e in team.audit.audit_log(run_id) if e.outcome == "conflict"]
    assert len(conflicts) == 1 and conflicts[0].action == "appeal_decide"
