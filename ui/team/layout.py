"""The team app's components, in page order: a header, the expert's queue with one item, the lead's tasks, the
lead's adjudication view. Every label comes from the catalogue (rubriceval/i18n/team_text.py) and is registered with
`Words`, so a language switch relabels the page in place, as in the single-expert app (ui/audit/layout.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from rubriceval.i18n import Lang, t
from rubriceval.ui.common.wording import LANGUAGE_CHOICES, Relabelled, Wording, Words
from rubriceval.ui.team.actions import TeamSession
from rubriceval.ui.team.appeals_layout import AppealTabs, build_appeal_tabs
from rubriceval.ui.team.scorecard_review_layout import ScorecardReviewTab, build_scorecard_review_tab

SCORES = ["1", "2", "3", "4", "5"]


def sampling_choices(lang: Lang) -> list[tuple[str, str]]:
    return [(t(f"team_sampling_{m}", lang), m) for m in ("stratified", "least_sure", "lowest")]


def state_choices(lang: Lang) -> list[tuple[str, str]]:
    return [(t("team_any", lang), "")] + [(t(f"team_state_{s}", lang), s) for s in ("open", "scored", "unsure")]


@dataclass
class QueueTab:
    task_dd: gr.Dropdown
    whose_dd: gr.Dropdown
    state_dd: gr.Dropdown
    rubric_dd: gr.Dropdown
    tag_dd: gr.Dropdown
    open_btn: gr.Button
    progress: gr.Markdown
    table: gr.Dataframe
    page_info: gr.Markdown
    prev_page: gr.Button
    next_page: gr.Button
    item_number: gr.Number
    open_item_btn: gr.Button
    title: gr.Markdown
    sample_view: gr.HTML
    rubric_view: gr.HTML
    score: gr.Radio
    tags: gr.CheckboxGroup
    note: gr.Textbox
    save_btn: gr.Button
    unsure_btn: gr.Button
    next_btn: gr.Button
    status: gr.Markdown
    judge_view: gr.HTML
    metric_dd: gr.Dropdown
    metric_elements: gr.CheckboxGroup
    metric_reason: gr.Textbox
    metric_save: gr.Button
    tab: gr.Tab | None = None     # hidden from agents: they see only their own verdicts (the appeal tab)


@dataclass
class TasksTab:
    tab: gr.Tab
    run_dd: gr.Dropdown
    rubrics: gr.Dropdown
    n: gr.Number
    overlap: gr.Number
    experts: gr.Dropdown
    sampling: gr.Dropdown
    blind: gr.Checkbox
    name: gr.Textbox
    seed: gr.Number
    create_btn: gr.Button
    status: gr.Markdown
    tasks_table: gr.Dataframe
    progress_task: gr.Dropdown
    refresh_btn: gr.Button
    progress_table: gr.Dataframe
    agreement_btn: gr.Button
    agreement: gr.Markdown


@dataclass
class AdjudicationTab:
    tab: gr.Tab
    task_dd: gr.Dropdown
    include_settled: gr.Checkbox
    load_btn: gr.Button
    table: gr.Dataframe
    item_number: gr.Number
    open_btn: gr.Button
    title: gr.Markdown
    sample_view: gr.HTML
    opinions_view: gr.HTML
    judge_view: gr.HTML
    label: gr.Radio
    reason: gr.Textbox
    save_btn: gr.Button
    status: gr.Markdown


@dataclass
class TeamLayout(Relabelled):
    session: gr.State
    signed_in: gr.Markdown
    lang_dd: gr.Dropdown
    queue: QueueTab
    tasks: TasksTab
    adjudication: AdjudicationTab
    lang: Lang = "en"
    wording: list[Wording] = field(default_factory=list)
    appeals: AppealTabs | None = None     # appeals and calibration sessions (ui/team/appeals_layout.py)
    scorecard_review: ScorecardReviewTab | None = None   # 质检复核 (ui/team/scorecard_review_layout.py)

    @property
    def item_outputs(self) -> list[Any]:
        """What opening or saving an item updates, in the order of team_wiring.TeamHandlers.render_item."""
        q = self.queue
        return [self.session, q.title, q.sample_view, q.rubric_view, q.judge_view, q.score, q.tags, q.note,
                q.metric_dd, q.progress, q.table, q.page_info, q.status]


def _dropdown(words: Words, key: str, elem_id: str, **kwargs: Any) -> gr.Dropdown:
    # Custom values allowed: choices are filled per user after login, and values only reach SQL as parameters.
    return words(gr.Dropdown(label=words.text(key), elem_id=elem_id, allow_custom_value=True, **kwargs), label=key)


def _button(words: Words, key: str, elem_id: str, **kwargs: Any) -> gr.Button:
    return words(gr.Button(words.text(key), elem_id=elem_id, **kwargs), value=key)


def _queue_tab(words: Words) -> QueueTab:
    with gr.Row(equal_height=True):
        task_dd = _dropdown(words, "team_task", "team-task", choices=[], scale=2)
        whose_dd = _dropdown(words, "team_whose_queue", "team-whose", choices=[], scale=1)
        state_dd = words(gr.Dropdown(label=words.text("team_state"), choices=state_choices(words.lang), value="",
                                     elem_id="team-state", scale=1), label="team_state", choices=state_choices)
        rubric_dd = _dropdown(words, "team_col_rubric", "team-rubric", choices=[], scale=1)
        tag_dd = _dropdown(words, "team_tag", "team-tag", choices=[], scale=1)
        open_btn = _button(words, "team_open_queue", "team-open-queue", variant="primary", scale=0, min_width=120)
    progress = gr.Markdown(elem_id="team-progress")
    table = words(gr.Dataframe(interactive=False, wrap=False, max_height=260, elem_id="team-queue",
                               label=words.text("team_queue_label")), label="team_queue_label")
    with gr.Row():
        prev_page = _button(words, "team_prev_page", "team-prev-page", size="sm", scale=0, min_width=140)
        page_info = gr.Markdown(elem_id="team-page-info")
        next_page = _button(words, "team_next_page", "team-next-page", size="sm", scale=0, min_width=140)
        item_number = words(gr.Number(label=words.text("team_item_number"), precision=0, minimum=1, scale=0,
                                      min_width=100, elem_id="team-item-number"), label="team_item_number")
        open_item_btn = _button(words, "team_open_item", "team-open-item", size="sm", scale=0, min_width=120)
    title = gr.Markdown(elem_id="team-item-title")
    with gr.Row(elem_id="team-item"):
        with gr.Column(scale=1):
            sample_view = gr.HTML(elem_id="team-sample")
            with words(gr.Accordion(words.text("team_metric_title"), open=False, elem_id="team-metrics"),
                       label="team_metric_title"):
                metric_dd = _dropdown(words, "team_metric_pick", "team-metric", choices=[])
                metric_elements = words(gr.CheckboxGroup(label=words.text("team_metric_elements"),
                                                         elem_id="team-metric-elements"),
                                        label="team_metric_elements")
                metric_reason = words(gr.Textbox(label=words.text("team_metric_reason"), lines=1,
                                                 elem_id="team-metric-reason"), label="team_metric_reason")
                metric_save = _button(words, "team_metric_save", "team-metric-save")
        with gr.Column(scale=1):
            rubric_view = gr.HTML(elem_id="team-rubric")
            score = words(gr.Radio(choices=SCORES, label=words.text("team_your_score"), elem_id="team-score"),
                          label="team_your_score")
            tags = words(gr.CheckboxGroup(label=words.text("team_failure_tags"), elem_id="team-tags"),
                         label="team_failure_tags")
            note = words(gr.Textbox(label=words.text("team_note"), lines=2, elem_id="team-note"), label="team_note")
            with gr.Row():
                save_btn = _button(words, "team_save", "team-save", variant="primary")
                unsure_btn = _button(words, "team_unsure", "team-unsure")
                next_btn = _button(words, "team_next_item", "team-next")
            status = gr.Markdown(elem_id="team-status")
            judge_view = gr.HTML(elem_id="team-judge")
    return QueueTab(task_dd, whose_dd, state_dd, rubric_dd, tag_dd, open_btn, progress, table, page_info, prev_page,
                    next_page, item_number, open_item_btn, title, sample_view, rubric_view, score, tags, note,
                    save_btn, unsure_btn, next_btn, status, judge_view, metric_dd, metric_elements, metric_reason, metric_save)


def _tasks_tab(words: Words) -> TasksTab:
    # Hidden until the page load says the user is a lead (Gradio shows a hidden tab on update, not the reverse).
    with words(gr.Tab(words.text("team_tab_tasks"), id="team-tasks", visible=False), label="team_tab_tasks") as tab:
        with words(gr.Accordion(words.text("team_new_task"), open=True), label="team_new_task"):
            with gr.Row():
                run_dd = _dropdown(words, "team_run", "team-new-run", choices=[], scale=2)
                rubrics = _dropdown(words, "team_rubrics", "team-new-rubrics", choices=[], multiselect=True, scale=2)
                experts = _dropdown(words, "team_experts", "team-new-experts", choices=[], multiselect=True, scale=2)
            with gr.Row():
                n = words(gr.Number(100, label=words.text("team_n"), precision=0, minimum=1, elem_id="team-new-n"),
                          label="team_n")
                overlap = words(gr.Number(2, label=words.text("team_overlap"), precision=0, minimum=1,
                                          elem_id="team-new-overlap"), label="team_overlap")
                sampling = words(gr.Dropdown(label=words.text("team_sampling"), choices=sampling_choices(words.lang),
                                             value="stratified", elem_id="team-new-sampling", scale=2),
                                 label="team_sampling", choices=sampling_choices)
                blind = words(gr.Checkbox(True, label=words.text("team_blind"), elem_id="team-new-blind"),
                              label="team_blind")
                name = words(gr.Textbox(label=words.text("team_task_name"), elem_id="team-new-name"),
                             label="team_task_name")
                seed = words(gr.Number(0, label=words.text("team_seed"), precision=0, elem_id="team-new-seed",
                                       min_width=80, scale=0), label="team_seed")
            create_btn = _button(words, "team_create", "team-create", variant="primary")
            status = gr.Markdown(elem_id="team-create-status")
        tasks_table = words(gr.Dataframe(interactive=False, elem_id="team-tasks-table",
                                         label=words.text("team_tasks_table")), label="team_tasks_table")
        with gr.Row(equal_height=True):
            progress_task = _dropdown(words, "team_task", "team-progress-task", choices=[], scale=2)
            refresh_btn = _button(words, "team_refresh", "team-refresh", scale=0, min_width=100)
            agreement_btn = _button(words, "team_agreement", "team-agreement-btn", scale=0, min_width=200)
        progress_table = words(gr.Dataframe(interactive=False, elem_id="team-progress-table",
                                            label=words.text("team_progress_table")), label="team_progress_table")
        agreement = gr.Markdown(elem_id="team-agreement")
    return TasksTab(tab, run_dd, rubrics, n, overlap, experts, sampling, blind, name, seed, create_btn, status,
                    tasks_table, progress_task, refresh_btn, progress_table, agreement_btn, agreement)


def _adjudication_tab(words: Words) -> AdjudicationTab:
    with words(gr.Tab(words.text("team_tab_adjudicate"), id="team-adjudicate", visible=False),
               label="team_tab_adjudicate") as tab:
        with gr.Row(equal_height=True):
            task_dd = _dropdown(words, "team_task", "team-adj-task", choices=[], scale=2)
            include_settled = words(gr.Checkbox(True, label=words.text("team_adj_show_settled"),
                                                elem_id="team-adj-settled"), label="team_adj_show_settled")
            load_btn = _button(words, "team_open_queue", "team-adj-load", variant="primary", scale=0, min_width=120)
        table = words(gr.Dataframe(interactive=False, max_height=220, elem_id="team-adj-table",
                                   label=words.text("team_adj_queue")), label="team_adj_queue")
        with gr.Row():
            item_number = words(gr.Number(label=words.text("team_item_number"), precision=0, minimum=1, scale=0,
                                          min_width=100, elem_id="team-adj-item"), label="team_item_number")
            open_btn = _button(words, "team_open_item", "team-adj-open", size="sm", scale=0, min_width=120)
        title = gr.Markdown(elem_id="team-adj-title")
        with gr.Row(elem_id="team-adj-item-row"):
            with gr.Column(scale=1):
                sample_view = gr.HTML(elem_id="team-adj-sample")
            with gr.Column(scale=1):
                opinions_view = gr.HTML(elem_id="team-adj-opinions")
                label = words(gr.Radio(choices=SCORES, label=words.text("team_final_label"), elem_id="team-adj-label"),
                              label="team_final_label")
                reason = words(gr.Textbox(label=words.text("team_adj_reason"), lines=2, elem_id="team-adj-reason"),
                               label="team_adj_reason")
                save_btn = _button(words, "team_adj_save", "team-adj-save", variant="primary")
                status = gr.Markdown(elem_id="team-adj-status")
                judge_view = gr.HTML(elem_id="team-adj-judge")
    return AdjudicationTab(tab, task_dd, include_settled, load_btn, table, item_number, open_btn, title, sample_view,
                           opinions_view, judge_view, label, reason, save_btn, status)


def build_team_layout(lang: Lang) -> TeamLayout:
    """Create the components inside the caller's gr.Blocks, worded in `lang`."""
    words = Words(lang)
    session = gr.State(TeamSession(lang=lang))
    with gr.Row(equal_height=True):
        signed_in = gr.Markdown(elem_id="team-signed-in")
        lang_dd = words(gr.Dropdown(label=words.text("team_language"), choices=LANGUAGE_CHOICES, value=lang, scale=0,
                                    min_width=130, elem_id="team-lang"), label="team_language")
    with gr.Tabs():
        # Hidden until the page load says the user is no agent: Gradio 6 shows a hidden tab on update, but never
        # hides a tab the page was built with (an agent saw the queue tab's button).
        with words(gr.Tab(words.text("team_tab_queue"), id="team-queue-tab", visible=False),
                   label="team_tab_queue") as queue_tab:
            queue = _queue_tab(words)
        queue.tab = queue_tab
        tasks = _tasks_tab(words)
        adjudication = _adjudication_tab(words)
        appeals = build_appeal_tabs(words)
        scorecard_review = build_scorecard_review_tab(words)
    return TeamLayout(session, signed_in, lang_dd, queue, tasks, adjudication, lang, words.entries, appeals,
                      scorecard_review)
