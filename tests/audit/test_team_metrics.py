"""Faithfulness and context-precision verdicts corrected per statement / per context, and the metric's agreement
computed from those corrections."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval.audit.metric_agreement import metric_agreement
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_metrics import judge_elements, metric_elements, metric_labels, save_metric_review
from rubriceval.store.team_models import TeamError
from tests.helpers.team_store import build_team_store


@pytest.fixture()
def team(store_target: str | Path):
    build_team_store(store_target, n_samples=10, seed=2)       # SQLite, then PostgreSQL
    with TeamStore(store_target) as store:
        yield store


def test_statement_corrections_count_in_faithfulness_agreement(team: TeamStore) -> None:
    run = team.audit.resolve("team-run")
    judged = judge_elements(team, run, "s000001", "faithfulness")
    assert [text for text, _ in judged] == ["包裹正在派送中", "客服已经致歉", "预计明天送达"]
    agree_all = {i: v for i, (_, v) in enumerate(judged)}
    with pytest.raises(TeamError, match="reason is required"):
        save_metric_review(team, run, "s000001", "faithfulness", expert="ann", verdicts={0: not judged[0][1]})
    assert save_metric_review(team, run, "s000001", "faithfulness", expert="ann", verdicts=agree_all) == 0
    flipped = {**agree_all, 2: not judged[2][1]}
    assert save_metric_review(team, run, "s000001", "faithfulness", expert="ann", verdicts=flipped,
                              reason="回答里没有送达时间的依据") == 1
    # The latest review is the expert's label; the first is kept in the table.
    labels = metric_labels(team, run, "faithfulness")
    assert len(labels) == 3 and {label.element: label.verdict for label in labels}[2] == (not judged[2][1])
    assert team.query("SELECT COUNT(*) FROM team_metric_corrections")[0][0] == 6
    assert [e.expert for e in metric_elements(team, run, "s000001", "faithfulness", "ann")] == list(flipped.values())
    report = metric_agreement(team, run, "faithfulness", n_boot=50)
    assert report.elements.n == 3 and report.elements.accuracy.value == pytest.approx(2 / 3)
    judge_score, corrected = report.corrected["s000001"]
    assert judge_score == pytest.approx(sum(v for _, v in judged) / 3)
    assert corrected == pytest.approx(sum(flipped.values()) / 3)
    assert report.mean_abs_change == pytest.approx(1 / 3)
    assert "expert corrections" in report.summary()


def test_context_relevance_corrections_recompute_average_precision(team: TeamStore) -> None:
    run = team.audit.resolve("team-run")
    judged = judge_elements(team, run, "s000003", "context_precision")
    assert judged[0][0].startswith("订单延迟时") and len(judged) == 2
    save_metric_review(team, run, "s000003", "context_precision", expert="bob", verdicts={0: False, 1: True},
                       reason="第二段才是相关资料")
    report = metric_agreement(team, run, "context_precision", n_boot=20)
    assert report.corrected["s000003"][1] == pytest.approx(0.5)          # AP of [0, 1]
    with pytest.raises(TeamError, match="no per-statement"):
        save_metric_review(team, run, "s000003", "answer_relevancy", expert="bob", verdicts={0: True})
    with pytest.raises(TeamError, match="has 2 contexts"):
        save_metric_review(team, run, "s000003", "context_precision", expert="bob", verdicts={5: True})


def test_failure_tags_are_counted_per_rubric_and_per_tag_and_intent(team: TeamStore) -> None:
    from rubriceval.report.failure_tags import failure_tag_report, failure_tags_html, failure_tags_markdown
    from rubriceval.store.team_models import TaskSpec

    task = team.create_task(TaskSpec(run="team-run", rubrics=["soothing"], n=6, overlap=2, experts=["ann", "bob"]),
                            created_by="lead")
    rows = team.queue(task.task_id, "ann").rows
    team.save_review(task.task_id, rows[0].item_no, "ann", score=2, tags=["未先安抚", "编造政策"], expected_version=0)
    team.save_review(task.task_id, rows[0].item_no, "bob", score=2, tags=["未先安抚"], expected_version=0)
    team.save_review(task.task_id, rows[1].item_no, "ann", score=3, tags=["未先安抚"], expected_version=0)
    team.save_review(task.task_id, rows[2].item_no, "ann", score=5, expected_version=0)
    report = failure_tag_report(team.path, "team-run")
    counts = {(c.scorer, c.failure_tag): (c.items, c.reviewed) for c in report.counts}
    assert counts == {("soothing", "未先安抚"): (2, 3), ("soothing", "编造政策"): (1, 3)}   # two experts, one item
    samples = team.queue(task.task_id, "ann").rows
    first = next(s for s in team.candidates(task.run_id, "soothing", with_spread=False)
                 if s.sample_id == samples[0].sample_id)
    groups = {(g.failure_tag, g.group_kind, g.group): g.items for g in report.groups}
    assert groups[("编造政策", "intent", first.intent)] == 1 and groups[("编造政策", "tag", first.tags[0])] == 1
    markdown = failure_tags_markdown(report, "zh")
    assert "失败原因" in markdown and "| soothing | 未先安抚 | 2 | 67% |" in markdown
    assert "<td>未先安抚</td>" in failure_tags_html(report, "en")
