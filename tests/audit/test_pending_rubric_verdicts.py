"""Rubric verdicts pending review (issue 44: outside their rubric's auto_accept region; core/pending_review.py) in the
official-score rule, on SQLite and PostgreSQL: no official score and counted apart until a person decides; an audit
settles one; an agent may appeal one — an accepted appeal settles it at the decided score, a rejected appeal of the
whole verdict at the judge's score, a rejected appeal of one deduction decides nothing (it still waits); on a verdict
that is not pending a rejected appeal still changes nothing. Every test here fails on the code before pending
verdicts (no pending state: every verdict's official score was the judge's)."""
from __future__ import annotations

import json

import pytest

from rubriceval.audit.appeals import Appeals
from rubriceval.audit.official import OfficialScores, human_decisions, official_frame
from rubriceval.audit.team import TeamStore
from rubriceval.core.pending_review import PendingReview
from rubriceval.store.runs import RunStore
from tests.audit.test_appeals import Clock, official, override
from tests.helpers.appeal_store import CHECK, RUBRIC, build_appeal_store

PENDING = ("c000", "c002", "c004")


def mark_pending(target, run_id: str, samples) -> None:
    """What a run of the rubric with a target writes: the target in the rubric's stored definition, and the mark on
    each verdict outside its region (trust/rubric_selective.pending_mark)."""
    store = RunStore(target)
    try:
        with store.lock, store.conn:
            row = store.conn.execute("SELECT definition_json FROM run_scorers WHERE run_id = ? AND scorer = ?",
                                     (run_id, RUBRIC)).fetchone()
            definition = {**json.loads(row[0]), "auto_accept": {"agreement": 0.9, "confidence": 0.95}}
            store.conn.execute("UPDATE run_scorers SET definition_json = ? WHERE run_id = ? AND scorer = ?",
                               (json.dumps(definition), run_id, RUBRIC))
            for sample_id in samples:
                row = store.conn.execute("SELECT details_json FROM verdicts WHERE run_id = ? AND sample_id = ? AND "
                                         "scorer = ?", (run_id, sample_id, RUBRIC)).fetchone()
                details = {**json.loads(row[0]), **PendingReview(judge="small-judge").details()}
                store.conn.execute("UPDATE verdicts SET details_json = ? WHERE run_id = ? AND sample_id = ? AND "
                                   "scorer = ?", (json.dumps(details), run_id, sample_id, RUBRIC))
    finally:
        store.close()


@pytest.fixture()
def run(store_target):
    run_id = build_appeal_store(store_target)
    mark_pending(store_target, run_id, PENDING)
    with TeamStore(store_target) as team:
        yield team, run_id


def test_a_pending_verdict_has_no_official_score_until_an_audit_settles_it(run):
    team, run_id = run
    scores = OfficialScores.load(team.conn, run_id)
    assert scores.n_pending(RUBRIC) == 3 and scores.is_pending("c000", RUBRIC)
    assert official(team, run_id, "c000") is None and official(team, run_id, "c001") == 4.0
    frame = official_frame(team.conn, run_id)
    row = frame[(frame.sample_id == "c000") & (frame.scorer == RUBRIC)].iloc[0]
    assert (row.machine_score, row.official_score, row.decided_by) == (2.0, None, "pending_review")
    # the judge's view keeps every score
    assert OfficialScores.load(team.conn, run_id, machine_only=True).score("c000", RUBRIC, 2.0) == 2.0
    override(team, run_id, 2, sample="c000")            # the expert agrees with the judge: settled, it counts
    assert official(team, run_id, "c000") == 2.0
    assert OfficialScores.load(team.conn, run_id).n_pending(RUBRIC) == 2


def test_appeals_of_pending_verdicts(run):
    team, run_id = run
    appeals = Appeals(team, clock=Clock(team.audit.runs.run_info(run_id).created_at))
    shown = {v.sample_id: v for v in appeals.agent_verdicts(run_id, "agent_wang") if v.scorer == RUBRIC}
    assert shown["c000"].official_score is None and shown["c000"].machine_score == 2.0
    # the whole verdict appealed and rejected: the reviewer found the judge right, its score is now official
    a = appeals.submit(run_id, "c000", RUBRIC, agent="agent_wang", role="agent", reason="打分太低")
    assert a.official_before is None
    assert appeals.decide(a.appeal_id, reviewer="qa_zhang", role="expert", outcome="rejected", reason="判得对",
                          expected_version=a.version).ok
    assert official(team, run_id, "c000") == 2.0
    assert human_decisions(team.conn, run_id)[("c000", RUBRIC)].source == "appeal"
    # one deduction appealed and rejected: only that deduction was decided, the verdict still waits
    b = appeals.submit(run_id, "c004", RUBRIC, agent="agent_wang", role="agent", reason="没有包邮", item=CHECK)
    assert appeals.decide(b.appeal_id, reviewer="qa_zhang", role="expert", outcome="rejected", reason="承诺了",
                          expected_version=b.version).ok
    assert official(team, run_id, "c004") is None
    # ... and accepted: the score without that deduction, settled
    c = appeals.submit(run_id, "c002", RUBRIC, agent="agent_wang", role="agent", reason="整体偏低")
    assert appeals.decide(c.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted", reason="同意",
                          score=3, expected_version=c.version).ok
    assert official(team, run_id, "c002") == 3.0
    assert OfficialScores.load(team.conn, run_id).n_pending(RUBRIC) == 1
    # a verdict that is not pending: a rejected appeal still decides nothing
    d = appeals.submit(run_id, "c001", RUBRIC, agent="agent_li", role="agent", reason="打分太低")
    assert appeals.decide(d.appeal_id, reviewer="qa_zhang", role="expert", outcome="rejected", reason="判得对",
                          expected_version=d.version).ok
    assert official(team, run_id, "c001") == 4.0
    assert ("c001", RUBRIC) not in human_decisions(team.conn, run_id)


def test_the_audit_queue_lists_the_pending_verdicts_not_audited_yet(run):
    from rubriceval.store.audit_models import QueueFilter

    team, run_id = run
    waiting = team.audit.queue(run_id, QueueFilter(status="pending_review"))
    assert sorted(r.sample_id for r in waiting) == list(PENDING)
    override(team, run_id, 2, sample="c000")            # audited: settled, out of the list
    waiting = team.audit.queue(run_id, QueueFilter(status="pending_review"))
    assert sorted(r.sample_id for r in waiting) == ["c002", "c004"]
