"""Appeals in a real browser (Debian chromium through Playwright): an agent logs in and appeals one deduction with
a reason; a reviewer opens it from the inbox and accepts it; the agent's official score and the HTML report's
figures change and say they are human-decided. Also the lead's calibration result. Screenshots of the three views
are written to tmp_path, and to $RUBRICEVAL_SCREENSHOTS when set (docs/img/ was made so)."""
from __future__ import annotations

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import re  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from rubriceval.audit.calibration import Calibration, CalibrationPick  # noqa: E402
from rubriceval.audit.passwords import read_auth_file, write_user  # noqa: E402
from rubriceval.audit.sessions import TeamAuth  # noqa: E402
from rubriceval.audit.team import TeamStore  # noqa: E402
from rubriceval.report.html import render_html_report  # noqa: E402
from rubriceval.report.run_data import load_run  # noqa: E402
from rubriceval.store.runs import RunStore  # noqa: E402
from rubriceval.ui.team.app import launch_team  # noqa: E402
from tests.audit.test_team_browser import browser  # noqa: E402,F401  (the chromium fixture)
from tests.helpers.appeal_store import RUBRIC, build_appeal_store  # noqa: E402
from tests.ui.test_ui_browser import free_port  # noqa: E402

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (pip install playwright) is not installed")
USERS = {"agent_wang": "agent", "qa_zhang": "expert", "qa_zhao": "expert", "lead_chen": "lead"}


def password(name: str) -> str:
    return f"{name}-password"


@pytest.fixture()
def served(tmp_path: Path):
    store_path, auth_path = tmp_path / "runs.sqlite", tmp_path / "users.auth"
    run_id = build_appeal_store(store_path, n=12)
    for name, role in USERS.items():
        write_user(auth_path, name, role, password(name))
    app = launch_team(store_path, TeamAuth(read_auth_file(auth_path)), port=free_port(), block=False, quiet=True,
                      lang="zh")
    yield app, store_path, run_id
    app.close()
    app.team_store.close()


def log_in(browser, url: str, name: str):
    page = browser.new_context(viewport={"width": 1440, "height": 1300}).new_page()
    page.goto(url)
    page.fill("input[data-testid=textbox]", name)
    page.fill("input[type=password]", password(name))
    page.get_by_role("button", name=re.compile("^(Login|登录)$")).click()     # the login page speaks the app's language
    page.wait_for_function("n => (document.querySelector('#team-signed-in')?.innerText || '').includes(n)", arg=name,
                           timeout=30_000)
    return page


def shoot(page, tmp_path: Path, name: str) -> Path:
    for close in page.locator(".toast-close").all():
        close.click()
    shot = tmp_path / name
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 30_000
    if os.environ.get("RUBRICEVAL_SCREENSHOTS"):
        folder = Path(os.environ["RUBRICEVAL_SCREENSHOTS"])
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, folder / name)
    return shot


def wait_text(page, selector: str, text: str) -> None:
    page.wait_for_function("([s, t]) => (document.querySelector(s)?.innerText || '').includes(t)",
                           arg=[selector, text], timeout=30_000)


def report_html(store_path: Path, run_id: str, out: Path) -> Path:
    store = RunStore(store_path)
    out.write_text(render_html_report(load_run(store, run_id), lang="zh", findings=[]), encoding="utf-8")
    store.close()
    return out


