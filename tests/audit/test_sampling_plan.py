"""Sampling plans for human review: N or p % per segment per period with a minimum, counts per stratum,
inverse-probability weights N_h/n_h, risk-first additions kept apart, weighted estimates that recover the run's
rate where the unweighted sample is biased, the CLI, and plan errors."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from rubriceval import evaluate
from rubriceval.audit.plan import allocation, parse_plan
from rubriceval.audit.plan_estimate import STATEMENT, plan_estimates
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_plan import plan_rows
from rubriceval.cli import main
from rubriceval.store.team_models import TaskSpec, TeamError
from tests.qa_week_data import APOLOGY, conversation, write_jsonl

W46 = datetime(2026, 11, 9, 2, tzinfo=timezone.utc)
# agent → (conversations in W46, in W47, share that apologise): a big good agent and a small bad one
AGENTS = {"big": (40, 40, 1.0), "small": (5, 5, 0.0)}


def _records() -> list[dict]:
    records = []
    for agent, (w46, w47, good) in AGENTS.items():
        for week, n in ((0, w46), (1, w47)):
            for i in range(n):
                records.append(conversation(f"{agent}-{week}-{i}", agent=agent, group="售后",
                                            start=W46 + timedelta(weeks=week, hours=i), good=good > 0))
    return records


@pytest.fixture()
def run(tmp_path) -> tuple[Path, str]:
    data = write_jsonl(tmp_path / "weeks.jsonl", _records())
    result = evaluate(str(data), rubrics=[APOLOGY], store=tmp_path / "runs.sqlite", progress=False, name="weeks")
    return tmp_path / "runs.sqlite", result.run_id


def test_parse_plan_and_allocation():
    plan = parse_plan("5% per agent_id per week, min 3", risk=["fatal"])
    assert (plan.share, plan.per, plan.period, plan.at_least, plan.risk) == (0.05, ["agent_id"], "week", 3, ["fatal"])
    assert parse_plan("10 per agent_id,skill_group").per == ["agent_id", "skill_group"]
    assert parse_plan("20%").per == [] and parse_plan("20%").share == 0.2
    assert allocation(40, plan) == 3 and allocation(100, plan) == 5 and allocation(2, plan) == 2
    assert allocation(41, parse_plan("10%")) == 5                           # ceil(4.1)
    with pytest.raises(TeamError, match=r"\[plan\]"):
        parse_plan("some of them")
    with pytest.raises(TeamError, match=r"\[plan\]"):
        parse_plan("5% of agent_id")
    with pytest.raises(TeamError, match=r"\[risk\]"):
        parse_plan("5%", risk=["gut_feeling"])


def test_plan_counts_per_stratum_weights_and_risk_additions_apart(run):
    path, run_id = run
    plan = parse_plan("10% per agent_id per week, min 3", risk=["fatal"]).model_dump()
    with TeamStore(path) as team:
        info = team.create_task(TaskSpec(run=run_id, rubrics=["apology"], overlap=1, experts=["ann"], plan=plan),
                                created_by="lead")
        rows = list(plan_rows(team, info.task_id).values())
    random_part = [r for r in rows if r["selection"] == "random"]
    counts = {}
    for r in random_part:
        counts[r["stratum"]] = counts.get(r["stratum"], 0) + 1
    # big: ceil(10% of 40) = 4 per week; small: 10% of 5 rounds up to 1, at least 3
    assert counts == {"big|2026-W46": 4, "big|2026-W47": 4, "small|2026-W46": 3, "small|2026-W47": 3}
    weights = {r["stratum"]: r["weight"] for r in random_part}
    assert weights == {"big|2026-W46": 10.0, "big|2026-W47": 10.0, "small|2026-W46": 5 / 3, "small|2026-W47": 5 / 3}
    assert sum(r["weight"] for r in random_part) == pytest.approx(90)     # the weights stand for every verdict
    risk = [r for r in rows if r["selection"] != "random"]
    # every small-agent conversation misses the must item (fatal): the 4 not drawn at random come on top, apart
    assert len(risk) == 4 and all(r["selection"] == "risk:fatal" and r["weight"] is None for r in risk)
    assert info.n_items == 14 + 4


def test_weighted_estimates_recover_the_run_rate_and_risk_stays_apart(run):
    path, run_id = run
    plan = parse_plan("10% per agent_id per week, min 3", risk=["fatal"]).model_dump()
    with TeamStore(path) as team:
        info = team.create_task(TaskSpec(run=run_id, rubrics=["apology"], overlap=1, experts=["ann"], plan=plan),
                                created_by="lead")
        judged = team.query("SELECT item_no, judge_score FROM team_task_items WHERE task_id = :t", {"t": info.task_id})
        for item_no, judge_score in judged:                                 # the expert agrees with the judge
            current = team.assignment(info.task_id, item_no, "ann")
            team.save_review(info.task_id, item_no, "ann", score=int(judge_score), expected_version=current.version)
        [estimate] = plan_estimates(team, info.task_id)
    # the run: 80 of 90 conversations pass; the random sample is 8 of 14 passing (small agent over-sampled)
    assert estimate.expert_pass_rate.weighted == pytest.approx(80 / 90)
    assert estimate.expert_pass_rate.unweighted == pytest.approx(8 / 14)
    assert estimate.exact_agreement.weighted == 1.0 and estimate.population == pytest.approx(90)
    assert (estimate.n_risk, estimate.n_risk_reviewed, estimate.risk_by_kind) == (4, 4, {"fatal": 4})
    assert "not in the estimates" in STATEMENT


def test_cli_plan_and_estimate(run, capsys):
    path, run_id = run
    assert main(["audit-task", "create", run_id, "--rubrics", "apology", "--experts", "ann", "--overlap", "1",
                 "--plan", "10% per agent_id per week, min 3", "--risk", "fatal", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "random part: 14 items in 4 strata" in out and "risk-first additions: 4" in out
    task = out.split("task ", 1)[1].split(" ", 1)[0]
    assert main(["audit-task", "estimate", task, "--store", str(path)]) == 0
    assert "Risk-first additions are shown apart" in capsys.readouterr().out
    assert main(["audit-task", "create", run_id, "--rubrics", "apology", "--experts", "ann",
                 "--store", str(path)]) == 2                                  # neither --n nor --plan
    assert main(["audit-task", "create", run_id, "--rubrics", "apology", "--experts", "ann", "--overlap", "1",
                 "--plan", "10% per nobody", "--store", str(path)]) == 0        # every sample in '(none)'


def test_reviewers_who_disagreed_with_the_judge_make_a_risk_first_addition(run):
    path, run_id = run
    with TeamStore(path) as team:
        first = team.create_task(TaskSpec(run=run_id, rubrics=["apology"], n=3, overlap=1, experts=["ann"]),
                                 created_by="lead")
        items = team.query("SELECT item_no, sample_id, judge_score FROM team_task_items WHERE task_id = :t",
                           {"t": first.task_id})
        item_no, sample_id, judge_score = items[0]
        current = team.assignment(first.task_id, item_no, "ann")        # 2 levels or more from the judge
        team.save_review(first.task_id, item_no, "ann", score=3 if judge_score >= 4 else 5,
                         expected_version=current.version)
        plan = parse_plan("1 per skill_group", risk=["disagreement"]).model_dump()
        second = team.create_task(TaskSpec(run=run_id, rubrics=["apology"], overlap=1, experts=["bob"], plan=plan,
                                           name="second"), created_by="lead")
        rows = plan_rows(team, second.task_id)
        chosen = team.query("SELECT item_no, sample_id FROM team_task_items WHERE task_id = :t", {"t": second.task_id})
    risk = {s for no, s in chosen if rows[no]["selection"] == "risk:disagreement"}
    random_part = {s for no, s in chosen if rows[no]["selection"] == "random"}
    assert sample_id in risk | random_part and len(random_part) == 1
    assert risk == ({sample_id} - random_part)
