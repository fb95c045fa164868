"""The audit app on conversations in a real browser (Debian chromium through Playwright): a conversation item shows
as bubbles with the cited turns highlighted, a turn verdict is refused without a reason and then saved with one
(and is in the store), and a conversation full of markup runs no script."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval import AuditStore, Conversation
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.ui.audit.app import launch
from tests.helpers.conversation_run import conversation_run

# The app and browser setup the audit app's own browser test uses (environment, chromium flags, free port, page).
from tests.ui.test_ui_browser import browser_page, free_port  # noqa: F401  (browser_page: a fixture)

pytestmark = pytest.mark.browser

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
SOOTHING = "emotional_soothing_multiturn"


@pytest.fixture()
def served(tmp_path: Path):
    store_path = tmp_path / "runs.sqlite"
    hostile = conversation_sample(Conversation(id="hostile-chat", tags=["投诉"], turns=[
        {"role": "user", "content": "投诉 " + HOSTILE, "speaker": HOSTILE},
        {"role": "assistant", "content": "抱歉 " + HOSTILE, "contexts": [HOSTILE]}]))
    conversation_run(store_path, turn_score=lambda cid, turn: 2 if turn >= 4 else 4, extra=[hostile])
    app = launch(store_path, port=free_port(), export_dir=tmp_path / "exports", block=False, quiet=True, lang="en")
    yield app, store_path
    app.close()
    app.audit_store.close()


def open_item(page, store_path: Path, sample_id: str, scorer: str) -> None:
    """Jump to the item by its number in the app's default queue (judge score ↑, dataset order)."""
    with AuditStore(store_path) as store:
        rows = store.queue("latest")
    number = next(i for i, r in enumerate(rows, start=1) if (r.sample_id, r.scorer) == (sample_id, scorer))
    page.fill("#jump-to input", str(number))
    page.click("#go-btn")
    page.wait_for_function("id => document.querySelector('#item-title')?.innerText.includes(id)",
                           arg=f"{sample_id} · {scorer}", timeout=20_000)


def test_transcript_cited_turns_and_a_turn_override(served, browser_page, tmp_path: Path) -> None:
    app, store_path = served
    page = browser_page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(app.local_url)
    page.wait_for_selector("#sample-view .transcript", timeout=30_000)
    page.fill("#expert-name textarea", "王专家")

    open_item(page, store_path, "refund-apology-every-turn", SOOTHING)
    page.wait_for_selector("#turn-verdicts", state="visible", timeout=20_000)
    bubbles = page.locator("#sample-view .turn-row")
    assert bubbles.count() == 8
    assert "from-user" in bubbles.nth(0).get_attribute("class")
    assert "from-assistant" in bubbles.nth(1).get_attribute("class")
    # Turn 4 is cited: the judge scored it 2 (< 4) and the apology check fails there; turn 2 (4/5) is not.
    assert "cite-fail" in page.get_attribute("#turn-4 .bubble", "class")
    assert "cite-fail" not in page.get_attribute("#turn-2 .bubble", "class")
    assert page.inner_text("#turn-4 mark.ev-span") == "抱歉"
    # The turn's contexts are folded until clicked.
    contexts = page.locator("#turn-4 details.turn-contexts")
    assert not contexts.evaluate("d => d.open")
    contexts.locator("summary").click()
    assert contexts.evaluate("d => d.open") and "退款" in contexts.inner_text()

    page.click("#turn-pick input")
    page.locator("[role=listbox] [role=option]", has_text="turn 4").click()
    page.locator('#turn-score input[value="1"]').click()
    page.click("#turn-save-btn")                                   # no reason: refused, nothing stored
    page.wait_for_selector(".toast-body", timeout=10_000)
    assert "a reason is required to override the judge's score 2 for turn 4" in page.inner_text(".toast-body")
    page.fill("#turn-reason textarea", "第二次道歉，还是没有新信息")
    page.click("#turn-save-btn")
    page.wait_for_function("(document.querySelector('#turn-status')?.innerText || '').includes('Saved')",
                           timeout=20_000)
    assert "Saved the verdict on turn 4 (override)" in page.inner_text("#turn-status")
    page.wait_for_function("document.querySelector('#turn-4')?.innerText.includes('王专家 1/5')", timeout=10_000)

    # The conversation-level verdict right after, through the existing path: no conflict with the turn verdict.
    page.click("#agree-btn")
    page.wait_for_function("(document.querySelector('#audit-status')?.innerText || '').includes('Saved agreement')",
                           timeout=20_000)

    with AuditStore(store_path) as store:
        [saved] = store.turn_verdicts("latest")
        [response] = store.responses("latest")
        log = store.audit_log("latest")
    assert (saved.sample_id, saved.scorer, saved.turn, saved.expert, saved.score, saved.judge_score, saved.action,
            saved.reason) == ("refund-apology-every-turn", SOOTHING, 4, "王专家", 1, 2.0, "override",
                              "第二次道歉，还是没有新信息")
    assert (response.sample_id, response.scorer, response.score, response.action) == (
        "refund-apology-every-turn", SOOTHING, 2, "agree")
    assert [(e.action, e.outcome) for e in log] == [("save_turn_verdict", "saved"), ("save_response", "saved")]

    for close in page.locator(".toast-close").all():
        close.click()
    page.evaluate("window.scrollTo(0, 0)")
    shot = tmp_path / "conversation_audit.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    print(f"\nscreenshot: {shot}")

    # A conversation made of markup shows as text and runs nothing.
    open_item(page, store_path, "hostile-chat", "closing")
    assert "<script>window.__pwned = 1</script>" in page.inner_text("#turn-1")
    assert page.locator("#sample-view script, #sample-view img").count() == 0
    assert page.evaluate("window.__pwned === undefined") and dialogs == []
