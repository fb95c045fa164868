"""The rubric studio: a QA lead writes, tries and versions a rubric in the browser, without touching YAML.

Author (the form is the YAML, validated as `rubriceval validate`) → test the checks on a pasted answer or a sample →
preview the judge's exact messages → try the draft on N stored samples (cost planned first, verdicts as they
arrive) and mark them 👍/👎 → save as a new version (diff first; older versions restorable). A draft can start from a
procedure (SOP) the judge turns into a proposal.

Logins and roles are the team app's (an auth file; rubriceval/audit/): leads and admins save and restore, experts
author, try and mark. Without an auth file the studio serves loopback only, to one local user who may do all of it
(`require_auth_off_loopback`, the rule every app applies).
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import gradio as gr

from rubriceval.audit.sessions import TeamAuth
from rubriceval.audit.team import TeamStore
from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Lang, check_lang, t
from rubriceval.judge.config import JudgeConfig
from rubriceval.studio.messages import said_error
from rubriceval.ui.common.assets import APP_CSS
from rubriceval.ui.common.auth import is_loopback, require_auth_off_loopback
from rubriceval.ui.common.errors import user_errors
from rubriceval.ui.studio.actions import CANDIDATE_COLUMNS, CHECK_COLUMNS, RESULT_COLUMNS, Studio, VersionsIn
from rubriceval.ui.studio.card_actions import CARD_COLUMNS
from rubriceval.ui.studio.card_wire import wire_cards
from rubriceval.ui.studio.form_values import FIELD_INDEX
from rubriceval.ui.studio.layout import StudioLayout, build_layout
from rubriceval.ui.studio.rubric_editing import Shown

EDIT_ROLES = ("lead", "admin")


def in_lang(fn: Callable[..., Any], lang: Lang) -> Callable[..., Any]:
    """The handler, its user errors said in `lang` (message, field and hint; unknown messages stay English)."""
    @functools.wraps(fn)
    def said(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RubricEvalError as exc:
            raise said_error(exc, lang) from None
    return said


class StudioHandlers:
    def __init__(self, studio: Studio, auth: TeamAuth | None, lang: Lang):
        self.studio, self.auth, self.lang = studio, auth, lang

    def who(self, request: gr.Request | None) -> tuple[str, str]:
        """(name, role) of the user behind an event; without logins, the one local user (a lead)."""
        if self.auth is None:
            return "local", "lead"
        member = self.auth.member(getattr(request, "username", None) if request is not None else None)
        return member.name, member.role

    def require_edit(self, request: gr.Request | None) -> str:
        name, role = self.who(request)
        if role not in EDIT_ROLES:
            raise RubricEvalError(t("studio_no_rights", self.lang), field="role")
        return name


def wire(app: gr.Blocks, ui: StudioLayout, h: StudioHandlers) -> None:
    s, form, lang = h.studio, ui.form_inputs, h.lang

    def on_load(request: gr.Request) -> list[Any]:
        name, role = h.who(request)
        signed = t("studio_local_user", lang) if h.auth is None else t("studio_signed_in", lang, name=name, role=role)
        runs = s.runs()
        return [signed, gr.update(choices=s.rubric_choices(lang)),
                gr.update(choices=runs, value=runs[-1][1] if runs else None),
                gr.update(choices=s.scorecard_choices())]

    app.load(on_load, None, [ui.signed_in, ui.rubric_file, ui.run, ui.cards.card_file], api_name="studio_load")
    # a file added on disk (or by another lead) is listed when the list is opened, without reloading the page
    ui.rubric_file.focus(lambda: gr.update(choices=s.rubric_choices(lang)), None, [ui.rubric_file],
                         api_visibility="private")
    ui.cards.card_file.focus(lambda: gr.update(choices=s.scorecard_choices()), None, [ui.cards.card_file],
                             api_visibility="private")

    def shown(fn: Any, outputs: list[Any] | None = None, status: Any = None) -> Any:
        """user_errors, with the error said in the page's language (studio/messages.py)."""
        return user_errors(in_lang(fn, lang), outputs, status)

    wire_cards(ui.cards, h, shown, ui.run, ui.n)

    def page(view: Shown) -> list[Any]:
        """The form, the text it writes into, the YAML editor (and what was put there), the report, the read-only
        checks — in `page_out` order."""
        return [*view.values, view.base_text, view.yaml, view.yaml, view.report, view.readonly]

    page_out = [*form, ui.base_text, ui.yaml_view, ui.yaml_shown, ui.findings, ui.readonly_view]

    def do_open(choice: str) -> list[Any]:
        rubric_id = None if choice in (None, "", t("studio_new", lang)) else choice
        view, fingerprint = s.open(rubric_id, lang)
        return [*page(view), fingerprint, gr.update(choices=s.history(rubric_id or ""), value=None), "", ""]

    opened = [*page_out, ui.base_fingerprint, ui.versions, ui.diff_view, ui.save_status]
    ui.open_btn.click(shown(do_open), [ui.rubric_file], opened, api_name="studio_open")

    def do_validate(*args: Any) -> list[Any]:
        *values, base_text = args
        yaml_text, report, _ = s.validate(tuple(values), base_text, lang)
        return [yaml_text, yaml_text, report]

    ui.validate_btn.click(shown(do_validate), [*form, ui.base_text], [ui.yaml_view, ui.yaml_shown, ui.findings],
                          api_name="studio_validate")

    def do_apply_yaml(yaml_text: str) -> list[Any]:
        return page(s.apply_yaml(yaml_text, lang))

    ui.apply_yaml_btn.click(shown(do_apply_yaml, page_out, ui.findings), [ui.yaml_view], page_out,
                            api_name="studio_apply_yaml")

    def do_samples(run: str | None) -> Any:
        return gr.update(choices=[x.id for x in s.samples(run)], value=None)

    ui.run.change(do_samples, [ui.run], [ui.sample], api_name="studio_samples")

    def do_test(*args: Any) -> Any:
        *values, base_text, pasted, run, sample_id = args
        return s.test_checks(tuple(values), base_text, pasted, run, sample_id)

    ui.test_btn.click(shown(do_test), [*form, ui.base_text, ui.pasted, ui.run, ui.sample], [ui.check_results],
                      api_name="studio_test_checks")

    def do_preview(*args: Any) -> str:
        *values, base_text, run, sample_id = args
        return s.preview(tuple(values), base_text, run, sample_id)

    ui.preview_btn.click(shown(do_preview), [*form, ui.base_text, ui.run, ui.sample], [ui.prompt_view],
                         api_name="studio_preview")

    def do_plan(*args: Any) -> str:
        *values, base_text, run, rule, n, tag = args
        return s.plan(tuple(values), base_text, run, rule, n, tag)

    picks = [ui.run, ui.pick_rule, ui.n, ui.tag]
    ui.plan_btn.click(shown(do_plan), [*form, ui.base_text, *picks], [ui.plan_view], api_name="studio_plan")

    # a new trial's rows are new verdicts: the mark form starts empty, so no click records a mark meant for another
    cleared = [None, None, "", ""]

    def do_try(*args: Any):
        *values, base_text, run, rule, n, tag = args
        try:
            for frame, run_id, sample_ids in s.try_draft(tuple(values), base_text, run, rule, n, tag):
                yield frame, run_id, gr.update(choices=sample_ids, value=sample_ids[0]), *cleared
        except RubricEvalError as error:
            exc = said_error(error, lang)
            gr.Warning(exc.message + (f" ({exc.hint})" if exc.hint else ""))
            yield (gr.skip(),) * (3 + len(cleared))

    ui.try_btn.click(do_try, [*form, ui.base_text, *picks],
                     [ui.results, ui.trial_run, ui.mark_sample, ui.thumb, ui.right_score, ui.reason, ui.mark_status],
                     api_name="studio_try")

    def do_mark(run_id: str, sample_id: str, thumb: str, score: float | None, reason: str, rubric_id: str,
                request: gr.Request) -> list[str]:
        name, _ = h.who(request)
        return list(s.mark(run_id, sample_id, rubric_id, name, thumb, score, reason, lang))

    ui.mark_btn.click(shown(do_mark, [ui.mark_status, ui.agreement], ui.mark_status),
                      [ui.trial_run, ui.mark_sample, ui.thumb, ui.right_score, ui.reason, form[0]],
                      [ui.mark_status, ui.agreement], api_name="studio_mark")

    def do_diff(*args: Any) -> str:
        *values, base_text = args
        return s.diff(tuple(values), base_text, lang)

    ui.diff_btn.click(shown(do_diff), [*form, ui.base_text], [ui.diff_view], api_name="studio_diff")

    def do_save(request: gr.Request, *args: Any) -> list[Any]:
        editor = h.require_edit(request)     # a gr.Request parameter: Gradio hands the logged-in user in
        *values, base_text, based_on, yaml_text, yaml_shown = args
        status, view, fingerprint = s.save(tuple(values), base_text, based_on, lang, saved_by=editor,
                                           yaml_text=yaml_text, yaml_shown=yaml_shown)
        rubric_id = values[0]
        return [status, *page(view), fingerprint, gr.update(choices=s.history(rubric_id)),
                gr.update(choices=s.rubric_choices(lang), value=rubric_id), t("studio_no_diff", lang)]

    saved = [ui.save_status, *page_out, ui.base_fingerprint, ui.versions, ui.rubric_file, ui.diff_view]
    ui.save_btn.click(shown(do_save, saved, ui.save_status),
                      [*form, ui.base_text, ui.base_fingerprint, ui.yaml_view, ui.yaml_shown], saved,
                      api_name="studio_save")

    def do_restore(rubric_id: str, version: float | None, request: gr.Request) -> list[Any]:
        editor = h.require_edit(request)
        if version is None:
            raise RubricEvalError("pick the version to restore", field="version")
        status = s.restore(rubric_id, version, lang, saved_by=editor)
        view, fingerprint = s.open(rubric_id, lang)
        return [status, *page(view), fingerprint, gr.update(choices=s.history(rubric_id)), t("studio_no_diff", lang)]

    restored = [ui.save_status, *page_out, ui.base_fingerprint, ui.versions, ui.diff_view]
    ui.restore_btn.click(shown(do_restore, restored, ui.save_status), [form[0], ui.versions], restored,
                         api_name="studio_restore")

    def do_draft(document: str, upload: str | None):
        try:
            for status, values in s.draft(document, upload, lang):
                yield [*(values if values is not None else [gr.skip()] * len(form)), status]
        except RubricEvalError as error:
            exc = said_error(error, lang)
            gr.Warning(exc.message + (f" ({exc.hint})" if exc.hint else ""))
            yield [*[gr.skip()] * len(form), f"⚠ {exc.message}"]

    def do_propose(*args: Any) -> list[Any]:
        *values, base_text, run, grades = args
        return list(s.propose(tuple(values), base_text, run, grades, lang))

    ui.propose_btn.click(shown(do_propose), [*form, ui.base_text, ui.run, ui.graded],
                         [form[FIELD_INDEX["questions"]], ui.candidates], api_name="studio_propose")

    drafted = [*form, ui.draft_status]
    ui.draft_btn.click(do_draft, [ui.document, ui.upload], drafted, api_name="studio_draft")


