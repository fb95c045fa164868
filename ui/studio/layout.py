"""The studio's components, in page order, labelled from the one catalogue (rubriceval.i18n) in the page's language."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from rubriceval.i18n import Lang, t
from rubriceval.ui.common.wording import choices, headers
from rubriceval.ui.studio.card_layout import CardLayout, build_card_tab

JUDGE_MODES = ["holistic", "checklist", "checklist_fitted", "predicates"]
JUDGE_FIELDS = ["question", "answer", "contexts", "ground_truth", "reference_contexts", "intent", "tags"]
PICK_RULES = ["random", "tag", "failing", "first"]


@dataclass
class StudioLayout:
    signed_in: gr.Markdown
    rubric_file: gr.Dropdown
    open_btn: gr.Button
    base_text: gr.State
    base_fingerprint: gr.State
    trial_run: gr.State
    form_inputs: list[Any]
    validate_btn: gr.Button
    findings: gr.Textbox
    yaml_view: gr.Code
    yaml_shown: gr.State          # what the page last put in the YAML editor (unapplied edits are not saved)
    apply_yaml_btn: gr.Button
    readonly_view: gr.Markdown
    run: gr.Dropdown
    sample: gr.Dropdown
    pasted: gr.Textbox
    test_btn: gr.Button
    check_results: gr.Dataframe
    preview_btn: gr.Button
    prompt_view: gr.Textbox
    pick_rule: gr.Dropdown
    n: gr.Number
    tag: gr.Textbox
    plan_btn: gr.Button
    plan_view: gr.Textbox
    try_btn: gr.Button
    results: gr.Dataframe
    mark_sample: gr.Dropdown
    thumb: gr.Radio
    right_score: gr.Number
    reason: gr.Textbox
    mark_btn: gr.Button
    mark_status: gr.Markdown
    agreement: gr.Markdown
    diff_btn: gr.Button
    diff_view: gr.Code
    save_btn: gr.Button
    save_status: gr.Markdown
    versions: gr.Dropdown
    restore_btn: gr.Button
    document: gr.Textbox
    upload: gr.File
    draft_btn: gr.Button
    draft_status: gr.Markdown
    graded: gr.Textbox
    propose_btn: gr.Button
    candidates: gr.Dataframe
    cards: CardLayout


def build_layout(lang: Lang, result_columns: list[str], check_columns: list[str], candidate_columns: list[str],
                 card_columns: list[str]) -> StudioLayout:
    def say(key: str, **kw: Any) -> str:
        return t(key, lang, **kw)

    gr.Markdown(f"## {say('studio_title')}\n{say('studio_intro')}")
    signed_in = gr.Markdown(elem_id="studio-signed-in")
    with gr.Row():
        rubric_file = gr.Dropdown(label=say("studio_rubric"), choices=[say("studio_new")], value=say("studio_new"),
                                  elem_id="studio-rubric-file", scale=3, allow_custom_value=True)
        open_btn = gr.Button(say("studio_open"), elem_id="studio-open", scale=1)
    base_text, base_fingerprint, trial_run = gr.State(""), gr.State(""), gr.State("")
    # Samples are shared by the check tester, the preview and the trial.
    with gr.Row():
        run = gr.Dropdown(label=say("studio_source_run"), choices=[], elem_id="studio-run", allow_custom_value=True)
        sample = gr.Dropdown(label=say("studio_sample"), choices=[], elem_id="studio-sample",
                             allow_custom_value=True)      # the server checks the sample exists
    with gr.Tabs():
        with gr.Tab(say("studio_tab_author"), elem_id="studio-tab-author"):
            with gr.Row():
                rid = gr.Textbox(label=say("studio_id"), elem_id="studio-id")
                name = gr.Textbox(label=say("studio_name"), elem_id="studio-name")
                language = gr.Dropdown(choices(["zh", "en"], lang, "studio_choice_lang_"), value="zh",
                                       label=say("studio_language"))
            description = gr.Textbox(label=say("studio_description"))
            criterion = gr.Textbox(label=say("studio_criterion"), lines=4, elem_id="studio-criterion")
            levels = [gr.Textbox(label=say("studio_level", level=k), elem_id=f"studio-level-{k}")
                      for k in range(1, 6)]
            with gr.Row():
                judge_sees = gr.CheckboxGroup(choices(JUDGE_FIELDS, lang, "studio_choice_sees_"),
                                              value=["question", "answer"], label=say("studio_judge_sees"))
                # no minimum/maximum here: Gradio would refuse a bad number in English; validate says it in the
                # page's language, in the findings box
                threshold = gr.Number(value=4, label=say("studio_threshold"), elem_id="studio-threshold")
                judge_mode = gr.Dropdown(choices(JUDGE_MODES, lang, "studio_choice_mode_"), value="holistic",
                                         label=say("studio_judge_mode"))
            gr.Markdown(f"**{say('studio_applies')}**")
            with gr.Row():
                applies_languages = gr.CheckboxGroup(choices(["zh", "en"], lang, "studio_choice_lang_"), value=[],
                                                     label=say("studio_applies_languages"))
                applies_tags = gr.Textbox(label=say("studio_applies_tags"), elem_id="studio-applies-tags")
                applies_intents = gr.Textbox(label=say("studio_applies_intents"))
                applies_pattern = gr.Textbox(label=say("studio_applies_pattern"))
            questions = gr.Textbox(label=say("studio_questions"), lines=3, elem_id="studio-questions")
            level_rule = gr.Textbox(label=say("studio_level_rule"), lines=3)
            with gr.Row():
                with gr.Column():
                    checks = gr.Textbox(label=say("studio_checks"), info=say("studio_checks_info"), lines=8,
                                        elem_id="studio-checks")
                    readonly_view = gr.Markdown(elem_id="studio-readonly")
                with gr.Column():
                    yaml_view = gr.Code(label=say("studio_yaml"), language="yaml", interactive=True, lines=16,
                                        max_lines=24, elem_id="studio-yaml")      # scrolls: the checks stay beside it
                    apply_yaml_btn = gr.Button(say("studio_apply_yaml"), elem_id="studio-apply-yaml")
            validate_btn = gr.Button(say("studio_validate"), variant="primary", elem_id="studio-validate")
            findings = gr.Textbox(label=say("studio_findings"), lines=3, interactive=False,
                                  elem_id="studio-findings")
            yaml_shown = gr.State("")
        with gr.Tab(say("studio_tab_checks"), elem_id="studio-tab-checks"):
            pasted = gr.Textbox(label=say("studio_pasted"), lines=3, elem_id="studio-pasted")
            test_btn = gr.Button(say("studio_run_checks"), elem_id="studio-test")
            check_results = gr.Dataframe(headers=headers(check_columns, lang), interactive=False, wrap=True,
                                         label=say("studio_check_results"), elem_id="studio-check-results")
        with gr.Tab(say("studio_tab_preview"), elem_id="studio-tab-preview"):
            preview_btn = gr.Button(say("studio_show_prompt"), elem_id="studio-preview")
            prompt_view = gr.Textbox(label=say("studio_prompt_view"), lines=16, interactive=False, show_label=False,
                                     elem_id="studio-prompt")
        with gr.Tab(say("studio_tab_try"), elem_id="studio-tab-try"):
            with gr.Row():
                pick_rule = gr.Dropdown(choices(PICK_RULES, lang, "studio_choice_pick_"), value="first",
                                        label=say("studio_pick_rule"))
                n = gr.Number(value=5, minimum=1, maximum=200, precision=0, label=say("studio_n"),
                              elem_id="studio-n")
                tag = gr.Textbox(label=say("studio_tag"))
            with gr.Row():
                plan_btn = gr.Button(say("studio_plan"), elem_id="studio-plan")
                try_btn = gr.Button(say("studio_try"), variant="primary", elem_id="studio-try")
            plan_view = gr.Textbox(label=say("studio_plan_view"), lines=4, interactive=False, show_label=False,
                                   elem_id="studio-plan-view")
            results = gr.Dataframe(headers=headers(result_columns, lang), interactive=False, wrap=True,
                                   label=say("studio_results"), elem_id="studio-results")
            with gr.Row():
                mark_sample = gr.Dropdown(label=say("studio_mark_sample"), choices=[], elem_id="studio-mark-sample",
                                      allow_custom_value=True)
                thumb = gr.Radio(choices(["up", "down"], lang, "studio_choice_thumb_"), value=None,
                                 label=say("studio_thumb"), elem_id="studio-thumb")
                # no minimum here: an empty box would be refused (in English) even with 👍, which needs no score
                right_score = gr.Number(label=say("studio_right_score"), precision=0, elem_id="studio-right-score")
            reason = gr.Textbox(label=say("studio_reason"), elem_id="studio-reason")
            mark_btn = gr.Button(say("studio_mark"), elem_id="studio-mark")
            mark_status = gr.Markdown(elem_id="studio-mark-status")
            agreement = gr.Markdown(elem_id="studio-agreement")
        with gr.Tab(say("studio_tab_save"), elem_id="studio-tab-save"):
            diff_btn = gr.Button(say("studio_show_diff"), elem_id="studio-diff")
            diff_view = gr.Code(label=say("studio_diff_view"), language=None, interactive=False,
                                elem_id="studio-diff-view")
            save_btn = gr.Button(say("studio_save"), variant="primary", elem_id="studio-save")
            save_status = gr.Markdown(elem_id="studio-save-status")
            with gr.Row():
                versions = gr.Dropdown(label=say("studio_versions"), choices=[], elem_id="studio-versions",
                                   allow_custom_value=True)
                restore_btn = gr.Button(say("studio_restore"), elem_id="studio-restore")
        with gr.Tab(say("studio_tab_scorecard"), elem_id="studio-tab-scorecard"):
            cards = build_card_tab(lang, card_columns)
        with gr.Tab(say("studio_tab_draft"), elem_id="studio-tab-draft"):
            document = gr.Textbox(label=say("studio_document"), lines=8, elem_id="studio-document")
            upload = gr.File(label=say("studio_upload"), file_types=[".md", ".txt", ".docx"], type="filepath")
            draft_btn = gr.Button(say("studio_draft"), elem_id="studio-draft")
            draft_status = gr.Markdown(elem_id="studio-draft-status")
            graded = gr.Textbox(label=say("studio_graded"), lines=6, elem_id="studio-graded")
            propose_btn = gr.Button(say("studio_propose"), elem_id="studio-propose")
            candidates = gr.Dataframe(headers=headers(candidate_columns, lang), interactive=False, wrap=True,
                                      label=say("studio_candidates"), elem_id="studio-candidates")
    form = [rid, name, language, description, criterion, *levels, judge_sees, threshold, judge_mode,
            applies_languages, applies_tags, applies_intents, applies_pattern, questions, level_rule, checks]
    return StudioLayout(signed_in, rubric_file, open_btn, base_text, base_fingerprint, trial_run, form, validate_btn,
                        findings, yaml_view, yaml_shown, apply_yaml_btn, readonly_view, run, sample, pasted, test_btn,
                        check_results, preview_btn, prompt_view,
                        pick_rule, n, tag, plan_btn, plan_view, try_btn, results, mark_sample, thumb, right_score,
                        reason, mark_btn, mark_status, agreement, diff_btn, diff_view, save_btn, save_status,
                        versions, restore_btn, document, upload, draft_btn, draft_status, graded, propose_btn,
                        candidates, cards)
