"""Calibration sessions (校准会): a lead picks verdicts with benchmark labels (their own, or an adjudicated one),
reviewers grade blind, and the report gives each reviewer's agreement with the benchmark and with each other — and
no official score moves. SQLite and PostgreSQL."""
from __future__ import annotations

import pytest

from rubriceval.audit.calibration import Calibration, CalibrationPick
from rubriceval.audit.official import official_frame
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import adjudicate, item_version
from rubriceval.store.team_models import TaskSpec, TeamError
from tests.helpers.appeal_store import RUBRIC, build_appeal_store

BENCHMARK = [5, 2, 4, 4, 3, 5, 1, 4]
ZHANG = [5, 2, 4, 4, 3, 5, 1, 4]           # agrees with the benchmark on every item
ZHAO = [4, 3, 4, 2, 3, 5, 2, 5]            # agrees on 3 of 8


@pytest.fixture()
def session(store_target):
    run_id = build_appeal_store(store_target, n=10)
    with TeamStore(store_target) as team:
        # c009's benchmark is the lead's adjudicated label.
        task = team.create_task(TaskSpec(run=run_id, rubrics=[RUBRIC], n=10, overlap=1, experts=["qa_zhang"]),
                                "lead_chen")
        item = next(r.item_no for r in team.queue(task.task_id, "qa_zhang", as_lead=True).rows
                    if r.sample_id == "c009")
        assert adjudicate(team, task.task_id, item, "lead_chen", label=3, reason="标杆",
                          expected_version=item_version(team, task.task_id, item)).ok
        before = official_frame(team.conn, run_id)
        calibration = Calibration(team)
        picks = [CalibrationPick(run=run_id, sample_id=f"c{i:03d}", scorer=RUBRIC, benchmark=b)
                 for i, b in enumerate(BENCHMARK)]
        picks.append(CalibrationPick(run=run_id, sample_id="c009", scorer=RUBRIC))
        created = calibration.create("2026-W49 校准会", lead="lead_chen", role="lead",
                                     reviewers=["qa_zhang", "qa_zhao"], picks=picks)
        yield team, calibration, created, run_id, before


def test_session_reports_agreement_and_leaves_official_scores_untouched(session):
    team, calibration, created, run_id, before = session
    for reviewer, grades in (("qa_zhang", ZHANG + [3]), ("qa_zhao", ZHAO + [3])):
        for no, score in enumerate(grades, start=1):
            calibration.grade(created.session_id, no, reviewer=reviewer, score=score)
    report = calibration.report(created.name, n_boot=50)
    by = {r.reviewer: r for r in report.reviewers}
    assert by["qa_zhang"].n_graded == 9 and by["qa_zhang"].agreement.exact.value == 1.0
    assert by["qa_zhao"].agreement.exact.value == pytest.approx(4 / 9)
    assert by["qa_zhang"].agreement.kappa_quadratic.value == pytest.approx(1.0)
    assert by["qa_zhao"].agreement.kappa_quadratic.value < 0.9
    assert report.pairs[0].n == 9 and report.pairs[0].kappa.value is not None
    assert report.alpha.value is not None and report.alpha.value < 1
    assert report.items[8].benchmark == 3                       # c009: the adjudicated label
    assert report.items[0].share_correct == 0.5 and report.items[2].share_correct == 1.0
    # Nothing official moved: the same rows, the same scores, the same deciders.
    assert official_frame(team.conn, run_id).equals(before)
    rows = calibration.alignment()
    assert [(r["reviewer"], r["exact"]) for r in rows] == [("qa_zhang", 1.0), ("qa_zhao", pytest.approx(4 / 9))]


def test_only_leads_create_reviewers_grade_their_own_blind(session):
    team, calibration, created, run_id, _ = session
    with pytest.raises(TeamError, match="only a lead"):
        calibration.create("x", lead="qa_zhang", role="expert", reviewers=["qa_zhao"],
                           picks=[CalibrationPick(run=run_id, sample_id="c000", scorer=RUBRIC, benchmark=3)])
    with pytest.raises(TeamError, match="adjudicate"):
        calibration.create("y", lead="lead_chen", role="lead", reviewers=["qa_zhao"],
                           picks=[CalibrationPick(run=run_id, sample_id="c001", scorer=RUBRIC)])
    with pytest.raises(TeamError, match="not a reviewer"):
        calibration.grade(created.session_id, 1, reviewer="agent_wang", score=3)
    calibration.grade(created.session_id, 1, reviewer="qa_zhao", score=2)
    calibration.grade(created.session_id, 1, reviewer="qa_zhao", score=4)   # a second thought: the latest counts
    assert calibration.my_grades(created.session_id, "qa_zhao") == {1: 4}
    assert calibration.my_grades(created.session_id, "qa_zhang") == {}
    with pytest.raises(Exception, match="append-only"):
        with team.writing() as conn:
            conn.execute("DELETE FROM calibration_grades")
