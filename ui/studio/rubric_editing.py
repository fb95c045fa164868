"""Opening, validating, repairing and saving a rubric in the studio, without Gradio (mixed into actions.Studio).

A rubric the form can read opens in the form; one it cannot (broken YAML, a field the form cannot hold) opens with a
blank form, its text in the raw YAML editor and `rubriceval validate`'s own report (file:line and hint) — the lead
repairs it there and takes it into the form. A check the form cannot show as written is listed read-only beside that
editor. Saving an unchanged rubric writes nothing; a new rubric under an id that exists is refused for that reason.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Lang, t
from rubriceval.rubric.schema import Rubric
from rubriceval.studio import versions
from rubriceval.studio.form import RubricForm, form_from_yaml, readonly_checks, yaml_from_form
from rubriceval.studio.messages import Problem, say_problem
from rubriceval.studio.workbench import check_draft
from rubriceval.ui.studio.form_values import form_of, values_of


class Shown(BaseModel):
    """What the page shows of a rubric: the form, the text the form writes into, the YAML editor and the reports."""

    values: list[Any]
    base_text: str
    yaml: str
    report: str
    readonly: str


def said(exc: RubricEvalError, lang: Lang) -> str:
    return say_problem(Problem.of(exc), lang)


def same_text(a: str | None, b: str | None) -> bool:
    """The editor's text and what the page put there (a browser may change line endings or the final newline)."""
    return (a or "").replace("\r\n", "\n").strip() == (b or "").replace("\r\n", "\n").strip()


