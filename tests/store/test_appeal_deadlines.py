"""Appeal deadlines per audit task (issue 27.2), on SQLite and PostgreSQL: a task's deadline applies to the verdicts of
its samples whether shorter or longer than the run's window, a sample in no task keeps the run's, the newest task
wins; a lead sets and changes it (CLI `audit-task create --appeal-days`, `appeals window --task`); the refusal names
the deadline; `appeals list` and the agent's view show it; an old store gains the column by migration step 5.

In the fixture run (8 conversations), sampling "lowest" with n=2 takes c000 and c004 (score 2, agent_wang's);
c002 (agent_wang's too) is in no task."""
from __future__ import annotations

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import pytest  # noqa: E402

from rubriceval.audit.appeals import Appeals  # noqa: E402
from rubriceval.audit.team import TeamStore  # noqa: E402
from rubriceval.cli import main  # noqa: E402
from rubriceval.data.sample import Sample  # noqa: E402
from rubriceval.store.appeal_models import DAY_S, AgentVerdict, AppealError  # noqa: E402
from rubriceval.store.audit_models import iso_time  # noqa: E402
from rubriceval.store.migrations import schema_version  # noqa: E402
from rubriceval.store.runs import RunStore  # noqa: E402
from rubriceval.store.team_models import TaskSpec  # noqa: E402
from rubriceval.ui.team.appeals_views import verdict_html  # noqa: E402
from tests.helpers.appeal_store import CHECK, RUBRIC, build_appeal_store  # noqa: E402

IN_TASK, NO_TASK = ("c000", "c004"), "c002"


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def run(store_target):
    run_id = build_appeal_store(store_target)
    with TeamStore(store_target) as team:
        yield team, run_id


def make_task(team: TeamStore, run_id: str, name: str, appeal_days: float | None):
    task = team.create_task(TaskSpec(run=run_id, rubrics=[RUBRIC], n=2, overlap=1, experts=["qa_zhang"],
                                     sampling="lowest", name=name, appeal_days=appeal_days), "lead_chen")
    assert {r.sample_id for r in team.queue(task.task_id, "qa_zhang", as_lead=True).rows} == set(IN_TASK)
    return task


def appeal(appeals: Appeals, run_id: str, sample: str):
    return appeals.submit(run_id, sample, RUBRIC, agent="agent_wang", role="agent", reason="没有承诺包邮",
                          item=CHECK if sample in IN_TASK else "")


def test_a_task_deadline_shorter_than_the_runs_refuses_its_samples_only(run):
    team, run_id = run
    task = make_task(team, run_id, "W49-短", appeal_days=1)
    assert team.task(task.task_id).appeal_days == 1
    clock = Clock(team.audit.runs.run_info(run_id).created_at + 2 * DAY_S)   # run window (7 days) still open
    appeals = Appeals(team, clock=clock)
    with pytest.raises(AppealError) as refused:
        appeal(appeals, run_id, "c000")
    assert refused.value.field == "deadline"
    assert "task 'W49-短' closed at" in str(refused.value) and "(1 day after the task was created)" in str(refused.value)
    assert appeal(appeals, run_id, NO_TASK).state == "submitted"            # in no task: the run's window
    assert [a.sample_id for a in appeals.list()] == [NO_TASK]


def test_a_task_deadline_longer_than_the_runs_allows(run):
    team, run_id = run
    appeals = Appeals(team, clock=Clock(0))
    appeals.set_window(run_id, days=1, by="lead_chen")
    task = make_task(team, run_id, "W49-长", appeal_days=30)
    appeals.clock = Clock(task.created_at + 10 * DAY_S)
    assert appeal(appeals, run_id, "c004").state == "submitted"
    with pytest.raises(AppealError, match="appeals on this run closed at"):
        appeal(appeals, run_id, NO_TASK)
    # What the agent's list says for each: the task's deadline and days left, or the run's.
    mine = {v.sample_id: v for v in appeals.agent_verdicts(run_id, "agent_wang")}
    assert mine["c004"].appeal_deadline_task == "W49-长"
    assert mine["c004"].appeal_closes_at == pytest.approx(task.created_at + 30 * DAY_S)
    assert mine["c004"].appeal_days_left == pytest.approx(20)
    assert mine[NO_TASK].appeal_deadline_task == "" and mine[NO_TASK].appeal_days_left < 0
    assert mine[NO_TASK].appeal_closes_at == pytest.approx(team.audit.runs.run_info(run_id).created_at + DAY_S)


