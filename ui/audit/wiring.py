"""The audit app's behaviour: what each event does (AuditHandlers) and which component triggers it (`wire`).

Handlers return values in the order of the layout's output lists. A user mistake (no name, no reason…) is a warning
toast plus the same words in the status line beside the fields, and changes nothing else on the page: a raised
gr.Error would paint an "Error" pill over every output component, covering the very box the message asks to fill.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr

from rubriceval import AuditStore, RubricEvalError
from rubriceval.i18n import LANGS, Lang, t
from rubriceval.store.export import export_corrected_dataset
from rubriceval.store.turn_audit import export_turn_verdicts
from rubriceval.ui.audit import agreement_panel
from rubriceval.ui.audit.actions import ItemView, agree, edit_ground_truth, open_item, save_verdict
from rubriceval.ui.audit.layout import AuditLayout
from rubriceval.ui.audit.queue import (
    ANY,
    PAGE_SIZE,
    AuditSession,
    make_filter,
    open_queue,
    page_frame,
    page_label,
    progress_markdown,
)
from rubriceval.ui.audit.scorecard_panel import ScorecardHandlers, wire_scorecard
from rubriceval.ui.audit.turn_panel import TurnHandlers, wire_turns
from rubriceval.ui.common.errors import user_errors
from rubriceval.ui.common.scorecard_view_actions import ScorecardDesk


def _who(expert: str, request: gr.Request | None) -> str:
    """With authentication the login name is the expert; the free-text name is only used on loopback."""
    username = getattr(request, "username", None) if request is not None else None
    return username or (expert or "")


class AuditHandlers:
    """Event handlers over one audit store; `initial_run` stands in when no run is picked yet."""

    def __init__(self, store: AuditStore, initial_run: str, export_root: Path, lang: Lang = "en",
                 relabel: Callable[[Lang], list[Any]] = lambda lang: []):
        self.store = store
        self.initial_run = initial_run
        self.export_root = export_root
        self.lang = lang                 # the app's language until the expert picks another
        self.relabel = relabel           # the page's wording in a language (layout.AuditLayout.relabel)

    def render(self, state: AuditSession, who: str, view: ItemView, message: str) -> list[Any]:
        return [state, f"### {view.title}" if view.title else "", view.sample_html, view.judge_html,
                view.history_html, view.ground_truth,
                gr.update(choices=view.context_choices, value=view.relevant_contexts),
                gr.update(value=view.my_score), view.my_reason,
                progress_markdown(self.store.progress(state.run_id, who), state, who),
                page_frame(self.store, state), page_label(state), message]

    def keep_item(self, state: AuditSession, who: str, message: str) -> list[Any]:
        """Leave what the expert typed in place (after a conflict), refresh only progress and status."""
        return [state, *[gr.update()] * 8, progress_markdown(self.store.progress(state.run_id, who), state, who),
                gr.update(), gr.update(), message]

    def do_open_queue(self, name, run_id, scorer, tag, intent, low, high, show, order, current: AuditSession,
                      request: gr.Request) -> list[Any]:
        who = _who(name, request)
        started = time.perf_counter()
        lang = current.lang if current is not None and current.lang else self.lang
        state = open_queue(self.store, run_id or self.initial_run,
                           make_filter(who, scorer, tag, intent, low, high, show, order), lang=lang)
        view = open_item(self.store, state, 0, who)
        out = self.render(state, who, view, "")
        out[-1] = t("ui_queue_opened", lang, seconds=f"{time.perf_counter() - started:.2f}")
        return out

    def do_init(self, run_id: str, remembered: dict | None, request: gr.Request) -> list[Any]:
        """A page (re)load: the expert's name and language as this browser remembers them (with authentication the
        login name), so the queue's "you" column and the wording are the expert's own from the first render."""
        remembered = remembered if isinstance(remembered, dict) else {}
        who = _who(str(remembered.get("expert") or ""), request)
        lang = remembered.get("lang") if remembered.get("lang") in LANGS else self.lang
        queue_out = self.do_open_queue(who, run_id, ANY, ANY, ANY, 1, 5, "all", "judge_asc",
                                       AuditSession(lang=lang), request)
        return [gr.update(value=who) if who else gr.update(), gr.update(value=lang), *self.do_run_change(run_id),
                *queue_out, *self.relabel(lang)]

    def do_remember_name(self, name: str, remembered: dict | None) -> dict:
        return {**(remembered if isinstance(remembered, dict) else {}), "expert": (name or "").strip()}

    def do_language(self, lang: str, name, state: AuditSession, remembered: dict | None,
                    request: gr.Request) -> list[Any]:
        """The expert picked a language: relabel the page and show the open item again in it."""
        lang = lang if lang in LANGS else self.lang
        state.lang = lang
        who = _who(name, request)
        kept = {**(remembered if isinstance(remembered, dict) else {}), "lang": lang}
        view = open_item(self.store, state, max(state.index, 0), who)
        return [kept, *self.render(state, who, view, ""), *self.relabel(lang)]

    def do_open_item(self, name, state: AuditSession, number, request: gr.Request) -> list[Any]:
        who = _who(name, request)
        if number is None:
            raise RubricEvalError(t("ui_need_item_number", state.ui_lang))
        return self.render(state, who, open_item(self.store, state, int(number) - 1, who), "")

    def step(self, offset: int) -> Callable[..., list[Any]]:
        def handler(name, state: AuditSession, request: gr.Request) -> list[Any]:
            who = _who(name, request)
            return self.render(state, who, open_item(self.store, state, state.index + offset, who), "")
        return handler

    def change_page(self, offset: int) -> Callable[..., list[Any]]:
        def handler(state: AuditSession) -> tuple[Any, Any, Any]:
            state.page = max(0, min(state.page + offset, state.n_pages - 1))
            return state, page_frame(self.store, state), page_label(state)
        return handler

    def do_select(self, name, state: AuditSession, evt: gr.SelectData, request: gr.Request) -> list[Any]:
        who = _who(name, request)
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        return self.render(state, who, open_item(self.store, state, state.page * PAGE_SIZE + int(row), who), "")

    def after_save(self, state: AuditSession, who: str, outcome) -> list[Any]:
        if not outcome.saved:
            return self.keep_item(state, who, outcome.message)
        last = state.index >= len(state.rows) - 1
        view = open_item(self.store, state, state.index if last else state.index + 1, who)
        return self.render(state, who, view, outcome.message + (t("ui_end_of_queue", state.ui_lang) if last else ""))

    def do_save(self, name, state: AuditSession, score, reason, request: gr.Request) -> list[Any]:
        who = _who(name, request)
        return self.after_save(state, who, save_verdict(self.store, state, who, score, reason or ""))

    def do_agree(self, name, state: AuditSession, request: gr.Request) -> list[Any]:
        who = _who(name, request)
        return self.after_save(state, who, agree(self.store, state, who))

    def do_edit_gt(self, name, state: AuditSession, ground_truth, relevant, request: gr.Request) -> list[Any]:
        who = _who(name, request)
        outcome = edit_ground_truth(self.store, state, who, ground_truth or "", relevant)
        if not outcome.saved:
            return self.keep_item(state, who, outcome.message)
        # Stay on the item, re-rendered: the diff and the history show what was just saved.
        return self.render(state, who, open_item(self.store, state, state.index, who), outcome.message)

    def do_reload(self, name, state: AuditSession, request: gr.Request) -> list[Any]:
        who = _who(name, request)
        return self.render(state, who, open_item(self.store, state, state.index, who), t("ui_reloaded", state.ui_lang))

    def do_run_change(self, run_id: str) -> list[Any]:
        """The rubric, tag and intent filters of another run, reset to "any"."""
        facets = self.store.facets(run_id)
        return [gr.update(choices=[ANY, *facets["scorers"]], value=ANY),
                gr.update(choices=[ANY, *facets["tags"]], value=ANY),
                gr.update(choices=[ANY, *facets["intents"]], value=ANY)]

    def do_agreement(self, run_id: str, lang: Any = None) -> list[Any]:
        lang = lang if lang in LANGS else self.lang          # the page's, for the tables' headers
        results = agreement_panel.compute(self.store, run_id or self.initial_run)
        first = results[0] if results else None
        return [results, agreement_panel.headline(results, lang), agreement_panel.summary_frame(results, lang),
                gr.update(choices=[r.key for r in results], value=first.key if first else None),
                agreement_panel.confusion_frame(first, lang), agreement_panel.worst_frame(first, lang)]

    def do_pick_rubric(self, results: list, key: str, lang: Any = None) -> list[Any]:
        lang = lang if lang in LANGS else self.lang
        chosen = next((r for r in results if r.key == key), None)
        return [agreement_panel.confusion_frame(chosen, lang), agreement_panel.worst_frame(chosen, lang)]

    def do_export(self, run_id: str, state: AuditSession | None = None) -> str:
        lang = state.lang if state is not None and state.lang else self.lang
        run_id = run_id or self.initial_run
        name = self.store.runs.run_info(run_id).name
        stem = re.sub(r"[^\w.-]+", "_", name) + time.strftime("-corrected-%Y%m%d-%H%M%S")
        lines = []
        for suffix in (".jsonl", ".xlsx"):
            target = (self.export_root / (stem + suffix)).resolve()
            summary = export_corrected_dataset(self.store.path, run_id, target)
            lines.append(t("ui_exported_file", lang, path=summary.path, n=summary.n_samples,
                           corrected=summary.n_corrected))
        turns = self.store.turn_verdicts(run_id)          # conversations: the experts' verdicts on single turns
        if turns:
            target = (self.export_root / (stem + "-turn-verdicts.jsonl")).resolve()
            path = export_turn_verdicts(self.store, run_id, target)
            lines.append(f"- `{path}`: {len(turns)} turn verdicts (each expert's latest per turn)")
        return t("ui_exported", lang) + "\n" + "\n".join(lines)


def wire(app: gr.Blocks, ui: AuditLayout, handlers: AuditHandlers) -> None:
    """Connect the components to the handlers (inside the app's Blocks); api_name marks the scriptable endpoints."""
    h, f, q, i, a = ui.header, ui.filters, ui.queue, ui.item, ui.agreement
    items, filters = ui.item_outputs, [*ui.filter_inputs, h.session]
    handlers.relabel = ui.relabel

    def guarded(fn: Callable[..., Any], outputs: list[Any]) -> Callable[..., Any]:
        return user_errors(fn, outputs, i.status)

    init_outputs = [h.expert, h.lang_dd, *ui.facet_dropdowns, *items, *ui.worded]
    loaded = app.load(guarded(handlers.do_init, init_outputs), inputs=[h.run_dd, h.remembered],
                      outputs=init_outputs, api_visibility="private")
    h.expert.change(handlers.do_remember_name, inputs=[h.expert, h.remembered], outputs=[h.remembered],
                   api_visibility="private")
    language_outputs = [h.remembered, *items, *ui.worded]
    relabelled = h.lang_dd.input(guarded(handlers.do_language, language_outputs),
                                 inputs=[h.lang_dd, h.expert, h.session, h.remembered], outputs=language_outputs,
                                 api_visibility="private")
    f.apply_btn.click(guarded(handlers.do_open_queue, items), inputs=filters, outputs=items, api_name="open_queue")
    run_changed = h.run_dd.change(handlers.do_run_change, inputs=[h.run_dd], outputs=ui.facet_dropdowns,
                                  api_visibility="private").then(guarded(handlers.do_open_queue, items),
                                                                 inputs=filters, outputs=items,
                                                                 api_visibility="private")
    q.go_btn.click(guarded(handlers.do_open_item, items), inputs=[h.expert, h.session, q.jump_to], outputs=items,
                   api_name="open_item")
    q.table.select(guarded(handlers.do_select, items), inputs=[h.expert, h.session], outputs=items,
                   api_visibility="private")
    for button, offset in ((q.prev_page_btn, -1), (q.next_page_btn, +1)):
        button.click(handlers.change_page(offset), inputs=[h.session], outputs=[h.session, q.table, q.page_info],
                     api_visibility="private")
    i.prev_btn.click(guarded(handlers.step(-1), items), inputs=[h.expert, h.session], outputs=items,
                     api_name="previous_item")
    i.next_btn.click(guarded(handlers.step(+1), items), inputs=[h.expert, h.session], outputs=items,
                     api_name="next_item")
    i.reload_btn.click(guarded(handlers.do_reload, items), inputs=[h.expert, h.session], outputs=items,
                       api_name="reload_item")
    save_inputs = [h.expert, h.session, i.score_radio, i.reason_box]
    i.save_btn.click(guarded(handlers.do_save, items), inputs=save_inputs, outputs=items, api_name="save_verdict")
    i.reason_box.submit(guarded(handlers.do_save, items), inputs=save_inputs, outputs=items,
                        api_visibility="private")
    i.agree_btn.click(guarded(handlers.do_agree, items), inputs=[h.expert, h.session], outputs=items,
                      api_name="agree")
    i.save_gt_btn.click(guarded(handlers.do_edit_gt, items), inputs=[h.expert, h.session, i.gt_box, i.ctx_box],
                        outputs=items, api_name="edit_ground_truth")
    a.refresh_btn.click(user_errors(handlers.do_agreement), inputs=[h.run_dd, h.lang_dd],
                        outputs=[h.agreement_state, a.headline, a.table, a.rubric_pick, a.confusion_table,
                                 a.worst_table], api_name="agreement")
    a.rubric_pick.change(handlers.do_pick_rubric, inputs=[h.agreement_state, a.rubric_pick, h.lang_dd],
                         outputs=[a.confusion_table, a.worst_table], api_name="agreement_detail")
    ui.export.button.click(user_errors(handlers.do_export), inputs=[h.run_dd, h.session],
                           outputs=[ui.export.status], api_name="export")
    if ui.scorecard is not None:
        scorecards = ScorecardHandlers(ScorecardDesk(handlers.store.runs), handlers.initial_run, handlers.lang)
        wire_scorecard(ui.scorecard, scorecards, h.run_dd, h.lang_dd, h.expert, [loaded, relabelled, run_changed],
                       _who)
    if i.turns is not None:
        wire_turns(i.turns, TurnHandlers(handlers.store, i.turns), h.session, h.expert, i.sample_view, user_errors,
                   _who)
