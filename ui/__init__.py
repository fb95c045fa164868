"""The expert audit app (Gradio) for rubriceval runs.

app.py              — build_app() / launch()
layout.py           — the components, in page order
wiring.py           — what each event does and which component triggers it
queue.py            — filters → ordered queue, pages, progress
item_view.py        — HTML of one item (sample | rubric + judge verdict + evidence), diffs
actions.py          — open / agree / override / correct ground truth (no Gradio in here)
agreement_panel.py  — judge-vs-expert and expert-vs-expert statistics per rubric version
assets.py           — keyboard shortcuts (head script) and CSS
demo.py             — a small demo store, to try the app without running a judge

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
