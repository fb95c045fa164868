"""Issue 40's loop in a real browser (Debian chromium through Playwright), on a fresh store with a card run and a
card review task: a reviewer decides every item of a conversation blind and adds the missed fatal item (the page
then shows the machine's decisions and the official total 0); an agent appeals one deduction of another
conversation; the lead accepts it; the lead's page and the agent's page show the new official total at once, and
the same totals as the report's data (asserted, not only screenshotted)."""
from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from rubriceval.audit.passwords import read_auth_file, write_user
from rubriceval.audit.scorecard_official import official_totals
from rubriceval.audit.sessions import TeamAuth
from rubriceval.audit.team import TeamStore
from rubriceval.report.scorecards import ScorecardReport
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.store.team_models import TaskSpec
from rubriceval.ui.team.app import launch_team
from tests.audit.test_appeals_browser import log_in, password, shoot, wait_text
from tests.audit.test_one_official_total import CARD, SAMPLES
from tests.audit.test_team_browser import browser  # noqa: F401  (the chromium fixture)
from tests.ui.test_ui_browser import free_port

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
pytestmark = pytest.mark.browser
pytest.importorskip("playwright.sync_api", reason="playwright (pip install playwright) is not installed")
USERS = {"agent_wang": "agent", "qa_zhang": "expert", "lead_chen": "lead"}


@pytest.fixture()
def served(tmp_path: Path):
    store_path, auth_path = tmp_path / "runs.sqlite", tmp_path / "users.auth"
    runs = RunStore(store_path)
    card = Scorecard.model_validate(CARD)
    run_id = runs.create_run(RunConfig(), SAMPLES, [], name="W47")
    ScorecardStore(runs).register(run_id, [card])
    ScorecardStore(runs).save(run_id, [asyncio.run(score_scorecard(card, s, None, run_id=run_id)) for s in SAMPLES])
    runs.close()
    with TeamStore(store_path) as team:
        team.create_task(TaskSpec(run=run_id, scorecards=["qa"], n=4, experts=["qa_zhang"], name="W47-复核"),
                         created_by="lead_chen")
    for name, role in USERS.items():
        write_user(auth_path, name, role, password(name))
    app = launch_team(store_path, TeamAuth(read_auth_file(auth_path)), port=free_port(), block=False, quiet=True,
                      lang="zh")
    yield app, store_path, run_id
    app.close()
    app.team_store.close()


def official_on(page, selector: str) -> str:
    return page.inner_text(f"{selector} .official-score").strip()


def test_review_blind_add_a_fatal_appeal_accept_every_page_agrees(served, browser, tmp_path) -> None:
    app, store_path, run_id = served

    reviewer = log_in(browser, app.local_url, "qa_zhang")
    reviewer.get_by_role("tab", name="评分表复核").click()
    reviewer.click("#scr-task-load")
    wait_text(reviewer, "#scr-task-view", "盲审")
    reviewer.click("#scr-task-item input")
    reviewer.get_by_role("option", name=re.compile(r"· c3 ·")).click()
    wait_text(reviewer, "#scr-task-view", "c3")
    assert reviewer.locator("#scr-task-view .official-score").count() == 0       # blind: nothing of the machine
    for name in ("未询问其他问题", "泄露他人信息"):
        reviewer.locator("#scr-task-hits label", has_text=name).click()
    reviewer.locator("#scr-task-nas label", has_text="未说到账时效").click()
    reviewer.locator("#scr-task-all label").click()
    reviewer.click("#scr-task-save")
    wait_text(reviewer, "#scr-task-status", "已保存")
    wait_text(reviewer, "#scr-task-view", "机器")
    assert official_on(reviewer, "#scr-task-view") == "0"                      # the missed fatal item counts
    shoot(reviewer, tmp_path, "card_review_task.png")

    agent = log_in(browser, app.local_url, "agent_wang")
    agent.get_by_role("tab", name="我的申诉").click()
    agent.click("#appeal-load")
    wait_text(agent, "#appeal-my-verdicts", "c2")
    assert "c3" not in agent.inner_text("#appeal-my-verdicts")                   # agent_li's conversation
    agent.click("#appeal-verdict input")
    agent.get_by_role("option", name=re.compile(r"^c2 · 橙子质检")).click()
    wait_text(agent, "#appeal-verdict-view", "c2")
    assert official_on(agent, "#appeal-verdict-view") == "85"
    agent.fill("#appeal-reason textarea", "我说了三个工作日到账")
    agent.click("#appeal-submit")
    wait_text(agent, "#appeal-status", "已提交申诉")

    lead = log_in(browser, app.local_url, "lead_chen")
    lead.get_by_role("tab", name="申诉复核").click()
    lead.click("#appeal-inbox-refresh")
    wait_text(lead, "#appeal-inbox-table", "未说到账时效 (refund_time)")
    lead.click("#appeal-open")
    wait_text(lead, "#appeal-view", "我说了三个工作日到账")
    assert official_on(lead, "#appeal-view") == "85"
    wait_text(lead, "#appeal-score", "95")                # 改判: the item, the card recomputes to 95; no 1–5
    assert lead.locator("#appeal-score label", has_text=re.compile(r"^[1-5]$")).count() == 0
    lead.locator("#appeal-outcome label", has_text="申诉成立").click()
    lead.fill("#appeal-decision-reason textarea", "录音属实")
    lead.click("#appeal-decide")
    wait_text(lead, "#appeal-inbox-status", "已保存")
    lead.wait_for_function("() => document.querySelector('#appeal-view .official-score')?.innerText.trim() === '95'",
                           timeout=30_000)                # the new total as soon as the decision is saved

    agent.click("#appeal-load")
    wait_text(agent, "#appeal-my-verdicts", "95 ✎")
    store = RunStore(store_path)
    totals = {sample: total for (sample, _), total in official_totals(store, run_id).items()}
    report = {v.sample_id: v.totals.total for v in ScorecardReport(store, run_id, "zh").verdicts}
    store.close()
    assert totals == report and totals["c2"] == 95 and totals["c3"] == 0
