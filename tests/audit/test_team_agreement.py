"""Agreement and calibration read the adjudicated label (one function: AuditedItem.human_score) and say whether the
human labels came from blind or open review."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval import AuditStore
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import adjudicate
from rubriceval.store.team_models import TaskSpec
from rubriceval.trust.human_scores import agreement_for_rubric, audited_items
from tests.helpers.team_store import build_team_store


@pytest.fixture()
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "runs.sqlite"
    build_team_store(path, n_samples=60, seed=5, metrics=False)
    return path


def test_adjudicated_labels_feed_agreement_and_the_review_mode_is_reported(store_path: Path) -> None:
    with TeamStore(store_path) as team:
        task = team.create_task(TaskSpec(run="team-run", rubrics=["soothing"], n=6, overlap=2,
                                         experts=["ann", "bob"]), created_by="lead")
        rows = [r for r in team.queue(task.task_id, "ann").rows]
        disputed, agreed, unsure = rows[0], rows[1], rows[2]
        team.save_review(task.task_id, disputed.item_no, "ann", score=1, expected_version=0)
        team.save_review(task.task_id, disputed.item_no, "bob", score=5, expected_version=0)
        adjudicate(team, task.task_id, disputed.item_no, "lead", label=4, reason="bob is right", expected_version=0)
        team.save_review(task.task_id, agreed.item_no, "ann", score=3, expected_version=0)
        team.save_review(task.task_id, agreed.item_no, "bob", score=3, expected_version=0)
        team.mark_unsure(task.task_id, unsure.item_no, "ann", note="?", expected_version=0)
        team.mark_unsure(task.task_id, unsure.item_no, "bob", note="??", expected_version=0)
        adjudicate(team, task.task_id, unsure.item_no, "lead", label=2, reason="policy says so", expected_version=0)
        run_id = task.run_id
    # One more item audited in the open app: open review.
    with AuditStore(store_path) as audit:
        other = next(v for v in audit.runs.verdicts(run_id) if v.scorer == "soothing" and v.score is not None
                     and v.sample_id not in {disputed.sample_id, agreed.sample_id, unsure.sample_id})
        audit.save_response(run_id, other.sample_id, "soothing", expert="carl", score=int(other.score),
                            expected=audit.item(run_id, other.sample_id, "soothing").versions)
    audited = audited_items(store_path, "soothing")
    by_id = {item.key: item for item in audited.items}
    assert by_id[disputed.sample_id].human_score == 4                  # the lead's label, not median_low(1, 5) = 1
    assert by_id[disputed.sample_id].expert_scores == {"ann": 1, "bob": 5}
    assert by_id[unsure.sample_id].human_score == 2 and by_id[unsure.sample_id].expert_scores == {}
    assert by_id[agreed.sample_id].human_score == 3 and by_id[agreed.sample_id].blind
    assert not by_id[other.sample_id].blind
    assert audited.review_counts() == {"blind": 2, "open": 2, "adjudicated": 2}
    report = agreement_for_rubric(store_path, "soothing", save=False, n_boot=50)
    assert report.n == 4 and report.review == {"blind": 2, "open": 2, "adjudicated": 2}
    assert "blind review: 2 of 4 items, 2 open; 2 adjudicated by a lead" in report.summary()
