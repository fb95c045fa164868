"""The audit app's layout: every component in page order, grouped the way the events (wiring.py) use them."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from ui import agreement_panel
from ui.queue import ANY, ORDER_CHOICES, QUEUE_COLUMNS, STATUS_CHOICES, AuditSession
from ui.turn_panel import TurnPanel, build_turn_panel

KEY_HELP = ('<div class="kbd-help">Keys (outside text boxes): <kbd>1</kbd>–<kbd>5</kbd> score · <kbd>A</kbd> agree '
            'with the judge and go on · <kbd>Enter</kbd> save and go to the next item.</div>')


@dataclass
class Header:
    session: gr.State
    agreement_state: gr.State
    expert: gr.Textbox
    run_dd: gr.Dropdown
    progress: gr.Markdown


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
class AuditLayout:
    header: Header
    filters: Filters
    queue: QueueTable
    item: ItemPanel
    agreement: AgreementTab
    export: ExportTab

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


def build_layout(run_choices: list[tuple[str, str]], initial_run: str, facets: dict[str, list[str]],
                 export_root: Path, auth_enabled: bool) -> AuditLayout:
    """Create the components inside the caller's gr.Blocks."""
    header = _header(run_choices, initial_run, auth_enabled)
    with gr.Tabs():
        with gr.Tab("Audit", id="audit"):
            filters = _filters(facets)
            queue = _queue_table()
            item = _item_panel()
        with gr.Tab("Agreement", id="agreement"):
            agreement = _agreement_tab()
        with gr.Tab("Export", id="export"):
            export = _export_tab(export_root)
    return AuditLayout(header, filters, queue, item, agreement, export)


def _header(run_choices: list[tuple[str, str]], initial_run: str, auth_enabled: bool) -> Header:
    session = gr.State(AuditSession())
    agreement_state = gr.State([])
    with gr.Row(equal_height=True):
        expert = gr.Textbox(label="Your name", placeholder="required before saving", elem_id="expert-name",
                            scale=1, interactive=not auth_enabled)
        run_dd = gr.Dropdown(label="Run", choices=run_choices, value=initial_run, scale=2, elem_id="run-dd")
        progress = gr.Markdown(elem_id="progress-bar")
    return Header(session, agreement_state, expert, run_dd, progress)


def _filters(facets: dict[str, list[str]]) -> Filters:
    with gr.Accordion("Queue filters", open=True):
        # Custom values allowed: another run's facets may be picked before the choices refresh, and
        # the values only ever reach SQL as bound parameters.
        with gr.Row(equal_height=True):
            scorer_dd = gr.Dropdown(label="Rubric", choices=[ANY, *facets["scorers"]], value=ANY,
                                    allow_custom_value=True, min_width=150, elem_id="filter-rubric")
            tag_dd = gr.Dropdown(label="Tag", choices=[ANY, *facets["tags"]], value=ANY,
                                 allow_custom_value=True, min_width=110, elem_id="filter-tag")
            intent_dd = gr.Dropdown(label="Intent", choices=[ANY, *facets["intents"]], value=ANY,
                                    allow_custom_value=True, min_width=120, elem_id="filter-intent")
            score_min = gr.Number(1, label="Judge ≥", minimum=1, maximum=5, precision=0, scale=0,
                                  min_width=80, elem_id="score-min")
            score_max = gr.Number(5, label="Judge ≤", minimum=1, maximum=5, precision=0, scale=0,
                                  min_width=80, elem_id="score-max")
            status_dd = gr.Dropdown(label="Show", choices=STATUS_CHOICES, value="all", min_width=170,
                                    elem_id="filter-status")
            order_dd = gr.Dropdown(label="Order", choices=ORDER_CHOICES, value="judge_asc",
                                   min_width=170, elem_id="filter-order")
            apply_btn = gr.Button("Open queue", variant="primary", scale=0, min_width=120, elem_id="apply-btn")
    return Filters(scorer_dd, tag_dd, intent_dd, score_min, score_max, status_dd, order_dd, apply_btn)