def test_a_sample_in_no_task_or_a_task_without_deadline_keeps_the_runs(run):
    team, run_id = run
    make_task(team, run_id, "无期限", appeal_days=None)
    appeals = Appeals(team, clock=Clock(0))
    run_closes = appeals.closes_at(run_id)
    assert appeals.deadline(run_id, "c000").closes_at == run_closes and appeals.deadline(run_id, "c000").task == ""
    assert appeals.deadline(run_id, NO_TASK).closes_at == run_closes
    appeals.clock = Clock(run_closes + 1)
    with pytest.raises(AppealError, match="this run closed"):
        appeal(appeals, run_id, "c000")


def test_a_lead_changes_a_task_deadline_the_newest_task_wins_and_every_setting_is_logged(run):
    team, run_id = run
    old = make_task(team, run_id, "旧任务", appeal_days=3)
    new = make_task(team, run_id, "新任务", appeal_days=10)
    appeals = Appeals(team, clock=Clock(0))
    assert appeals.deadline(run_id, "c000").task == "新任务"                   # the newest task's word
    assert appeals.deadlines(run_id).of("c004").closes_at == pytest.approx(new.created_at + 10 * DAY_S)
    changed = appeals.set_task_window("新任务", days=0.5, by="lead_chen")
    assert changed is not None and changed.closes_at == pytest.approx(new.created_at + 0.5 * DAY_S)
    appeals.clock = Clock(new.created_at + DAY_S)
    with pytest.raises(AppealError, match="task '新任务' closed"):
        appeal(appeals, run_id, "c000")
    assert appeals.set_task_window("新任务", days=None, by="lead_chen") is None    # cleared: the older task's again
    assert appeals.deadline(run_id, "c000").closes_at == pytest.approx(old.created_at + 3 * DAY_S)
    assert appeal(appeals, run_id, "c000").state == "submitted"
    with pytest.raises(AppealError, match="0 or more"):
        appeals.set_task_window("旧任务", days=-1, by="lead_chen")
    logged = [(e.expert, e.payload["task"], e.payload["days"]) for e in team.audit.audit_log(run_id)
              if e.action == "appeal_task_deadline"]
    assert logged == [("lead_chen", "新任务", 0.5), ("lead_chen", "新任务", None)]


def test_cli_creates_a_task_with_appeal_days_lists_and_changes_the_deadline(store_target, capsys):
    run_id = build_appeal_store(store_target)
    store = ["--store", str(store_target)]
    assert main(["audit-task", "create", run_id, "--rubrics", RUBRIC, "--n", "2", "--overlap", "1", "--experts",
                 "qa_zhang", "--sampling", "lowest", "--name", "W49", "--appeal-days", "1", *store]) == 0
    assert "close 1 day(s) after the task was created" in capsys.readouterr().out
    with TeamStore(store_target) as team:
        appeals = Appeals(team)
        for sample in ("c000", NO_TASK):
            appeal(appeals, run_id, sample)
    assert main(["appeals", "list", *store]) == 0
    listed = {line.split()[2]: line for line in capsys.readouterr().out.splitlines() if line.split()[:1]
              and len(line.split()) > 3 and line.split()[2] in ("c000", NO_TASK)}
    assert "(under a day left, task W49)" in listed["c000"] and "(6 days left, run)" in listed[NO_TASK]
    assert main(["appeals", "window", "--task", "W49", "--days", "30", "--by", "lead_chen", *store]) == 0
    assert "appeals on the verdicts of task W49's samples are taken until" in capsys.readouterr().out
    assert main(["appeals", "list", *store]) == 0
    assert "(29 days left, task W49)" in capsys.readouterr().out
    assert main(["appeals", "window", "--task", "W49", "--clear", "--by", "lead_chen", *store]) == 0
    assert "the run's window applies" in capsys.readouterr().out
    assert main(["appeals", "list", *store]) == 0
    assert "task W49" not in capsys.readouterr().out
    assert main(["appeals", "window", "--task", "W49", *store, "--by", "x"]) != 0            # no --days: refused
    assert "--days" in capsys.readouterr().err


