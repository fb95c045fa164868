"""The team app in a real browser (Debian chromium through Playwright): an expert's blind review — the judge's
verdict is nowhere in the page (DOM or Gradio's page config) before the expert saves, and is after; the lead's tabs
are not shown to an expert; the lead's adjudication view with every opinion side by side (screenshot)."""
from __future__ import annotations

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from rubriceval.audit.passwords import read_auth_file, write_user  # noqa: E402
from rubriceval.audit.sessions import TeamAuth  # noqa: E402
from rubriceval.audit.team import TeamStore  # noqa: E402
from rubriceval.store.team_models import TaskSpec  # noqa: E402
from rubriceval.ui.team.app import launch_team  # noqa: E402
from tests.helpers.team_store import build_team_store, judge_feedback  # noqa: E402
from tests.ui.test_ui_browser import CHROMIUM_ARGS, free_port  # noqa: E402

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (pip install playwright) is not installed")
PASSWORDS = {"lead": "lead-password", "ann": "ann-password", "bob": "bob-password"}


@pytest.fixture()
def browser(chromium: str):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture()
def served(tmp_path: Path):
    store_path, auth_path = tmp_path / "runs.sqlite", tmp_path / "users.auth"
    build_team_store(store_path, n_samples=60, seed=7)
    for name, password in PASSWORDS.items():
        write_user(auth_path, name, "lead" if name == "lead" else "expert", password)
    with TeamStore(store_path) as team:
        task = team.create_task(TaskSpec(run="team-run", rubrics=["soothing"], n=6, overlap=2,
                                         experts=["ann", "bob"], name="周检-盲审"), created_by="lead")
        rows = team.queue(task.task_id, "ann").rows
        # Two items already with the lead: the experts disagree on one, bob is unsure about the other.
        team.save_review(task.task_id, rows[1].item_no, "ann", score=2, tags=["未先安抚", "缺少链接"],
                         note="先讲物流才道歉，也没给查询链接", expected_version=0)
        team.save_review(task.task_id, rows[1].item_no, "bob", score=4, note="有道歉，信息基本完整",
                         expected_version=0)
        team.save_review(task.task_id, rows[2].item_no, "ann", score=3, expected_version=0)
        team.mark_unsure(task.task_id, rows[2].item_no, "bob", note="不确定“7 天内退款”是否是现行政策",
                         expected_version=0)
    app = launch_team(store_path, TeamAuth(read_auth_file(auth_path)), port=free_port(), block=False, quiet=True,
                      lang="en")
    yield app, store_path, task, rows
    app.close()
    app.team_store.close()


def log_in(browser, url: str, name: str):
    page = browser.new_context(viewport={"width": 1440, "height": 1300}).new_page()
    page.goto(url)
    page.fill("input[data-testid=textbox]", name)
    page.fill("input[type=password]", PASSWORDS[name])
    page.click("button:has-text('Login')")
    page.wait_for_function("n => (document.querySelector('#team-signed-in')?.innerText || '').includes(n)", arg=name,
                           timeout=30_000)
    return page


def everything_sent(page) -> str:
    """The page's DOM and Gradio's page config (component values the server put in the page)."""
    return page.content() + page.evaluate("JSON.stringify(window.gradio_config || {})")


def test_blind_review_the_judge_is_not_in_the_page_before_the_save_and_is_after(served, browser) -> None:
    app, store_path, task, rows = served
    page = log_in(browser, app.local_url, "ann")
    assert not page.get_by_role("tab", name="Tasks (lead)").is_visible()
    assert not page.get_by_role("tab", name="Adjudication (lead)").is_visible()
    page.click("#team-open-queue")
    page.wait_for_function("document.querySelector('#team-item-title')?.innerText.includes('item')", timeout=20_000)
    first = rows[0]
    assert first.sample_id in page.inner_text("#team-item-title")
    secret = judge_feedback(first.sample_id, "soothing")
    before = everything_sent(page)
    assert secret not in before and "JUDGE-SAYS" not in before
    assert "Blind review" in page.inner_text("#team-judge") and "(hidden)" in page.inner_text("#team-queue")

    page.locator("#team-score label", has_text="3").click()
    page.locator("#team-tags label", has_text="未先安抚").click()
    page.click("#team-save")
    page.wait_for_function("(document.querySelector('#team-status')?.innerText || '').includes('saved')",
                           timeout=20_000)
    page.wait_for_function("s => document.querySelector('#team-judge').innerText.includes(s)", arg=secret,
                           timeout=20_000)
    assert secret in everything_sent(page)
    with TeamStore(store_path) as team:
        [review] = team.review_history(task.task_id, first.item_no)
    assert (review["expert"], review["score"], review["blind"], review["tags"]) == ("ann", 3, True, ["未先安抚"])


def test_adjudication_view_screenshot(served, browser, tmp_path: Path) -> None:
    app, store_path, task, rows = served
    page = log_in(browser, app.local_url, "lead")
    page.get_by_role("tab", name="Adjudication (lead)").click()
    page.click("#team-adj-load")
    page.wait_for_function("document.querySelector('#team-adj-table')?.innerText.includes('≥ 2 apart')",
                           timeout=20_000)
    page.fill("#team-adj-item input", str(rows[1].item_no))
    page.click("#team-adj-open")
    page.wait_for_function("document.querySelector('#team-adj-opinions')?.innerText.includes('先讲物流才道歉')",
                           timeout=20_000)
    opinions = page.inner_text("#team-adj-opinions")
    assert "ann" in opinions and "bob" in opinions and "未先安抚" in opinions
    assert judge_feedback(rows[1].sample_id, "soothing") in page.inner_text("#team-adj-judge")
    page.locator("#team-adj-label label", has_text="3").click()
    page.fill("#team-adj-reason textarea", "道歉在后，且缺少链接：3 分")
    page.click("#team-adj-save")
    page.wait_for_function("(document.querySelector('#team-adj-status')?.innerText || '').includes('final label 3')",
                           timeout=20_000)
    for close in page.locator(".toast-close").all():
        close.click()
    shot = tmp_path / "adjudication_view.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    print(f"\nscreenshot: {shot}")
    with TeamStore(store_path) as team:
        labels = team.query("SELECT label, reason FROM team_adjudications WHERE task_id = :t",
                            {"t": task.task_id})
    assert [tuple(r) for r in labels] == [(3, "道歉在后，且缺少链接：3 分")]