def _queue_table() -> QueueTable:
    table = gr.Dataframe(headers=QUEUE_COLUMNS, interactive=False, wrap=False, max_height=230,
                         elem_id="queue-table", label="Queue (click a row to open it)",
                         column_widths=["5%", "12%", "13%", "6%", "12%", "5%", "5%", "10%", "32%"])
    with gr.Row(elem_id="pager"):
        prev_page_btn = gr.Button("◀ Previous page", size="sm", scale=0, min_width=140, elem_id="prev-page-btn")
        page_info = gr.Markdown(elem_id="page-info")
        next_page_btn = gr.Button("Next page ▶", size="sm", scale=0, min_width=140, elem_id="next-page-btn")
        jump_to = gr.Number(value=1, precision=0, minimum=1, show_label=False, container=False,
                            scale=0, min_width=90, elem_id="jump-to")
        go_btn = gr.Button("Open item #", size="sm", scale=0, min_width=120, elem_id="go-btn")
    return QueueTable(table, prev_page_btn, page_info, next_page_btn, jump_to, go_btn)


def _item_panel() -> ItemPanel:
    title = gr.Markdown(elem_id="item-title")
    gr.HTML(KEY_HELP)
    with gr.Row(elem_id="audit-item"):
        with gr.Column(scale=1):
            sample_view = gr.HTML(elem_id="sample-view")
            with gr.Accordion("Correct the ground truth / mark contexts", open=False, elem_id="gt-accordion"):
                gt_box = gr.Textbox(label="Ground truth (reference answer)", lines=4, elem_id="gt-box")
                ctx_box = gr.CheckboxGroup(label="Relevant retrieved contexts", elem_id="ctx-box")
                save_gt_btn = gr.Button("Save ground truth", elem_id="save-gt-btn")
            history_view = gr.HTML(elem_id="gt-history")
        with gr.Column(scale=1):
            with gr.Column(elem_id="verdict-actions"):
                score_radio = gr.Radio(choices=["1", "2", "3", "4", "5"], label="Your score", elem_id="score-radio")
                reason_box = gr.Textbox(label="Reason (required when you differ from the judge)", lines=1,
                                        elem_id="reason-box")
                with gr.Row():
                    agree_btn = gr.Button("Agree with judge (A)", size="md", elem_id="agree-btn")
                    save_btn = gr.Button("Save & next (Enter)", variant="primary", size="md", elem_id="save-btn")
                with gr.Row():
                    prev_btn = gr.Button("◀ Previous", size="sm", elem_id="prev-btn")
                    next_btn = gr.Button("Skip ▶", size="sm", elem_id="next-btn")
                    reload_btn = gr.Button("Reload item", size="sm", elem_id="reload-btn")
                status = gr.Markdown(elem_id="audit-status")
            turns = build_turn_panel()
            judge_view = gr.HTML(elem_id="judge-view")
    return ItemPanel(title, sample_view, gt_box, ctx_box, save_gt_btn, history_view, score_radio, reason_box,
                     agree_btn, save_btn, prev_btn, next_btn, reload_btn, status, judge_view, turns)


def _agreement_tab() -> AgreementTab:
    refresh_btn = gr.Button("Compute agreement", variant="primary", elem_id="agreement-btn")
    headline = gr.Markdown(elem_id="agreement-headline")
    table = gr.Dataframe(headers=agreement_panel.SUMMARY_COLUMNS, interactive=False,
                         label="Judge vs experts, per rubric version", elem_id="agreement-table")
    rubric_pick = gr.Dropdown(label="Rubric version", choices=[], elem_id="agreement-rubric")
    with gr.Row():
        confusion_table = gr.Dataframe(interactive=False, label="Confusion (rows: expert, columns: judge)",
                                       elem_id="confusion-table")
        worst_table = gr.Dataframe(interactive=False, label="Largest disagreements", elem_id="worst-table")
    return AgreementTab(refresh_btn, headline, table, rubric_pick, confusion_table, worst_table)


def _export_tab(export_root: Path) -> ExportTab:
    gr.Markdown(f"Writes the run's dataset with every ground-truth correction applied, as a new version "
                f"(JSONL and Excel) with provenance in each corrected row's metadata, into `{export_root}`.")
    button = gr.Button("Export corrected dataset", variant="primary", elem_id="export-btn")
    status = gr.Markdown(elem_id="export-status")
    return ExportTab(button, status)
