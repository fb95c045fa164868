"""The team app's login page in the store's language (issue 32.13): a Chinese store's login page is Chinese on an
English browser (Gradio picks its words from navigator.language; the page sets it to the app's language first),
with a login message in that language; and no raw `common.complete` key in the page after an action."""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"

import httpx  # noqa: E402
import pytest  # noqa: E402

from rubriceval.audit.passwords import read_auth_file, write_user  # noqa: E402
from rubriceval.audit.sessions import TeamAuth  # noqa: E402
from rubriceval.ui.team.app import launch_team  # noqa: E402
from rubriceval.ui.team.page_language import locale_script  # noqa: E402
from tests.helpers.team_store import build_team_store  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("team-login")
    store_path, auth_path = folder / "runs.sqlite", folder / "users.auth"
    build_team_store(store_path, n_samples=10, seed=7)         # Chinese samples
    write_user(auth_path, "ann", "expert", "ann-password")
    return store_path, auth_path


def serve(store, lang=None):
    port = free_port()
    app = launch_team(store[0], TeamAuth(read_auth_file(store[1])), port=port, block=False, quiet=True, lang=lang)
    return app, f"http://127.0.0.1:{port}/"


@pytest.mark.parametrize("lang, locale, message", [(None, "zh-CN", "请用组长为您创建的账号登录"),
                                                   ("en", "en", "log in with the account your lead created")])
def test_the_served_page_sets_the_apps_language_and_says_how_to_log_in(store, lang, locale, message):
    app, url = serve(store, lang)
    try:
        page = httpx.get(url, timeout=30).text
        assert locale_script(app.team_lang).decode() in page and f'const l="{locale}"' in page
        assert message in page                                   # the login page's message, in the page config
        refused = httpx.get(url + "config", timeout=30)          # not logged in: JSON, left as it is
        assert refused.status_code == 401 and message in refused.json()["detail"]["auth_message"]
    finally:
        app.close()
        app.team_store.close()


@pytest.mark.browser
def test_a_chinese_store_logs_in_in_chinese_on_an_english_browser(store, chromium: str):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from tests.ui.test_ui_browser import CHROMIUM_ARGS

    app, url = serve(store)
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_context(locale="en-US").new_page()
            page.goto(url)
            page.wait_for_selector("input[type=password]", timeout=30_000)
            login_text = page.inner_text("body")
            assert "用户名" in login_text and "密码" in login_text and "username" not in login_text
            page.fill("input[data-testid=textbox]", "ann")
            page.fill("input[type=password]", "ann-password")
            page.click("button:has-text('登录')")
            page.wait_for_function("() => (document.querySelector('#team-signed-in')?.innerText || '')"
                                   ".includes('ann')", timeout=30_000)
            page.click("button:has-text('保存评分')")          # nothing open: a warning, and Gradio's status
            seen = []
            for _ in range(10):
                seen.append(page.evaluate("document.body.textContent"))
                time.sleep(0.3)
            assert any("请先打开一项" in text for text in seen)
            assert not any("common.complete" in text for text in seen)
            browser.close()
    finally:
        app.close()
        app.team_store.close()
