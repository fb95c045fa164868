"""The audit app's scorecard review tab (评分表复核): the expert reads a conversation's scorecard verdict — total, each
deduction with its evidence marked on the transcript, N/A items, fatal hits — and confirms or rejects each deduction
with a reason, or adds a missed item.

The tab follows the header's run and language, and is shown only for a run that has scorecard verdicts (the list
endpoint says why not, for scripts). The reads and writes are the team app's (ui/common/scorecard_view_actions.py),
so a decision lands in the same review records and counts in `scorecard trust` and the reports alike. The expert is
the app's own rule for naming who saved (`who`, handed in by wiring.py, as for the turn controls).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import LANGS, Lang, t
from rubriceval.ui.common.errors import user_errors
from rubriceval.ui.common.scorecard_review_form import ReviewForm, build_review_form
from rubriceval.ui.common.scorecard_view_actions import Listing, ScorecardDesk
from rubriceval.ui.common.wording import Words


@dataclass
class ScorecardTab(ReviewForm):
    """The shared table and form, with the audit app's header: the tab, its intro line and load button."""
    tab: gr.Tab
    intro: gr.Markdown
    load_btn: gr.Button


def build_scorecard_tab(words: Words, visible: bool) -> ScorecardTab:
    """Create the tab inside the layout's gr.Tabs; `visible`: the opening run has scorecard verdicts."""
    with words(gr.Tab(words.text("scr_tab"), id="scorecard-review", visible=visible), label="scr_tab") as tab:
        with gr.Row(equal_height=True):
            intro = gr.Markdown(elem_id="scr-intro")
            load_btn = words(gr.Button(words.text("scr_load"), scale=0, min_width=120, elem_id="scr-load"),
                             value="scr_load")
        form = build_review_form(words)
    return ScorecardTab(**vars(form), tab=tab, intro=intro, load_btn=load_btn)


def _first(choices: list[tuple[str, str]]) -> Any:
    return gr.update(choices=choices, value=choices[0][1] if choices else None)


class ScorecardHandlers:
    def __init__(self, desk: ScorecardDesk, initial_run: str, lang: Lang):
        self.desk, self.initial_run, self.lang = desk, initial_run, lang

    def _lang(self, lang: Any) -> Lang:
        return lang if lang in LANGS else self.lang

    def _intro(self, listing: Listing, lang: Lang) -> str:
        n = len(listing.choices)
        return t("scr_listed", lang, n=n) if n else t("scr_none", lang)

    def do_list(self, run: str | None, lang: Any) -> list[Any]:
        """The run's verdicts (the first one picked); the tab hidden, and the intro saying why, without any."""
        lang = self._lang(lang)
        listing = self.desk.listing(run or self.initial_run, lang)
        return [gr.Tab(visible=bool(listing.choices)), self._intro(listing, lang), listing.frame,
                _first(listing.choices)]

    def do_open(self, run: str | None, key: str | None, lang: Any) -> list[Any]:
        lang = self._lang(lang)
        if not key:
            return ["", gr.update(choices=[], value=None)]
        run = run or self.initial_run
        opened = self.desk.open(run, self.desk.verdict(run, key, lang), lang)
        return [opened.html, _first(opened.items)]

    def do_save(self, reviewer: str, run: str | None, key: str | None, item: str | None, decision: str | None,
                note: str, lang: Any) -> list[Any]:
        lang = self._lang(lang)
        if not reviewer.strip():
            raise RubricEvalError(t("ui_need_name", lang), field="expert")
        if decision in ("reject", "missed") and not (note or "").strip():
            # Overriding the tool needs a reason here, as overriding the judge's score does in this app.
            raise RubricEvalError(t("scr_need_reason", lang), field="note")
        saved = self.desk.save(run or self.initial_run, key, item, decision, note, reviewer.strip(), lang)
        # The item saved stays picked: the expert sees its new label (· confirm) and may pick the next one.
        items = saved.opened.items
        return [saved.message, saved.opened.html, gr.update(choices=items, value=item), saved.listing.frame, ""]


def wire_scorecard(panel: ScorecardTab, handlers: ScorecardHandlers, run_dd: gr.Dropdown, lang_dd: gr.Dropdown,
                   expert: gr.Textbox, after: list[Any], who: Callable[[str, Any], str]) -> None:
    """Connect the tab (inside the app's Blocks). `after`: the app's events after which the run or the language
    may have changed (page load, run change, language change): the list is refreshed once each is done."""
    listed = [panel.tab, panel.intro, panel.table, panel.verdict_dd]
    panel.load_btn.click(user_errors(handlers.do_list), inputs=[run_dd, lang_dd], outputs=listed,
                         api_name="scorecard_list")
    for event in after:
        event.then(user_errors(handlers.do_list), inputs=[run_dd, lang_dd], outputs=listed, api_visibility="private")
    panel.verdict_dd.change(user_errors(handlers.do_open), inputs=[run_dd, panel.verdict_dd, lang_dd],
                            outputs=[panel.view, panel.item_dd], api_name="scorecard_open")

    def save(name: str, run: str | None, key: str | None, item: str | None, decision: str | None, note: str,
             lang: Any, request: gr.Request) -> list[Any]:
        return handlers.do_save(who(name, request), run, key, item, decision, note, lang)

    saved = [panel.status, panel.view, panel.item_dd, panel.table, panel.note]
    panel.save_btn.click(user_errors(save, saved, panel.status),
                         inputs=[expert, run_dd, panel.verdict_dd, panel.item_dd, panel.decision, panel.note, lang_dd],
                         outputs=saved, api_name="scorecard_save")