def test_agent_appeals_a_deduction_reviewer_accepts_report_says_human_decided(served, browser, tmp_path) -> None:
    app, store_path, run_id = served
    before = report_html(store_path, run_id, tmp_path / "before.html").read_text(encoding="utf-8")
    assert "人工裁定" not in before

    agent = log_in(browser, app.local_url, "agent_wang")
    assert not agent.get_by_role("tab", name="申诉复核").is_visible()         # no inbox for an agent
    agent.get_by_role("tab", name="我的申诉").click()
    agent.click("#appeal-load")
    wait_text(agent, "#appeal-my-verdicts", "c004")
    assert "c001" not in agent.inner_text("#appeal-my-verdicts")               # agent_li's conversation
    agent.click("#appeal-verdict input")
    agent.get_by_role("option", name=f"c004 · {RUBRIC}").click()
    wait_text(agent, "#appeal-verdict-view", "c004")
    agent.fill("#appeal-reason textarea", "知识库第3条允许补发包邮，不应扣分")
    agent.click("#appeal-submit")
    wait_text(agent, "#appeal-status", "已提交申诉")
    wait_text(agent, "#appeal-my-verdicts", "已提交")           # the state in the page's language
    shoot(agent, tmp_path, "appeal_agent_view.png")

    reviewer = log_in(browser, app.local_url, "qa_zhang")
    assert not reviewer.get_by_role("tab", name="我的申诉").is_visible()
    reviewer.get_by_role("tab", name="申诉复核").click()
    reviewer.click("#appeal-inbox-refresh")
    wait_text(reviewer, "#appeal-inbox-table", "c004")
    reviewer.click("#appeal-open")
    wait_text(reviewer, "#appeal-view", "知识库第3条允许补发包邮")
    shoot(reviewer, tmp_path, "appeal_reviewer_queue.png")
    reviewer.locator("#appeal-outcome label", has_text="申诉成立").click()
    reviewer.locator("#appeal-score label", has_text="3").click()   # the judge item was generous too: 3, not 4
    reviewer.fill("#appeal-decision-reason textarea", "包邮属实，但安抚不足：3 分")
    reviewer.click("#appeal-decide")
    wait_text(reviewer, "#appeal-inbox-status", "已保存：申诉成立")

    agent.click("#appeal-load")
    wait_text(agent, "#appeal-my-verdicts", "3 ✎")
    after = report_html(store_path, run_id, tmp_path / "after.html")
    page = browser.new_context(viewport={"width": 1440, "height": 1300}).new_page()
    page.goto(after.as_uri())
    table = page.inner_text("#scorer-table")
    assert "1 行人工裁定" in table and "机器分" in table
    card = page.locator(".example", has_text="c004").first
    assert "人工裁定" in card.inner_text() and "申诉通过" in card.inner_text()
    assert "3" in card.locator("b").first.inner_text()
    assert "官方分数" in page.inner_text("#official-headline")


def test_calibration_result_screenshot(served, browser, tmp_path) -> None:
    app, store_path, run_id = served
    with TeamStore(store_path) as team:
        calibration = Calibration(team)
        picks = [CalibrationPick(run=run_id, sample_id=f"c{i:03d}", scorer=RUBRIC, benchmark=b)
                 for i, b in enumerate([5, 4, 4, 5, 2, 4, 5, 4])]
        session = calibration.create("2026-W49 校准会", lead="lead_chen", role="lead",
                                     reviewers=["qa_zhang", "qa_zhao"], picks=picks)
        for reviewer, grades in (("qa_zhang", [5, 4, 4, 5, 2, 4, 4, 4]), ("qa_zhao", [4, 3, 4, 3, 3, 4, 5, 2])):
            for no, score in enumerate(grades, start=1):
                calibration.grade(session.session_id, no, reviewer=reviewer, score=score)
    lead = log_in(browser, app.local_url, "lead_chen")
    lead.get_by_role("tab", name="校准会").click()
    lead.click("#cal-open")
    wait_text(lead, "#cal-items", "c007")
    wait_text(lead, "#cal-item-view", "不得承诺")                      # opening a session opens its first item
    assert lead.input_value("#cal-item-no input") == "1"                # not an empty number shown as a refused 0
    lead.click("#cal-report-btn")
    wait_text(lead, "#cal-report", "校准结果")
    report = lead.inner_text("#cal-report")
    assert "qa_zhang" in report and "qa_zhao" in report and "不影响任何官方分数" in report
    shoot(lead, tmp_path, "calibration_result.png")


def test_an_agent_sees_no_reviewer_tab(served, browser) -> None:
    """The server refuses an agent's queue, inbox and review requests (test_appeals_ui); the page does not offer them
    either: an agent's only tab is their own verdicts, and it is the one shown."""
    app, _, _ = served
    agent = log_in(browser, app.local_url, "agent_wang")
    wait_text(agent, "body", "我的申诉")
    tabs = [t.inner_text().strip() for t in agent.get_by_role("tab").all() if t.is_visible()]
    assert tabs == ["我的申诉"], tabs
    for hidden in ("#team-queue", "#appeal-inbox-table", "#team-open-queue", "#cal-items"):
        assert not agent.locator(hidden).first.is_visible(), hidden
    assert agent.locator("#appeal-load").is_visible()
    reviewer = log_in(browser, app.local_url, "qa_zhang")                   # the same page for a reviewer
    wait_text(reviewer, "body", "申诉复核")
    shown = [t.inner_text().strip() for t in reviewer.get_by_role("tab").all() if t.is_visible()]
    assert "我的队列" in shown and "申诉复核" in shown and "我的申诉" not in shown
