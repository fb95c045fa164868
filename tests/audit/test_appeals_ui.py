"""The appeal and calibration tabs of the team app through its HTTP API (gradio_client), logged in as an agent, a
reviewer or a lead: an agent sees and appeals only their own conversations and not after the deadline; a reviewer
accepts and the agent's official score changes; two reviewers deciding one appeal at once — one wins, the other is
told; a calibration session graded blind leaves official scores untouched. SQLite and PostgreSQL."""
from __future__ import annotations

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import pytest  # noqa: E402
from gradio_client import Client  # noqa: E402

from rubriceval.audit.appeals import Appeals  # noqa: E402
from rubriceval.audit.official import official_frame  # noqa: E402
from rubriceval.audit.passwords import read_auth_file, write_user  # noqa: E402
from rubriceval.audit.sessions import TeamAuth  # noqa: E402
from rubriceval.audit.team import TeamStore  # noqa: E402
from rubriceval.ui.team.app import launch_team  # noqa: E402
from tests.audit.test_team_ui import Clock, free_port  # noqa: E402
from tests.helpers.appeal_store import CHECK, JUDGE_FEEDBACK, RUBRIC, build_appeal_store  # noqa: E402
from tests.helpers.store_copy import empty_store  # noqa: E402

USERS = {"agent_wang": "agent", "agent_li": "agent", "qa_zhang": "expert", "qa_zhao": "expert", "lead_chen": "lead"}


def password(name: str) -> str:
    return f"{name}-password"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("appeals-ui")
    store_path, auth_path = empty_store(request, "appeals_ui"), root / "users.auth"
    run_id = build_appeal_store(store_path, n=12)
    for name, role in USERS.items():
        write_user(auth_path, name, role, password(name))
    clock = Clock()
    auth = TeamAuth(read_auth_file(auth_path), ttl_s=3600, clock=clock)
    app = launch_team(store_path, auth, port=free_port(), block=False, quiet=True, lang="en")
    yield app, store_path, run_id, clock
    app.close()
    app.team_store.close()


def login(served, name: str) -> Client:
    return Client(served[0].local_url, auth=(name, password(name)), verbose=False, download_files=False)


def my_verdicts(client: Client, run_id: str) -> tuple:
    return client.predict(run_id, api_name="/my_verdicts")


def test_an_agent_sees_only_their_own_and_appeals_one_deduction(served) -> None:
    _, store_path, run_id, _ = served
    wang = login(served, "agent_wang")
    assert "agent_wang" in wang.predict(api_name="/team_load")[0]          # the page loads for an agent
    closes, table, choices = my_verdicts(wang, run_id)
    assert {row[0] for row in table["data"]} == {"c000", "c002", "c004", "c006", "c008", "c010"}
    assert "Appeals on this run close" in closes
    view, deductions = wang.predict(run_id, f"c004|{RUBRIC}", api_name="/my_verdict")
    assert "c004" in view and [c[1] for c in deductions["choices"]] == ["", CHECK]
    # Another agent's conversation, typed in: refused with the same words as any sample not theirs.
    status, _ = wang.predict(run_id, f"c001|{RUBRIC}", "", "这是我的", api_name="/appeal_submit")
    assert status.startswith("⚠") and "not one of your conversations" in status
    status, table = wang.predict(run_id, f"c004|{RUBRIC}", CHECK, "知识库允许包邮", api_name="/appeal_submit")
    assert status.startswith("✓ appeal")
    assert next(r for r in table["data"] if r[0] == "c004")[5] == f"{CHECK}: submitted"
    # An agent has no inbox: the server refuses it whatever the client sends.
    inbox = wang.predict("submitted", api_name="/appeals_inbox")
    assert not inbox[0] or not inbox[0].get("data")
    # A reviewer accepts; the agent's official score changes and says a person decided it.
    zhang = login(served, "qa_zhang")
    frame, picks = zhang.predict("submitted", api_name="/appeals_inbox")
    appeal_id = next(r[0] for r in frame["data"] if r[1] == "c004")
    html, _ = zhang.predict(appeal_id, api_name="/appeal_open")       # the version seen is kept on the server
    assert "知识库允许包邮" in html and "without this deduction: 4" in html
    html, status = zhang.predict(appeal_id, "accepted", None, "知识库第3条", api_name="/appeal_decide")
    assert status == "✓ saved: accepted"
    _, table, _ = my_verdicts(wang, run_id)
    row = next(r for r in table["data"] if r[0] == "c004")
    assert (row[2], row[3]) == ("2", "4 ✎")
    view, _ = wang.predict(run_id, f"c004|{RUBRIC}", api_name="/my_verdict")
    assert "human-decided" in view
    with TeamStore(store_path) as team:
        assert [e.actor for e in Appeals(team).events(appeal_id)] == ["agent_wang", "qa_zhang"]


