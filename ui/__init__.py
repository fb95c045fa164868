"""The browser apps for rubriceval runs (Gradio), installed as `rubriceval.ui`:

audit/app.py        — the expert audit app: build_app() / launch() (audit/: layout, wiring, queue, actions,
                      agreement_panel, scorecard_panel, turn_panel, demo — a small store to try it without a judge)
team/app.py         — the team audit app: logins and roles, blind reviews, adjudication, appeals (launch_team)
studio/app.py       — the rubric studio: author, test, preview, try and version rubrics and scorecards
common/item_view.py — what the apps share (common/): item and transcript views, scorecard views, wording, the
                      loopback rule and logins (auth.py), user-error display, CSS and shortcuts (assets.py)

`from rubriceval.ui import launch` starts the audit app (Gradio loads on first use).
"""
from __future__ import annotations

from typing import Any

__all__ = ["build_app", "launch"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from rubriceval.ui.audit import app
        return getattr(app, name)
    raise AttributeError(f"module 'rubriceval.ui' has no attribute {name!r}")