class RubricEditing:
    rubric_shelf: versions.Shelf
    lang: Lang

    def where(self, saved: versions.SavedVersion, item_id: str) -> str: ...     # the studio's

    def rubric_choices(self, lang: Lang) -> list[tuple[str, str]]:
        """The rubric dropdown: each file by its name (and id), after the choice of a new rubric."""
        named = []
        for rubric_id in self.rubric_shelf.ids():
            try:
                name = str(versions.load_tree(self.rubric_shelf.current(rubric_id)).get("name") or "").strip()
            except RubricEvalError:
                name = ""
            named.append((f"{name}（{rubric_id}）" if name else rubric_id, rubric_id))
        return [(t("studio_new", lang), t("studio_new", lang)), *named]

    def readonly_text(self, text: str, lang: Lang) -> str:
        """The checks the form leaves to the YAML editor, each with why and its line (empty: none)."""
        try:
            found = readonly_checks(text)
        except RubricEvalError:
            return ""
        if not found:
            return ""
        lines = [t("studio_readonly_head", lang)]
        lines += [t("studio_readonly_row", lang, id=item_id, line=line or "?", why=t(why, lang))
                  for item_id, why, line in found]
        return "\n".join(lines)

    def shown(self, text: str, rubric_id: str | None, lang: Lang) -> Shown:
        """The page for a rubric's text: its form, or (when the form cannot read it) a blank form and the reason."""
        name = f"{rubric_id or 'draft'}.yaml"
        try:
            values = values_of(form_from_yaml(text, name) if text.strip() else RubricForm())
        except RubricEvalError as exc:
            checked = check_draft(text, name)
            report = checked.report(lang) if checked.errors else said(exc, lang)
            values = values_of(RubricForm(id=rubric_id or ""))
            return Shown(values=values, base_text=text, yaml=text, report=report, readonly="")
        report = check_draft(text, name).report(lang) if text.strip() else ""
        return Shown(values=values, base_text=text, yaml=text, report=report, readonly=self.readonly_text(text, lang))

    def open(self, rubric_id: str | None, lang: Lang = "en") -> tuple[Shown, str]:
        """The page for a saved rubric (None: a new one) and the fingerprint of the text it was opened from."""
        text = versions.current_text(self.rubric_shelf, rubric_id) if rubric_id else ""
        return self.shown(text, rubric_id, lang), versions.fingerprint(text)

    def apply_yaml(self, yaml_text: str, lang: Lang) -> Shown:
        """The raw YAML editor's text taken into the form (it becomes the text the form writes into)."""
        form_from_yaml(yaml_text or "", "draft.yaml")          # a text the form cannot read: said, nothing changes
        return self.shown(yaml_text or "", None, lang)

    def draft_yaml(self, values: tuple[Any, ...], base_text: str) -> str:
        return yaml_from_form(form_of(values), base_text)

    def validate(self, values: tuple[Any, ...], base_text: str, lang: Lang = "en") -> tuple[str, str, Rubric | None]:
        """(the draft's YAML, the report, the rubric when it validates). A form that cannot be written (a bad
        number, a checks line) gives no YAML and the reason as the report — never the previous ✔."""
        try:
            text = self.draft_yaml(values, base_text)
        except RubricEvalError as exc:
            return "", said(exc, lang), None
        checked = check_draft(text, f"{form_of(values).id or 'draft'}.yaml")
        return text, checked.report(lang), checked.rubric if not checked.errors else None

    def rubric(self, values: tuple[Any, ...], base_text: str) -> Rubric:
        text = self.draft_yaml(values, base_text)
        checked = check_draft(text, f"{form_of(values).id or 'draft'}.yaml")
        if checked.rubric is None or checked.errors:
            raise RubricEvalError("the draft does not validate yet", hint=checked.report(self.lang))
        return checked.rubric

    def diff(self, values: tuple[Any, ...], base_text: str, lang: Lang) -> str:
        form = form_of(values)
        saved = versions.current_text(self.rubric_shelf, form.id) if form.id else ""
        return versions.diff(saved, self.draft_yaml(values, base_text), f"{form.id}.yaml",
                             labels=(t("studio_diff_saved", lang), t("studio_diff_draft", lang))) or \
            t("studio_no_diff", lang)

    def save(self, values: tuple[Any, ...], base_text: str, based_on: str, lang: Lang, saved_by: str = "",
             yaml_text: str | None = None, yaml_shown: str | None = None) -> tuple[str, Shown, str]:
        """The status, the page after the save and the fingerprint the next save is based on. `yaml_text` and
        `yaml_shown`: the raw editor's text and what the page last put there (edits not taken into the form are
        not saved behind the lead's back)."""
        form = form_of(values)
        draft = yaml_from_form(form, base_text)
        if yaml_text is not None and not any(same_text(yaml_text, x) for x in (yaml_shown, base_text, draft)):
            raise RubricEvalError("the YAML editor has changes the form has not taken",
                                  hint="press 'YAML → form' first, or validate to undo them")
        opened_id = str(versions.load_tree(base_text).get("id", "") or "") if base_text.strip() else ""
        saved = versions.current_text(self.rubric_shelf, form.id) if form.id.strip() else ""
        if form.id != opened_id:
            if saved:
                raise RubricEvalError(f"a rubric with id '{form.id}' exists already", field="id",
                                      hint="open it to edit it, or give the new rubric another id")
            based_on = versions.fingerprint("")          # a new file, whatever it was copied from
        elif saved and draft == saved and versions.fingerprint(saved) == based_on:
            return t("studio_nothing_to_save", lang), self.shown(saved, form.id, lang), based_on
        version = versions.save_version(self.rubric_shelf, draft, based_on=based_on, saved_by=saved_by)
        text = self.rubric_shelf.current(form.id)
        status = t("studio_saved", lang, path=self.where(version, form.id), version=version.version,
                   tag=version.version_tag)
        return status, self.shown(text, form.id, lang), versions.fingerprint(text)

    def history(self, rubric_id: str) -> list[int]:
        return versions.history(self.rubric_shelf, rubric_id) if rubric_id else []

    def restore(self, rubric_id: str, version: float, lang: Lang, saved_by: str = "") -> str:
        saved = versions.restore_version(self.rubric_shelf, rubric_id, int(version), saved_by=saved_by)
        return t("studio_saved", lang, path=self.where(saved, rubric_id), version=saved.version,
                 tag=saved.version_tag)

