"""A screenshot of the team app's adjudication view as a lead sees it (issue 18), regenerated from scratch.

Builds a run store (tests/helpers/team_store.py), a blind task of six 情绪安抚 (soothing) items for two experts, and has the
experts review through the app's own actions (ui/team/actions.py: open their queue, open an item, save a score with
failure tags and a note, or mark it unsure), so that the lead's list holds one item of each kind: two scores ≥ 2
apart, a pass/fail split (3 vs 4 at threshold 4) and an "unsure" with its note — plus agreed items that stay off it.
Then it serves the team app on 127.0.0.1, logs in as the lead in Debian's chromium (Playwright, headless), opens the
adjudication tab, loads the task's list, opens the disputed item, picks a final label and types a reason, and saves
a full-page PNG; with --saved, a second one after pressing "Save final label".

    .venv/bin/python benchmarks/pipeline/team_screenshot.py                                  # docs/img/team_adjudication.png
    .venv/bin/python benchmarks/pipeline/team_screenshot.py --lang en --saved out/adj_saved.png
    .venv/bin/python benchmarks/pipeline/team_screenshot.py --store postgresql://user@127.0.0.1:5432/empty_db
    .venv/bin/python benchmarks/pipeline/team_screenshot.py --postgres --out out/adj_pg.png     # a throw-away local server

Without --lang the app picks the language of the run's samples (Chinese here), as it does for a real team.
"""
from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))     # the repository: tests.helpers builds the store
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rubriceval.audit.passwords import read_auth_file, write_user  # noqa: E402
from rubriceval.audit.sessions import Member, TeamAuth  # noqa: E402
from rubriceval.audit.team import TeamStore  # noqa: E402
from rubriceval.store.team_models import TaskSpec  # noqa: E402
from rubriceval.ui.team import actions as act  # noqa: E402
from rubriceval.ui.team.app import launch_team  # noqa: E402
from tests.helpers.team_store import build_team_store  # noqa: E402

LEAD, FIRST, SECOND = "王组长", "李专家", "张专家"
PASSWORD = "screenshot-only-password"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# (score or "unsure", failure tags, note) of each expert, item by item in the first expert's queue order.
Opinion = tuple[int | str, list[str], str]
REVIEWS: list[tuple[Opinion, Opinion]] = [
    ((4, [], ""), (4, [], "")),                                                             # agreed: not listed
    ((2, ["未先安抚", "缺少链接"], "先讲物流才道歉，也没给查询链接"), (4, [], "有道歉，信息基本完整")),  # ≥ 2 apart
    ((3, ["未先安抚"], "道歉太晚"), (4, [], "")),                                          # pass/fail split
    ((3, [], ""), ("unsure", [], "不确定“7 天内退款”是否是现行政策")),                        # unsure
    ((5, [], ""), (5, [], "")),                                                             # agreed
]
DISPUTED = 1                        # the item opened in the picture: index into REVIEWS
FINAL_LABEL, REASON = "3", "道歉在后，且缺少查询链接；物流信息完整：3 分"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def review_as(team: TeamStore, task_id: str, expert: str, item_no: int, opinion: Opinion) -> None:
    """What the expert's buttons do: open the queue, open the item (blind), save a score or mark it unsure."""
    member, session = Member(name=expert, role="expert"), act.TeamSession(lang="zh")
    act.open_queue(team, member, session, task_id, expert, None, None, None)
    act.open_item(team, member, session, item_no)
    score, tags, note = opinion
    if score == "unsure":
        act.mark_unsure(team, member, session, note)
    else:
        act.save_score(team, member, session, str(score), tags, note)


