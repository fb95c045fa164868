"""`rubriceval report` shows the experts' failure tags (team audits) in the HTML, Markdown and Excel outputs of a run
that has some, and nothing of the kind for a run without."""
from __future__ import annotations

from pathlib import Path

from openpyxl import load_workbook

from rubriceval.audit.team import TeamStore
from rubriceval.cli import main
from rubriceval.store.team_models import TaskSpec
from tests.helpers.team_store import build_team_store


def _report(store: Path, run: str, out: Path) -> tuple[str, str, list[str], list[tuple]]:
    assert main(["report", run, "--store", str(store), "--out", str(out), "--lang", "en"]) == 0
    workbook = load_workbook(out / f"{run}.xlsx")
    rows = list(workbook["failure_tags"].iter_rows(values_only=True)) if "failure_tags" in workbook.sheetnames else []
    return ((out / f"{run}.html").read_text(encoding="utf-8"), (out / f"{run}.md").read_text(encoding="utf-8"),
            workbook.sheetnames, rows)


def test_report_shows_failure_tags_only_for_a_run_with_tagged_audits(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    build_team_store(store, n_samples=10, seed=2, run_name="tagged", metrics=False)
    build_team_store(store, n_samples=10, seed=3, run_name="untagged", metrics=False)
    with TeamStore(store) as team:
        task = team.create_task(TaskSpec(run="tagged", rubrics=["soothing"], n=4, overlap=1, experts=["ann"]),
                                created_by="lead")
        rows = team.queue(task.task_id, "ann").rows
        team.save_review(task.task_id, rows[0].item_no, "ann", score=2, tags=["未先安抚", "编造政策"],
                         expected_version=0)
        team.save_review(task.task_id, rows[1].item_no, "ann", score=2, tags=["未先安抚"], expected_version=0)
        team.save_review(task.task_id, rows[2].item_no, "ann", score=5, expected_version=0)
        # An untagged review in the other run: reviewed, but no tag ticked — still no section.
        other = team.create_task(TaskSpec(run="untagged", rubrics=["soothing"], n=2, overlap=1, experts=["ann"]),
                                 created_by="lead")
        team.save_review(other.task_id, team.queue(other.task_id, "ann").rows[0].item_no, "ann", score=4,
                         expected_version=0)

    html, md, sheets, tag_rows = _report(store, "tagged", tmp_path / "a")
    assert '<section class="failure-tags">' in html and "<td>未先安抚</td>" in html and "Failure tags" in html
    assert "## Failure tags (ticked by experts)" in md
    assert "| soothing | 未先安抚 | 2 | 67% |" in md and "| soothing | 编造政策 | 1 | 33% |" in md
    assert "failure_tags" in sheets
    overall = {(r[0], r[1]): (r[3], r[4]) for r in tag_rows[1:] if not r[2]}
    assert overall == {("soothing", "未先安抚"): (2, 0.6667), ("soothing", "编造政策"): (1, 0.3333)}

    html, md, sheets, tag_rows = _report(store, "untagged", tmp_path / "b")
    assert "failure-tags" not in html and "Failure tags" not in html
    assert "Failure tags" not in md and "failure_tags" not in sheets