def test_an_old_store_gains_the_task_deadline_column(store_target):
    run_id = build_appeal_store(store_target)
    with TeamStore(store_target) as team:
        task = make_task(team, run_id, "升级前", appeal_days=None)
        with team.writing() as conn:              # as a version-4 store had it: no appeal_days column
            conn.execute("ALTER TABLE team_tasks DROP COLUMN appeal_days")
            conn.set_schema_version(4)
    store = RunStore(store_target)                # opening it upgrades it
    assert schema_version(store.conn) >= 5
    store.close()
    with TeamStore(store_target) as team:
        assert team.task(task.task_id).appeal_days is None                # the task kept, the run's window applies
        assert Appeals(team).set_task_window(task.task_id, days=2, by="lead_chen") is not None
        assert team.task(task.task_id).appeal_days == 2


def test_the_verdict_view_says_the_deadline_in_the_pages_language_and_escapes_the_task_name():
    def mine(task: str, left: float | None) -> AgentVerdict:
        return AgentVerdict(run_id="r", sample_id="c0", scorer=RUBRIC, machine_score=2, official_score=2,
                            human_decided=False, deductions=[CHECK], feedback="", appeal_closes_at=3 * DAY_S,
                            appeal_deadline_task=task, appeal_days_left=left, appeals=[])

    sample = Sample(id="c0", question="快递呢", answer="已发出")
    html = verdict_html(mine("W49 <b>短期</b>", 3.5), sample, "zh")
    assert f"本条申诉截止：{iso_time(3 * DAY_S)}（还剩 3 天，按审核任务 W49 &lt;b&gt;短期&lt;/b&gt; 的期限）" in html
    assert "<b>短期" not in html
    assert "(under a day left, the run's deadline)" in verdict_html(mine("", 0.2), sample, "en")
    assert "(closed, task W49's deadline)" in verdict_html(mine("W49", -1), sample, "en")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    from rubriceval.audit.passwords import read_auth_file, write_user
    from rubriceval.audit.sessions import TeamAuth
    from rubriceval.ui.team.app import launch_team
    from tests.audit.test_team_ui import Clock as ShiftedClock
    from tests.audit.test_team_ui import free_port
    from tests.helpers.store_copy import empty_store

    store_path, auth_path = empty_store(request, "appeal_deadlines_ui"), tmp_path_factory.mktemp("dl") / "users.auth"
    run_id = build_appeal_store(store_path)
    with TeamStore(store_path) as team:
        make_task(team, run_id, "W49 短期", appeal_days=1)
    write_user(auth_path, "agent_wang", "agent", "agent_wang-password")
    clock = ShiftedClock()
    auth = TeamAuth(read_auth_file(auth_path), ttl_s=30 * DAY_S, clock=clock)   # the login outlives the shift
    app = launch_team(store_path, auth, port=free_port(), block=False, quiet=True, lang="en")
    yield app, store_path, run_id, clock
    app.close()
    app.team_store.close()


def test_the_agent_sees_each_verdicts_deadline_and_a_late_appeal_is_refused(served) -> None:
    from gradio_client import Client

    app, store_path, run_id, clock = served
    wang = Client(app.local_url, auth=("agent_wang", "agent_wang-password"), verbose=False, download_files=False)
    with TeamStore(store_path) as team:
        task_closes = iso_time(Appeals(team).deadline(run_id, "c000").closes_at)
        run_closes = iso_time(Appeals(team).closes_at(run_id))
    in_task, _ = wang.predict(run_id, f"c000|{RUBRIC}", api_name="/my_verdict")
    assert f"Appeals on this verdict close {task_closes} (under a day left, task W49 短期's deadline)" in in_task
    no_task, _ = wang.predict(run_id, f"{NO_TASK}|{RUBRIC}", api_name="/my_verdict")
    assert f"Appeals on this verdict close {run_closes} (6 day(s) left, the run's deadline)" in no_task
    clock.shift = 2 * DAY_S                      # past the task's day, inside the run's week
    status, _ = wang.predict(run_id, f"c000|{RUBRIC}", CHECK, "没有承诺包邮", api_name="/appeal_submit")
    assert status.startswith("⚠") and f"appeals on task 'W49 短期' closed at {task_closes}" in status
    in_task, _ = wang.predict(run_id, f"c000|{RUBRIC}", api_name="/my_verdict")
    assert "(closed, task W49 短期's deadline)" in in_task
    status, _ = wang.predict(run_id, f"{NO_TASK}|{RUBRIC}", "", "分数太低", api_name="/appeal_submit")
    assert status.startswith("✓ appeal")
    with TeamStore(store_path) as team:
        assert [a.sample_id for a in Appeals(team).list(agent="agent_wang")] == [NO_TASK]