def test_no_appeal_after_the_deadline(served) -> None:
    _, store_path, run_id, _ = served
    li = login(served, "agent_li")
    with TeamStore(store_path) as team:
        Appeals(team).set_window(run_id, days=0, by="lead_chen")      # closed the moment the run was made
    try:
        status, _ = li.predict(run_id, f"c001|{RUBRIC}", "", "分数太低", api_name="/appeal_submit")
        closes, _, _ = my_verdicts(li, run_id)
    finally:
        with TeamStore(store_path) as team:
            Appeals(team).set_window(run_id, days=7, by="lead_chen")
    assert status.startswith("⚠") and "closed" in status
    assert "Appeals on this run close" in closes


def test_two_reviewers_decide_one_appeal_one_wins_the_other_is_told(served) -> None:
    _, _, run_id, _ = served
    wang = login(served, "agent_wang")
    status, _ = wang.predict(run_id, f"c008|{RUBRIC}", CHECK, "没有承诺", api_name="/appeal_submit")
    assert status.startswith("✓")
    zhang, zhao = login(served, "qa_zhang"), login(served, "qa_zhao")
    frame, _ = zhang.predict("submitted", api_name="/appeals_inbox")
    appeal_id = next(r[0] for r in frame["data"] if r[1] == "c008")
    zhang.predict(appeal_id, api_name="/appeal_open")                 # both open the same version
    zhao.predict(appeal_id, api_name="/appeal_open")
    _, first = zhang.predict(appeal_id, "rejected", None, "确有承诺", api_name="/appeal_decide")
    _, second = zhao.predict(appeal_id, "accepted", None, "同意", api_name="/appeal_decide")
    assert first == "✓ saved: rejected"
    assert second.startswith("⚠") and "by qa_zhang" in second and "reload" in second
    # An expert cannot give the final judgement; the lead can.
    zhao.predict(appeal_id, api_name="/appeal_open")
    _, refused = zhao.predict(appeal_id, "accepted", None, "x", api_name="/appeal_final")
    assert refused.startswith("⚠") and "cannot close" in refused
    lead = login(served, "lead_chen")
    lead.predict(appeal_id, api_name="/appeal_open")
    _, final = lead.predict(appeal_id, "accepted", "5", "知识库有此政策", api_name="/appeal_final")
    assert final == "✓ saved: final"


def test_calibration_session_is_blind_and_leaves_official_scores(served) -> None:
    _, store_path, run_id, _ = served
    with TeamStore(store_path) as team:
        before = official_frame(team.conn, run_id)
    lead = login(served, "lead_chen")
    status, _ = lead.predict("W49 校准", run_id, RUBRIC, "c001=4\nc003=5\nc005=2", ["qa_zhang", "qa_zhao"],
                             api_name="/calibration_create")
    assert status.startswith("✓ calibration session W49 校准 created (3 items)")
    zhang = login(served, "qa_zhang")
    session_id = zhang.predict(api_name="/appeals_load")[-1]["value"]   # the newest session of theirs
    items, first, opened = zhang.predict(session_id, api_name="/calibration_open")
    assert [r[0] for r in items["data"]] == [1, 2, 3]
    assert first["value"] == 1 and "不得承诺" in opened and JUDGE_FEEDBACK not in opened    # the first ungraded, blind
    shown = zhang.predict(session_id, 1, api_name="/calibration_item")
    assert "不得承诺" in shown and JUDGE_FEEDBACK not in shown and "benchmark" not in shown    # blind
    for no, score in ((1, "4"), (2, "5"), (3, "3")):
        status, _ = zhang.predict(session_id, no, score, api_name="/calibration_grade")
        assert status.startswith("✓ graded")
        if no == 2:                                                    # reopened: the one left to grade
            assert zhang.predict(session_id, api_name="/calibration_open")[1]["value"] == 3
    denied = login(served, "agent_li").predict(session_id, 1, "1", api_name="/calibration_grade")
    assert denied[0].startswith("⚠")
    assert "qa_zhang |" not in str(zhang.predict(session_id, api_name="/calibration_report"))   # leads only
    report = lead.predict(session_id, api_name="/calibration_report")
    assert "qa_zhang | 3 | 0.67" in report and "no official score is changed" in report
    with TeamStore(store_path) as team:
        assert official_frame(team.conn, run_id).equals(before)




