"""The team audit app: experts review their share of a lead's tasks (blind until they save), mark items unsure,
tick failure tags and correct metric verdicts; leads create tasks, follow everyone's progress and settle the items
the experts disagree on. Every user logs in (salted hashes in the auth file, sessions that expire, throttled
failures: rubriceval/audit/); what a user may do is decided on the server by their role.

`rubriceval audit --auth-file F` serves this app; without an auth file `rubriceval audit` serves the single-expert
app (ui/audit/app.py) on loopback only — the rule is the same one (`require_auth_off_loopback`).
"""
from __future__ import annotations

import os
from pathlib import Path

import gradio as gr
from starlette.middleware import Middleware

from rubriceval.audit.sessions import LoginAddressMiddleware, ProxyNetwork, TeamAuth
from rubriceval.audit.team import TeamStore
from rubriceval.i18n import Lang, check_lang, detect_language, t
from rubriceval.store.location import is_server_url
from rubriceval.ui.common.assets import APP_CSS
from rubriceval.ui.common.auth import require_auth_off_loopback
from rubriceval.ui.common.transcript_view import TRANSCRIPT_CSS
from rubriceval.ui.team.appeals_wiring import AppealHandlers, wire_appeals
from rubriceval.ui.team.layout import build_team_layout
from rubriceval.ui.team.page_language import I18N, PageLanguageMiddleware
from rubriceval.ui.team.scorecard_review_wiring import ScorecardReviewHandlers, wire_scorecard_review
from rubriceval.ui.team.wiring import TeamHandlers, wire_team

TEAM_CSS = """
.judge-hidden { padding: 12px; border: 1px dashed #999; border-radius: 6px; color: #555; }
table.opinions td, table.opinions th { padding: 4px 8px; }
tr.opinion-unsure td { background: #fff6d6; }
/* expert, state, score, blind: short cells that wrapped mid-word (张专/家, 已评/分) beside a long note */
table.opinions th:nth-child(-n+4), table.opinions td:nth-child(-n+4) { white-space: nowrap; }
tr.opinion-judge td { background: #f3f4f6; }
.opinion-pass { font-size: 0.85em; color: #555; }
"""


def data_language(team: TeamStore) -> Lang:
    """The language most samples of the newest run are in (the report's rule; a first window is enough)."""
    runs = team.audit.runs.list_runs()
    if not runs:
        return "en"
    return detect_language(sample for sample, _ in next(team.audit.runs.sample_windows(runs[-1].run_id), []))


def build_team_app(store_path: str | Path, auth: TeamAuth, lang: str | None = None) -> gr.Blocks:
    team = TeamStore(store_path)
    auth.bind(team)
    chosen: Lang = check_lang(lang) or data_language(team)
    with gr.Blocks(title=t("team_title", chosen), analytics_enabled=False) as app:
        layout = build_team_layout(chosen)
        handlers = TeamHandlers(app, team, auth, chosen)
        wire_team(app, layout, handlers)
        wire_appeals(app, layout.appeals, layout.session, AppealHandlers(handlers))   # agents, appeals, 校准会
        wire_scorecard_review(app, layout.scorecard_review, layout.session, ScorecardReviewHandlers(handlers))
    app.team_store = team            # for tests, and to close the connection with the app
    app.team_lang = chosen           # the page's language, login page included (page_language.py)
    return app


def launch_team(store_path: str | Path, auth: TeamAuth, *, host: str = "127.0.0.1", port: int = 7860,
                block: bool = True, quiet: bool = True, lang: str | None = None,
                trusted_proxies: tuple[ProxyNetwork, ...] = ()) -> gr.Blocks:
    """Serve the team app (never through Gradio's share tunnel). block=False returns once the server is up.
    trusted_proxies: the reverse proxies in front of it, whose X-Forwarded-For names the client (sessions.py)."""
    require_auth_off_loopback(host, auth)
    if not is_server_url(store_path) and not Path(store_path).is_file():   # a server store: TeamStore checks
        from rubriceval.common.errors import RubricEvalError

        raise RubricEvalError("run store not found", file=str(store_path), hint="run `rubriceval run …` first")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    app = build_team_app(store_path, auth, lang)
    app.queue(default_concurrency_limit=4)
    app.launch(server_name=host, server_port=port, auth=auth, prevent_thread_lock=not block, show_error=True,
               share=False, ssr_mode=False, quiet=quiet, css=APP_CSS + TRANSCRIPT_CSS + TEAM_CSS, footer_links=[],
               i18n=I18N, auth_message=t("team_login_message", app.team_lang),
               app_kwargs={"middleware": [Middleware(LoginAddressMiddleware, trusted_proxies=trusted_proxies),
                                          Middleware(PageLanguageMiddleware, lang=app.team_lang)]})
    return app