def build_studio_app(rubrics_dir: str | Path, store_path: str | Path, judge: JudgeConfig, *,
                     auth: TeamAuth | None = None, lang: str | None = None,
                     scorecards_dir: str | Path | None = None, versions_in: VersionsIn = "files") -> gr.Blocks:
    chosen: Lang = check_lang(lang) or "zh"
    studio = Studio(rubrics_dir, store_path, judge, scorecards_dir, versions_in)
    studio.lang = chosen
    with gr.Blocks(title=t("studio_title", chosen), analytics_enabled=False) as app:
        layout = build_layout(chosen, RESULT_COLUMNS, CHECK_COLUMNS, CANDIDATE_COLUMNS, CARD_COLUMNS)
        wire(app, layout, StudioHandlers(studio, auth, chosen))
    app.studio = studio
    return app


def launch_studio(rubrics_dir: str | Path, store_path: str | Path, judge: JudgeConfig, *, host: str = "127.0.0.1",
                  port: int = 7862, auth: TeamAuth | None = None, block: bool = True, quiet: bool = True,
                  lang: str | None = None, scorecards_dir: str | Path | None = None,
                  versions_in: VersionsIn = "files") -> gr.Blocks:
    """Serve the studio (never through Gradio's share tunnel); off loopback only with logins. Versions in the
    store need no rubrics folder (one there seeds the store's history)."""
    if auth is None and not is_loopback(host):
        raise RubricEvalError(f"refusing to serve the studio on {host} without logins", field="host",
                              hint="give the team's users with --auth-file FILE, or serve on 127.0.0.1")
    require_auth_off_loopback(host, auth)
    if versions_in == "files" and not Path(rubrics_dir).is_dir():
        raise RubricEvalError("rubrics folder not found", file=str(rubrics_dir),
                              hint="or keep versions in the run store: --versions-in store")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    team = None
    if auth is not None:
        team = TeamStore(store_path)          # sessions and login throttling live in the store, as for the team app
        auth.bind(team)
    app = build_studio_app(rubrics_dir, store_path, judge, auth=auth, lang=lang, scorecards_dir=scorecards_dir,
                           versions_in=versions_in)
    app.queue(default_concurrency_limit=2)
    app.launch(server_name=host, server_port=port, auth=auth, prevent_thread_lock=not block, show_error=True,
               share=False, ssr_mode=False, quiet=quiet, css=APP_CSS, footer_links=[])
    app.team_store = team
    return app


def close_studio(app: gr.Blocks) -> None:
    app.close()
    if getattr(app, "team_store", None) is not None:
        with closing(app.team_store):
            pass
