"""The studio's scorecard tab (评分卡): the card as a form — its fields, dimensions, an overview of its items and one
item's editor — above the card's YAML, which the form writes into; then validate, try, diff and save."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from rubriceval.i18n import Lang, t
from rubriceval.studio.card_form import PREDICATES, check_kinds
from rubriceval.ui.common.wording import choices, headers
from rubriceval.ui.studio.card_fit import FitLayout, build_fit_section

CARD_ITEM_COLUMNS = ["id", "dimension", "name", "predicate", "points", "counted", "fatal", "applies_when"]


@dataclass
class CardLayout:
    card_file: gr.Dropdown
    card_open: gr.Button
    head: list[Any]              # CardHead's fields, in its order
    apply_head: gr.Button
    items: gr.Dataframe
    pick: gr.Dropdown
    item: list[Any]              # ItemForm's fields, in its order
    check_box: gr.Group
    question_box: gr.Group
    rubric_box: gr.Group
    apply_item: gr.Button
    remove_item: gr.Button
    card_text: gr.Code
    card_validate: gr.Button
    card_try: gr.Button
    card_diff: gr.Button
    card_save: gr.Button
    card_status: gr.Textbox
    card_results: gr.Dataframe
    card_diff_view: gr.Code
    fit: FitLayout                 # 复核校准: reviewed cut-offs proposed as the card's next version (issue 44.1)


def build_card_tab(lang: Lang, card_columns: list[str]) -> CardLayout:
    def say(key: str, **kw: Any) -> str:
        return t(key, lang, **kw)

    with gr.Row():
        card_file = gr.Dropdown(label=say("studio_scorecard"), choices=[], allow_custom_value=True,
                                elem_id="studio-card-file", scale=3)
        card_open = gr.Button(say("studio_open"), elem_id="studio-card-open", scale=1)
    gr.Markdown(f"#### {say('studio_card_form')}")
    with gr.Row():
        head = [gr.Textbox(label=say("studio_card_id"), elem_id="studio-card-id"),
                gr.Textbox(label=say("studio_card_name"), elem_id="studio-card-name"),
                gr.Number(label=say("studio_card_base"), value=100, precision=0, elem_id="studio-card-base"),
                gr.Number(label=say("studio_card_pass"), precision=0, elem_id="studio-card-pass")]
    head.append(gr.Textbox(label=say("studio_card_dimensions"), lines=3, elem_id="studio-card-dimensions"))
    apply_head = gr.Button(say("studio_card_apply_head"), elem_id="studio-card-apply-head")
    items = gr.Dataframe(headers=headers(CARD_ITEM_COLUMNS, lang), interactive=False, wrap=True,
                         label=say("studio_card_items"),
                         elem_id="studio-card-items")
    kinds = check_kinds()
    with gr.Row():
        pick = gr.Dropdown(label=say("studio_card_pick"), choices=[say("studio_card_new_item")],
                           value=say("studio_card_new_item"), allow_custom_value=True, elem_id="studio-card-pick",
                           scale=3)
        remove_item = gr.Button(say("studio_card_remove_item"), variant="stop", elem_id="studio-card-remove",
                                scale=1)
    with gr.Row():
        item_id = gr.Textbox(label=say("studio_card_item_id"), elem_id="studio-card-item-id")
        name = gr.Textbox(label=say("studio_card_item_name"), elem_id="studio-card-item-name")
        dimension = gr.Dropdown(label=say("studio_card_dimension"), choices=[], allow_custom_value=True,
                                elem_id="studio-card-item-dimension")
    description = gr.Textbox(label=say("studio_card_item_description"))
    with gr.Row():
        predicate = gr.Radio(choices(list(PREDICATES), lang, "studio_choice_pred_"), value="question",
                             label=say("studio_card_predicate"), elem_id="studio-card-predicate")
        points = gr.Number(label=say("studio_card_points"), precision=0, elem_id="studio-card-points")
        per = gr.Radio(choices(["conversation", "occurrence"], lang, "studio_choice_per_"), value="conversation",
                       label=say("studio_card_per"))
        cap = gr.Number(label=say("studio_card_cap"), precision=0, minimum=1)
        fatal = gr.Checkbox(label=say("studio_card_fatal"), elem_id="studio-card-fatal")
    with gr.Group(visible=False) as check_box:
        with gr.Row():
            check_type = gr.Dropdown(list(kinds), label=say("studio_card_check_type"), allow_custom_value=True,
                                     elem_id="studio-card-check-type")
            turns = gr.Dropdown(choices(["", "assistant", "user"], lang, "studio_choice_turns_"), value="",
                                label=say("studio_card_turns"))
        check_fields = gr.Textbox(label=say("studio_card_check_fields"), lines=3, elem_id="studio-card-check-fields")
    with gr.Group(visible=True) as question_box:
        with gr.Row():
            question = gr.Textbox(label=say("studio_card_question"), scale=3, elem_id="studio-card-question")
            hit_on = gr.Dropdown(choices(["", "yes", "no"], lang, "studio_choice_hit_"), value="",
                                 label=say("studio_card_hit_on"), scale=1)
    with gr.Group(visible=False) as rubric_box:
        with gr.Row():
            rubric_id = gr.Textbox(label=say("studio_card_rubric"))
            min_score = gr.Number(label=say("studio_card_min_score"), value=4, minimum=2, maximum=5, precision=0)
    gr.Markdown(f"**{say('studio_card_when')}**")
    with gr.Row():
        when_tags = gr.Textbox(label=say("studio_card_when_tags"), elem_id="studio-card-when-tags")
        when_intents = gr.Textbox(label=say("studio_card_when_intents"))
        when_pattern = gr.Textbox(label=say("studio_card_when_pattern"))
    with gr.Row():
        when_roles = gr.CheckboxGroup(choices(["user", "assistant"], lang, "studio_choice_role_"),
                                      value=["user", "assistant"], label=say("studio_card_when_roles"))
        when_contexts = gr.Dropdown(choices(["", "yes", "no"], lang, "studio_choice_contexts_"), value="",
                                    label=say("studio_card_when_contexts"))
        when_question = gr.Textbox(label=say("studio_card_when_question"))
    apply_item = gr.Button(say("studio_card_apply_item"), variant="primary", elem_id="studio-card-apply-item")
    item = [item_id, name, dimension, description, predicate, check_type, check_fields, turns, question, hit_on,
            rubric_id, min_score, points, per, cap, fatal, when_tags, when_intents, when_pattern, when_roles,
            when_contexts, when_question]
    card_text = gr.Code(language="yaml", interactive=True, label=say("studio_card_yaml"), elem_id="studio-card-yaml")
    with gr.Row():
        card_validate = gr.Button(say("studio_validate"), elem_id="studio-card-validate")
        card_try = gr.Button(say("studio_try"), elem_id="studio-card-try")
        card_diff = gr.Button(say("studio_show_diff"), elem_id="studio-card-diff")
        card_save = gr.Button(say("studio_save"), variant="primary", elem_id="studio-card-save")
    card_status = gr.Textbox(label=say("studio_findings"), interactive=False, show_label=False,
                             elem_id="studio-card-status")
    card_results = gr.Dataframe(headers=headers(card_columns, lang), interactive=False, wrap=True,
                                label=say("studio_results"), elem_id="studio-card-results")
    card_diff_view = gr.Code(label=say("studio_diff_view"), language=None, interactive=False,
                             elem_id="studio-card-diff-view")
    return CardLayout(card_file, card_open, head, apply_head, items, pick, item, check_box, question_box, rubric_box,
                      apply_item, remove_item, card_text, card_validate, card_try, card_diff, card_save, card_status,
                      card_results, card_diff_view, build_fit_section(lang))