def prepare(store: str, auth_path: Path) -> tuple[str, list[int]]:
    """The run, the users, the task and the experts' reviews; returns (task id, reviewed item numbers)."""
    build_team_store(store, n_samples=40, seed=7)
    write_user(auth_path, LEAD, "lead", PASSWORD)
    for expert in (FIRST, SECOND):
        write_user(auth_path, expert, "expert", PASSWORD)
    with TeamStore(store) as team:
        task = team.create_task(TaskSpec(run="team-run", rubrics=["soothing"], n=6, overlap=2,
                                         experts=[FIRST, SECOND], name="周检-盲审"), created_by=LEAD)
        rows = team.queue(task.task_id, FIRST, page_size=len(REVIEWS)).rows
        for row, (first, second) in zip(rows, REVIEWS):
            review_as(team, task.task_id, FIRST, row.item_no, first)
            review_as(team, task.task_id, SECOND, row.item_no, second)
    return task.task_id, [r.item_no for r in rows]


def open_adjudication_list(page, url: str) -> None:
    """Log in as the lead, open the adjudication tab and load the task's list (whatever the page's language)."""
    page.goto(url)
    page.fill("input[data-testid=textbox]", LEAD)
    page.fill("input[type=password]", PASSWORD)
    page.locator("button[type=submit], button:has-text('Login')").first.click()
    page.wait_for_function("n => (document.querySelector('#team-signed-in')?.innerText || '').includes(n)",
                           arg=LEAD, timeout=30_000)
    page.locator("button[role=tab]").nth(2).click()                    # the adjudication tab (lead only)
    page.click("#team-adj-load")
    page.wait_for_function("n => (document.querySelector('#team-adj-table')?.innerText || '').includes(n)",
                           arg=f"{FIRST}=", timeout=20_000)                # the opinions column: 李专家=2, 张专家=4


def shoot(url: str, item_no: int, out: Path, saved: Path | None) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
            open_adjudication_list(page, url)
            page.fill("#team-adj-item input", str(item_no))
            page.click("#team-adj-open")
            page.wait_for_function("document.querySelector('#team-adj-opinions table')", timeout=20_000)
            page.locator("#team-adj-label label", has_text=FINAL_LABEL).click()
            page.fill("#team-adj-reason textarea", REASON)
            page.mouse.click(5, 5)                                      # blur the textarea: no caret in the picture
            page.wait_for_timeout(500)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True)
            if saved is not None:
                page.click("#team-adj-save")
                page.wait_for_function(f"(document.querySelector('#team-adj-status')?.innerText || '')"
                                       f".includes('{FINAL_LABEL}')", timeout=20_000)
                page.wait_for_timeout(500)
                saved.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(saved), full_page=True)
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/img/team_adjudication.png"))
    parser.add_argument("--saved", type=Path, default=None, help="also a PNG after the lead saves the label")
    parser.add_argument("--store", default=None, help="an empty PostgreSQL database URL (default: a temp SQLite file)")
    parser.add_argument("--postgres", action="store_true", help="start a throw-away PostgreSQL server and use it")
    parser.add_argument("--lang", choices=["zh", "en"], default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="team-shot-") as tmp:
        if args.postgres:
            from tests.helpers.postgres_server import PostgresServer

            # Its own folder in /tmp: as root the server runs as `postgres`, who cannot enter this 0700 one.
            with tempfile.TemporaryDirectory(prefix="team-shot-pg-") as folder, \
                    PostgresServer.start(Path(folder)) as server:
                take(args, server.create_database("screenshot"), Path(tmp))
        else:
            take(args, args.store or str(Path(tmp) / "runs.sqlite"), Path(tmp))
    for path in (args.out, args.saved):
        if path is not None:
            print(f"{path}: {path.stat().st_size / 1024:.0f} KB")


def take(args: argparse.Namespace, store: str, tmp: Path) -> None:
    """Prepare the store, serve the app on 127.0.0.1 and take the picture(s)."""
    _, items = prepare(store, tmp / "users.auth")
    app = launch_team(store, TeamAuth(read_auth_file(tmp / "users.auth")), port=free_port(), block=False, quiet=True,
                      lang=args.lang)
    try:
        shoot(app.local_url, items[DISPUTED], args.out, args.saved)
    finally:
        app.close()
        app.team_store.close()


if __name__ == "__main__":
    main()
