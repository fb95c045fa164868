"""The audit app's layout: every component in page order, grouped the way the events (wiring.py) use them.

Every label, button and fixed text comes from the one catalogue (`rubriceval.i18n`) in the app's language, and is
registered in `AuditLayout.wording`, so switching the language relabels the page in place (`relabel`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr

from rubriceval.i18n import Lang, t
from rubriceval.ui.audit import agreement_panel
from rubriceval.ui.audit.queue import ANY, AuditSession, order_choices, queue_columns, status_choices
from rubriceval.ui.audit.scorecard_panel import ScorecardTab, build_scorecard_tab
from rubriceval.ui.audit.turn_panel import TurnPanel, build_turn_panel
from rubriceval.ui.common.wording import LANGUAGE_CHOICES, Relabelled, Wording, Words

# Where the browser keeps the expert's name and language across reloads (localStorage).
BROWSER_KEY = "rubriceval-audit"


def key_help(lang: Lang) -> str:
    return f'<div class="kbd-help">{t("ui_key_help", lang)}</div>'


@dataclass
class Header:
    session: gr.State
    agreement_state: gr.State
    expert: gr.Textbox
    run_dd: gr.Dropdown
    progress: gr.Markdown
    lang_dd: gr.Dropdown
    remembered: gr.BrowserState          # {"expert": name, "lang": "zh"|"en"}, kept by the browser


@dataclass
class Filters:
    scorer_dd: gr.Dropdown
    tag_dd: gr.Dropdown
    intent_dd: gr.Dropdown
    score_min: gr.Number
    score_max: gr.Number
    status_dd: gr.Dropdown
    order_dd: gr.Dropdown
    apply_btn: gr.Button


@dataclass
class QueueTable:
    table: gr.Dataframe
    prev_page_btn: gr.Button
    page_info: gr.Markdown
    next_page_btn: gr.Button
    jump_to: gr.Number
    go_btn: gr.Button


@dataclass
class ItemPanel:
    title: gr.Markdown
    sample_view: gr.HTML
    gt_box: gr.Textbox
    ctx_box: gr.CheckboxGroup
    save_gt_btn: gr.Button
    history_view: gr.HTML
    score_radio: gr.Radio
    reason_box: gr.Textbox
    agree_btn: gr.Button
    save_btn: gr.Button
    prev_btn: gr.Button
    next_btn: gr.Button
    reload_btn: gr.Button
    status: gr.Markdown
    judge_view: gr.HTML
    turns: TurnPanel | None = None      # conversations: verdicts on single agent turns


@dataclass
class AgreementTab:
    refresh_btn: gr.Button
    headline: gr.Markdown
    table: gr.Dataframe
    rubric_pick: gr.Dropdown
    confusion_table: gr.Dataframe
    worst_table: gr.Dataframe


@dataclass
class ExportTab:
    button: gr.Button
    status: gr.Markdown


@dataclass
class AuditLayout(Relabelled):
    header: Header
    filters: Filters
    queue: QueueTable
    item: ItemPanel
    agreement: AgreementTab
    export: ExportTab
    lang: Lang = "en"
    wording: list[Wording] = field(default_factory=list)
    scorecard: ScorecardTab | None = None     # 评分表复核 (ui/audit/scorecard_panel.py)

    @property
    def item_outputs(self) -> list[Any]:
        """What every item-changing event updates, in the order of wiring.AuditHandlers.render."""
        h, i, q = self.header, self.item, self.queue
        return [h.session, i.title, i.sample_view, i.judge_view, i.history_view, i.gt_box, i.ctx_box, i.score_radio,
                i.reason_box, h.progress, q.table, q.page_info, i.status]

    @property
    def filter_inputs(self) -> list[Any]:
        f = self.filters
        return [self.header.expert, self.header.run_dd, f.scorer_dd, f.tag_dd, f.intent_dd, f.score_min, f.score_max,
                f.status_dd, f.order_dd]

    @property
    def facet_dropdowns(self) -> list[gr.Dropdown]:
        return [self.filters.scorer_dd, self.filters.tag_dd, self.filters.intent_dd]


def build_layout(runs: Sequence[Any], initial_run: str, facets: dict[str, list[str]], export_root: Path,
                 auth_enabled: bool, lang: Lang = "en", browser_secret: str | None = None,
                 scorecards: bool = False) -> AuditLayout:
    """Create the components inside the caller's gr.Blocks, worded in `lang`. `runs`: the store's RunInfo list.
    browser_secret: what the browser's copy of the name and language is sealed with (stable across restarts).
    scorecards: the opening run has scorecard verdicts (their review tab is shown)."""
    words = Words(lang)
    header = _header(words, runs, initial_run, auth_enabled, browser_secret)
    with gr.Tabs():
        with words(gr.Tab(words.text("ui_tab_audit"), id="audit"), label="ui_tab_audit"):
            filters = _filters(words, facets)
            queue = _queue_table(words)
            item = _item_panel(words)
        scorecard = build_scorecard_tab(words, scorecards)
        with words(gr.Tab(words.text("ui_tab_agreement"), id="agreement"), label="ui_tab_agreement"):
            agreement = _agreement_tab(words)
        with words(gr.Tab(words.text("ui_tab_export"), id="export"), label="ui_tab_export"):
            export = _export_tab(words, export_root)
    return AuditLayout(header, filters, queue, item, agreement, export, lang, words.entries, scorecard)


def run_choices(runs: Sequence[Any], lang: Lang) -> list[tuple[str, str]]:
    return [(t("ui_run_choice", lang, name=r.name, status=r.status, n=r.n_samples), r.run_id) for r in runs]


def _header(words: Words, runs: Sequence[Any], initial_run: str, auth_enabled: bool,
            browser_secret: str | None) -> Header:
    session = gr.State(AuditSession(lang=words.lang))
    agreement_state = gr.State([])
    remembered = gr.BrowserState({}, storage_key=BROWSER_KEY, secret=browser_secret)
    with gr.Row(equal_height=True):
        expert = words(gr.Textbox(label=words.text("ui_your_name"), placeholder=words.text("ui_name_placeholder"),
                                  elem_id="expert-name", scale=1, interactive=not auth_enabled),
                       label="ui_your_name", placeholder="ui_name_placeholder")
        run_dd = words(gr.Dropdown(label=words.text("ui_run"), choices=run_choices(runs, words.lang),
                                   value=initial_run, scale=2, elem_id="run-dd"),
                       label="ui_run", choices=lambda lang: run_choices(runs, lang))
        progress = gr.Markdown(elem_id="progress-bar")
        lang_dd = words(gr.Dropdown(label=words.text("ui_language"), choices=LANGUAGE_CHOICES, value=words.lang,
                                    scale=0, min_width=130, elem_id="lang-dd"), label="ui_language")
    return Header(session, agreement_state, expert, run_dd, progress, lang_dd, remembered)


def _filters(words: Words, facets: dict[str, list[str]]) -> Filters:
    with words(gr.Accordion(words.text("ui_filters"), open=True), label="ui_filters"):
        # Custom values allowed: another run's facets may be picked before the choices refresh, and
        # the values only ever reach SQL as bound parameters.
        with gr.Row(equal_height=True):
            scorer_dd = words(gr.Dropdown(label=words.text("ui_filter_rubric"), choices=[ANY, *facets["scorers"]],
                                          value=ANY, allow_custom_value=True, min_width=150, elem_id="filter-rubric"),
                              label="ui_filter_rubric")
            tag_dd = words(gr.Dropdown(label=words.text("ui_filter_tag"), choices=[ANY, *facets["tags"]], value=ANY,
                                       allow_custom_value=True, min_width=110, elem_id="filter-tag"),
                           label="ui_filter_tag")
            intent_dd = words(gr.Dropdown(label=words.text("ui_filter_intent"), choices=[ANY, *facets["intents"]],
                                          value=ANY, allow_custom_value=True, min_width=120, elem_id="filter-intent"),
                              label="ui_filter_intent")
            score_min = words(gr.Number(1, label=words.text("ui_judge_min"), minimum=1, maximum=5, precision=0,
                                        scale=0, min_width=80, elem_id="score-min"), label="ui_judge_min")
            score_max = words(gr.Number(5, label=words.text("ui_judge_max"), minimum=1, maximum=5, precision=0,
                                        scale=0, min_width=80, elem_id="score-max"), label="ui_judge_max")
            status_dd = words(gr.Dropdown(label=words.text("ui_show"), choices=status_choices(words.lang),
                                          value="all", min_width=170, elem_id="filter-status"),
                              label="ui_show", choices=status_choices)
            order_dd = words(gr.Dropdown(label=words.text("ui_order"), choices=order_choices(words.lang),
                                         value="judge_asc", min_width=170, elem_id="filter-order"),
                             label="ui_order", choices=order_choices)
            apply_btn = words(gr.Button(words.text("ui_open_queue"), variant="primary", scale=0, min_width=120,
                                        elem_id="apply-btn"), value="ui_open_queue")
    return Filters(scorer_dd, tag_dd, intent_dd, score_min, score_max, status_dd, order_dd, apply_btn)


def _queue_table(words: Words) -> QueueTable:
    table = words(gr.Dataframe(headers=queue_columns(words.lang), interactive=False, wrap=False, max_height=230,
                               elem_id="queue-table", label=words.text("ui_queue_label"),
                               column_widths=["5%", "12%", "13%", "6%", "12%", "5%", "5%", "10%", "32%"]),
                  label="ui_queue_label")
    with gr.Row(elem_id="pager"):
        prev_page_btn = words(gr.Button(words.text("ui_prev_page"), size="sm", scale=0, min_width=140,
                                        elem_id="prev-page-btn"), value="ui_prev_page")
        page_info = gr.Markdown(elem_id="page-info")
        next_page_btn = words(gr.Button(words.text("ui_next_page"), size="sm", scale=0, min_width=140,
                                        elem_id="next-page-btn"), value="ui_next_page")
        jump_to = gr.Number(value=1, precision=0, minimum=1, show_label=False, container=False,
                            scale=0, min_width=90, elem_id="jump-to")
        go_btn = words(gr.Button(words.text("ui_open_item_number"), size="sm", scale=0, min_width=120,
                                 elem_id="go-btn"), value="ui_open_item_number")
    return QueueTable(table, prev_page_btn, page_info, next_page_btn, jump_to, go_btn)


def _item_panel(words: Words) -> ItemPanel:
    title = gr.Markdown(elem_id="item-title")
    words(gr.HTML(key_help(words.lang)), value=key_help)
    with gr.Row(elem_id="audit-item"):
        with gr.Column(scale=1):
            sample_view = gr.HTML(elem_id="sample-view")
            with words(gr.Accordion(words.text("ui_gt_accordion"), open=False, elem_id="gt-accordion"),
                       label="ui_gt_accordion"):
                gt_box = words(gr.Textbox(label=words.text("ui_gt_box"), lines=4, elem_id="gt-box"),
                               label="ui_gt_box")
                ctx_box = words(gr.CheckboxGroup(label=words.text("ui_ctx_box"), elem_id="ctx-box"),
                                label="ui_ctx_box")
                save_gt_btn = words(gr.Button(words.text("ui_save_gt"), elem_id="save-gt-btn"), value="ui_save_gt")
            history_view = gr.HTML(elem_id="gt-history")
        with gr.Column(scale=1):
            with gr.Column(elem_id="verdict-actions"):
                score_radio = words(gr.Radio(choices=["1", "2", "3", "4", "5"], label=words.text("ui_your_score"),
                                             elem_id="score-radio"), label="ui_your_score")
                reason_box = words(gr.Textbox(label=words.text("ui_reason"), lines=1, elem_id="reason-box"),
                                   label="ui_reason")
                with gr.Row():
                    agree_btn = words(gr.Button(words.text("ui_agree"), size="md", elem_id="agree-btn"),
                                      value="ui_agree")
                    save_btn = words(gr.Button(words.text("ui_save_next"), variant="primary", size="md",
                                               elem_id="save-btn"), value="ui_save_next")
                with gr.Row():
                    prev_btn = words(gr.Button(words.text("ui_prev"), size="sm", elem_id="prev-btn"), value="ui_prev")
                    next_btn = words(gr.Button(words.text("ui_skip"), size="sm", elem_id="next-btn"), value="ui_skip")
                    reload_btn = words(gr.Button(words.text("ui_reload"), size="sm", elem_id="reload-btn"),
                                       value="ui_reload")
                # Validation messages appear here, beside the fields they are about (and as a warning toast).
                status = gr.Markdown(elem_id="audit-status")
            turns = build_turn_panel(words.lang)
            words(turns.turn_dd, label="cv_turn_pick")
            words(turns.score_radio, label="cv_turn_score")
            words(turns.reason_box, label="cv_turn_reason")
            words(turns.save_btn, value="cv_save_turn")
            judge_view = gr.HTML(elem_id="judge-view")
    return ItemPanel(title, sample_view, gt_box, ctx_box, save_gt_btn, history_view, score_radio, reason_box,
                     agree_btn, save_btn, prev_btn, next_btn, reload_btn, status, judge_view, turns)


def _agreement_tab(words: Words) -> AgreementTab:
    refresh_btn = words(gr.Button(words.text("ui_agreement_compute"), variant="primary", elem_id="agreement-btn"),
                        value="ui_agreement_compute")
    headline = gr.Markdown(elem_id="agreement-headline")
    table = words(gr.Dataframe(headers=agreement_panel.columns(agreement_panel.SUMMARY_IDS, words.lang),
                               interactive=False,
                               label=words.text("ui_agreement_table"), elem_id="agreement-table"),
                  label="ui_agreement_table")
    rubric_pick = words(gr.Dropdown(label=words.text("ui_agreement_rubric"), choices=[], elem_id="agreement-rubric"),
                        label="ui_agreement_rubric")
    with gr.Row():
        confusion_table = words(gr.Dataframe(interactive=False, label=words.text("ui_agreement_confusion"),
                                             elem_id="confusion-table"), label="ui_agreement_confusion")
        worst_table = words(gr.Dataframe(interactive=False, label=words.text("ui_agreement_worst"),
                                         elem_id="worst-table"), label="ui_agreement_worst")
    return AgreementTab(refresh_btn, headline, table, rubric_pick, confusion_table, worst_table)


def _export_tab(words: Words, export_root: Path) -> ExportTab:
    words(gr.Markdown(t("ui_export_intro", words.lang, folder=export_root)),
          value=lambda lang: t("ui_export_intro", lang, folder=export_root))
    button = words(gr.Button(words.text("ui_export"), variant="primary", elem_id="export-btn"), value="ui_export")
    status = gr.Markdown(elem_id="export-status")
    return ExportTab(button, status)
