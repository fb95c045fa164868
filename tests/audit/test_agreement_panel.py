"""The audit app's agreement panel takes the one path `rubriceval agree`, calibration and the trust gate take
(rubriceval.trust.human_scores): each audited item once, its human score the lead's adjudicated label, else the
experts' consensus — not one pair per expert response."""
from __future__ import annotations

from pathlib import Path

from rubriceval import AuditStore
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import adjudicate
from rubriceval.store.team_models import TaskSpec
from rubriceval.trust.human_scores import agreement_for_rubric
from rubriceval.ui.audit import agreement_panel
from tests.helpers.team_store import build_team_store


def test_panel_counts_items_once_and_uses_the_adjudicated_label(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    build_team_store(path, n_samples=40, seed=5, metrics=False)
    with TeamStore(path) as team:
        task = team.create_task(TaskSpec(run="team-run", rubrics=["soothing"], n=4, overlap=2,
                                         experts=["ann", "bob"]), created_by="lead")
        disputed, agreed = team.queue(task.task_id, "ann").rows[:2]
        team.save_review(task.task_id, disputed.item_no, "ann", score=1, note="生硬", expected_version=0)
        team.save_review(task.task_id, disputed.item_no, "bob", score=5, expected_version=0)
        adjudicate(team, task.task_id, disputed.item_no, "lead", label=4, reason="bob is right", expected_version=0)
        team.save_review(task.task_id, agreed.item_no, "ann", score=3, expected_version=0)
        team.save_review(task.task_id, agreed.item_no, "bob", score=3, expected_version=0)
        run_id = task.run_id
    with AuditStore(path) as store:
        judge = {v.sample_id: v.score for v in store.runs.verdicts(run_id) if v.scorer == "soothing"}
        [result] = agreement_panel.compute(store, "team-run")
    cli = agreement_for_rubric(path, "soothing", run="team-run", save=False, n_boot=agreement_panel.N_BOOT)

    assert result.scorer == "soothing" and result.report.n == 2          # two items, not four responses
    assert result.n_multi_expert_items == 2
    assert {item.key: item.human_score for item in result.items} == {disputed.sample_id: 4, agreed.sample_id: 3}
    assert result.report.exact.value == cli.exact.value and result.report.n == cli.n
    assert result.report.kappa_quadratic.value == cli.kappa_quadratic.value
    expected_exact = sum(judge[s] == h for s, h in ((disputed.sample_id, 4), (agreed.sample_id, 3))) / 2
    assert result.report.exact.value == expected_exact
    row = agreement_panel.summary_frame([result]).iloc[0]
    assert row["items"] == 2 and row["items ≥2 experts"] == 2
    worst = agreement_panel.worst_frame(result)
    assert set(worst["sample"]) == {s for s, h in ((disputed.sample_id, 4), (agreed.sample_id, 3)) if judge[s] != h}
    assert judge[disputed.sample_id] != 4                                 # seed 5: the disputed item is a worst one
    assert worst.set_index("sample").loc[disputed.sample_id, "human"] == 4   # the lead's label, not median_low(1, 5)
    assert worst.set_index("sample").loc[disputed.sample_id, "reasons"] == "ann: 生硬"
