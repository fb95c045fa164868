"""The expert audit app (Gradio): a queue of judge verdicts, one item side by side, agree/override, ground-truth
corrections, agreement statistics and a corrected-dataset export.

`launch()` is what `rubriceval audit` calls; `build_app()` returns the Blocks for tests and embedding. The app reads
and writes only the run store (a SQLite file or a PostgreSQL database) and the export folder. The components are in
layout.py, what they do in
wiring.py.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import gradio as gr

from rubriceval import AuditStore, RubricEvalError
from rubriceval.i18n import Lang, check_lang, detect_language, t
from rubriceval.store.location import display_location, folder_beside_store, is_server_url
from rubriceval.ui.audit.layout import build_layout
from rubriceval.ui.audit.wiring import AuditHandlers, wire
from rubriceval.ui.common.assets import APP_CSS, KEYBOARD_HEAD
from rubriceval.ui.common.auth import Auth, require_auth_off_loopback
from rubriceval.ui.common.scorecard_view_actions import ScorecardDesk
from rubriceval.ui.common.transcript_view import TRANSCRIPT_CSS


def default_export_dir(store_path: str | Path) -> Path:
    """exports/ beside a SQLite store file, out/exports for a PostgreSQL store (it has no folder here)."""
    return folder_beside_store(store_path).resolve() / "exports"


def store_identity(store_path: str | Path) -> str:
    """One stable name per store for the browser-state key: the file's absolute path, or the URL without password."""
    return display_location(store_path) if is_server_url(store_path) else str(Path(store_path).resolve())


def data_language(store: AuditStore, run_id: str) -> Lang:
    """The report's rule: the language most of the run's samples are in (a first window of them is enough)."""
    return detect_language(sample for sample, _ in next(store.runs.sample_windows(run_id), []))


def build_app(store_path: str | Path, run: str | None = None, export_dir: str | Path | None = None,
              auth_enabled: bool = False, lang: str | None = None) -> gr.Blocks:
    """lang: 'zh' or 'en'; default the data's language (as the report chooses). The page can switch it."""
    store = AuditStore(store_path)
    export_root = Path(export_dir) if export_dir else default_export_dir(store_path)
    runs = store.runs.list_runs()
    if not runs:
        raise RubricEvalError("the store holds no runs yet", file=display_location(store_path),
                              hint="run `rubriceval run` first")
    initial_run = store.resolve(run) if run else runs[-1].run_id
    chosen = check_lang(lang) or data_language(store, initial_run)
    with gr.Blocks(title=t("ui_title", chosen), analytics_enabled=False) as app:
        # The browser keeps the expert's name and language (not secrets); one key per store, so they survive restarts.
        secret = hashlib.sha256(store_identity(store_path).encode()).hexdigest()
        scorecards = ScorecardDesk(store.runs).has_verdicts(initial_run)
        layout = build_layout(runs, initial_run, store.facets(initial_run), export_root, auth_enabled, chosen, secret,
                              scorecards)
        wire(app, layout, AuditHandlers(store, initial_run, export_root, chosen))
    app.audit_store = store          # for tests and for closing the connection with the app
    app.audit_layout = layout        # for tests: which tabs the opening run shows
    return app


def launch(store_path: str | Path, run: str | None = None, host: str = "127.0.0.1", port: int = 7860,
           export_dir: str | Path | None = None, auth: Auth | None = None, *, block: bool = True,
           quiet: bool = True, lang: str | None = None) -> gr.Blocks:
    """Serve the audit app. Off loopback, `auth` is mandatory. block=False returns once the server is up.

    Never shared through Gradio's tunnel; quiet (the default) leaves out Gradio's start-up lines, its "set
    share=True" advice among them (`rubriceval audit` prints the address itself)."""
    require_auth_off_loopback(host, auth)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")   # no version check or telemetry calls
    app = build_app(store_path, run=run, export_dir=export_dir, auth_enabled=auth is not None, lang=lang)
    app.queue(default_concurrency_limit=4)
    app.launch(server_name=host, server_port=port, auth=auth, prevent_thread_lock=not block, show_error=True,
               share=False, ssr_mode=False, quiet=quiet, head=KEYBOARD_HEAD, css=APP_CSS + TRANSCRIPT_CSS,
               footer_links=[])
    return app
