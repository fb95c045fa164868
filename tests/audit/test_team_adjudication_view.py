"""The lead's adjudication list in a real browser (Debian chromium through Playwright), on the data of the issue-18
screenshot (benchmarks/pipeline/team_screenshot.py): a click on a row opens that item, and after "Save final label" the list's
"final" column shows the new label without reloading the list — while the item stays open for another save."""
from __future__ import annotations

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from benchmarks.pipeline.team_screenshot import CHROMIUM_ARGS, open_adjudication_list, prepare  # noqa: E402
from rubriceval.audit.passwords import read_auth_file  # noqa: E402
from rubriceval.audit.sessions import TeamAuth  # noqa: E402
from rubriceval.audit.team import TeamStore  # noqa: E402
from rubriceval.ui.team.app import launch_team  # noqa: E402
from tests.ui.test_ui_browser import free_port  # noqa: E402

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (pip install playwright) is not installed")


def row_text(page, n: int) -> str:
    """The innerText of data row n (Gradio's dataframe draws its rows as div[role=row], not <tr>)."""
    return page.evaluate("n => document.querySelector(`#team-adj-table .virtual-row[data-index='${n}']`)"
                         "?.innerText || ''", n)


def test_a_row_click_opens_the_item_and_a_save_shows_in_the_list(tmp_path: Path, chromium: str) -> None:
    store = tmp_path / "runs.sqlite"
    task_id, items = prepare(str(store), tmp_path / "users.auth")
    app = launch_team(store, TeamAuth(read_auth_file(tmp_path / "users.auth")), port=free_port(), block=False,
                      quiet=True, lang="en")
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
                open_adjudication_list(page, app.local_url)
                split = items[2]                                    # 李专家=3, 张专家=4: a pass/fail split
                assert "pass/fail split" in row_text(page, 1) and row_text(page, 1).split()[0] == str(split)
                page.click("#team-adj-table [data-testid=cell-1-2]")           # the row's sample cell
                page.wait_for_function("n => (document.querySelector('#team-adj-title')?.innerText || '')"
                                       ".includes('item ' + n)", arg=split, timeout=20_000)
                assert "道歉太晚" in page.inner_text("#team-adj-opinions")
                page.locator("#team-adj-label label", has_text="4").click()
                page.fill("#team-adj-reason textarea", "信息完整，道歉稍晚但有：4 分")
                page.click("#team-adj-save")
                page.wait_for_function("() => (document.querySelector(\"#team-adj-table [data-testid='cell-1-6']\")"
                                       "?.innerText || '').trim() === '4'", timeout=20_000)
                assert "final label 4 saved" in page.inner_text("#team-adj-status")
                # The item is still the one open: a second save settles it again (the latest label is final).
                page.locator("#team-adj-label label", has_text="3").click()
                page.click("#team-adj-save")
                page.wait_for_function("() => (document.querySelector(\"#team-adj-table [data-testid='cell-1-6']\")"
                                       "?.innerText || '').trim() === '3'", timeout=20_000)
            finally:
                browser.close()
    finally:
        app.close()
        app.team_store.close()
    with TeamStore(store) as team:
        labels = team.query("SELECT item_no, label FROM team_adjudications WHERE task_id = :t ORDER BY adjudication_id",
                            {"t": task_id})
    assert [tuple(r) for r in labels] == [(split, 4), (split, 3)]