def test_an_agent_has_no_expert_queue(served) -> None:
    """Issue 27.4: the queue tab is hidden from agents (team_load), and asking the server for a queue anyway is
    refused with a message saying why; an expert passes the role check."""
    wang = login(served, "agent_wang")
    outputs = wang.predict("any-task", "agent_wang", "", "", "", api_name="/team_open_queue")
    assert any("no expert queue" in str(o) for o in outputs)
    zhang = login(served, "qa_zhang")
    try:
        outputs = zhang.predict("any-task", "qa_zhang", "", "", "", api_name="/team_open_queue")
    except Exception:      # the unknown task is the expert's error, not the role
        outputs = []
    assert not any("no expert queue" in str(o) for o in outputs)


def test_an_agent_reaches_no_other_agents_conversation(served) -> None:
    """c001 is agent_li's. Every endpoint that shows a conversation gives it to whoever may see it (the control) and
    refuses agent_wang, whatever he sends: his verdict view, the inbox's appeal view, a calibration item, an expert's
    queue item."""
    from rubriceval.audit.calibration import Calibration, CalibrationPick
    from rubriceval.store.team_models import TaskSpec

    _, store_path, run_id, _ = served
    marker = "我的快递1天了"                                               # c001's question
    with TeamStore(store_path) as team:
        appeal = Appeals(team).submit(run_id, "c001", RUBRIC, agent="agent_li", role="agent", reason="打分太低")
        task = team.create_task(TaskSpec(run=run_id, rubrics=[RUBRIC], n=12, overlap=1, experts=["qa_zhang"],
                                         name="c001-visibility"), "lead_chen")
        item = next(r.item_no for r in team.queue(task.task_id, "qa_zhang", page_size=50).rows if r.sample_id == "c001")
        session = Calibration(team).create("c001 校准", lead="lead_chen", role="lead", reviewers=["qa_zhang"],
                                           picks=[CalibrationPick(run=run_id, sample_id="c001", scorer=RUBRIC,
                                                                  benchmark=4)])

    def shown(client: Client, *calls: tuple) -> str:
        out = []
        for args, api in calls:
            try:
                out.append(str(client.predict(*args, api_name=api)))
            except Exception as exc:          # a refusal the client raises is as good as one in a status line
                out.append(f"refused: {exc}")
        return "\n".join(out)

    wang, li, zhang = login(served, "agent_wang"), login(served, "agent_li"), login(served, "qa_zhang")
    mine = ((run_id, f"c001|{RUBRIC}"), "/my_verdict")
    inbox = ((appeal.appeal_id,), "/appeal_open")
    calibration = ((session.session_id, 1), "/calibration_item")
    queue = [((task.task_id, "qa_zhang", "", "", ""), "/team_open_queue"), ((item,), "/team_open_item")]
    assert marker in shown(li, mine)                                      # the controls: the marker is found
    assert marker in shown(zhang, inbox) and marker in shown(zhang, calibration) and marker in shown(zhang, *queue)
    seen = shown(wang, mine, inbox, calibration, ((session.session_id,), "/calibration_open"), *queue)
    assert marker not in seen and "c001" not in seen.replace(f"c001|{RUBRIC}", "")


def test_two_reviewers_press_decide_at_the_same_moment(served) -> None:
    """Both requests sent before either answer: exactly one is saved, the other is told who decided, and the
    official score is the winner's."""
    _, store_path, run_id, _ = served
    status, _ = login(served, "agent_wang").predict(run_id, f"c000|{RUBRIC}", CHECK, "没有承诺包邮",
                                                    api_name="/appeal_submit")
    assert status.startswith("✓")
    zhang, zhao = login(served, "qa_zhang"), login(served, "qa_zhao")
    frame, _ = zhang.predict("submitted", api_name="/appeals_inbox")
    appeal_id = next(r[0] for r in frame["data"] if r[1] == "c000")
    zhang.predict(appeal_id, api_name="/appeal_open")
    zhao.predict(appeal_id, api_name="/appeal_open")
    jobs = {"qa_zhang": zhang.submit(appeal_id, "accepted", None, "知识库允许", api_name="/appeal_decide"),
            "qa_zhao": zhao.submit(appeal_id, "rejected", None, "确有承诺", api_name="/appeal_decide")}
    said = {name: job.result()[1] for name, job in jobs.items()}
    winners = [name for name, text in said.items() if text.startswith("✓ saved")]
    assert len(winners) == 1, said
    loser = next(name for name in said if name not in winners)
    assert said[loser].startswith("⚠") and f"by {winners[0]}" in said[loser]
    with TeamStore(store_path) as team:
        appeal = Appeals(team).get(appeal_id)
        frame = official_frame(team.conn, run_id)
    assert appeal.reviewer == winners[0]
    c000 = frame[(frame.sample_id == "c000") & (frame.scorer == RUBRIC)].iloc[0]
    assert c000.official_score == (5.0 if winners[0] == "qa_zhang" else 2.0)
