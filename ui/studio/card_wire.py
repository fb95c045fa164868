"""The scorecard tab's events: open (YAML → form), write the form into the YAML (card fields, one item, removing an
item), YAML → form again when the YAML editor is left, validate, try, diff and save (leads and admins)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gradio as gr

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import t
from rubriceval.studio.card_form import PREDICATES, check_kinds
from rubriceval.ui.studio.card_fit import wire_fit
from rubriceval.ui.studio.card_layout import CardLayout

if TYPE_CHECKING:
    from rubriceval.ui.studio.app import StudioHandlers


def wire_cards(ui: CardLayout, h: StudioHandlers, shown: Callable[..., Any], run: Any, n: Any) -> None:
    s, lang = h.studio, h.lang
    new_item = t("studio_card_new_item", lang)
    fingerprint = gr.State("")

    def picked(choice: str | None) -> str | None:
        return None if choice in (None, "", new_item) else choice

    def form_outputs(text: str, card_id: str | None, keep: str | None = None) -> list[Any]:
        head, rows, ids, dims = s.card_form(text, card_id)
        named = s.card_items(text, card_id)
        value = keep if keep in ids else new_item
        # a dimension by its name (the item's YAML holds its id)
        parts = [[p.strip() for p in line.split("|")] for line in str(head[-1] or "").splitlines() if line.strip()]
        dim_names = {p[0]: p[1] for p in parts if len(p) > 1 and p[1]}
        dim_choices = [(f"{dim_names[d]}（{d}）" if d in dim_names and dim_names[d] != d else d, d) for d in dims]
        return [*head, rows, gr.update(choices=[(new_item, new_item), *named], value=value),
                gr.update(choices=dim_choices)]

    form_out = [*ui.head, ui.items, ui.pick, ui.item[2]]

    def do_open(card_id: str) -> list[str]:
        return list(s.open_scorecard(card_id, lang))

    ui.card_open.click(shown(do_open), [ui.card_file], [ui.card_text, fingerprint, ui.card_status],
                       api_name="studio_card_open").then(
        shown(lambda text, card_id: form_outputs(text, card_id)), [ui.card_text, ui.card_file], form_out,
        api_name="studio_card_form")

    def do_refill(text: str, card_id: str, choice: str) -> list[Any]:
        try:
            return form_outputs(text, card_id, picked(choice))
        except RubricEvalError:          # half-typed YAML: the form waits for text it can read
            return [gr.skip()] * len(form_out)

    ui.card_text.blur(do_refill, [ui.card_text, ui.card_file, ui.pick], form_out, api_name="studio_card_refill")

    def do_item(text: str, card_id: str, choice: str) -> list[Any]:
        return s.card_item(text, card_id, picked(choice))

    ui.pick.change(shown(do_item), [ui.card_text, ui.card_file, ui.pick], ui.item, api_name="studio_card_item")

    def do_apply_item(text: str, card_id: str, choice: str, *values: Any) -> list[Any]:
        written, report, rows, named, item_id = s.card_apply_item(text, card_id, picked(choice), values, lang)
        return [written, report, rows, gr.update(choices=[(new_item, new_item), *named], value=item_id)]

    ui.apply_item.click(shown(do_apply_item), [ui.card_text, ui.card_file, ui.pick, *ui.item],
                        [ui.card_text, ui.card_status, ui.items, ui.pick], api_name="studio_card_apply_item")

    def do_remove(text: str, card_id: str, choice: str) -> list[Any]:
        if picked(choice) is None:
            raise RubricEvalError("pick the item to remove", field="item")
        written, report, rows, named = s.card_remove_item(text, card_id, choice, lang)
        return [written, report, rows, gr.update(choices=[(new_item, new_item), *named], value=new_item)]

    ui.remove_item.click(shown(do_remove), [ui.card_text, ui.card_file, ui.pick],
                         [ui.card_text, ui.card_status, ui.items, ui.pick], api_name="studio_card_remove_item")

    def do_apply_head(text: str, card_id: str, *values: Any) -> list[Any]:
        written, report, rows, _ = s.card_apply_head(text, card_id, values, lang)
        return [written, report, rows]

    ui.apply_head.click(shown(do_apply_head), [ui.card_text, ui.card_file, *ui.head],
                        [ui.card_text, ui.card_status, ui.items], api_name="studio_card_apply_head")

    # The predicate decides which of its fields the editor shows; a check kind shows the fields it is written with.
    ui.item[4].change(lambda kind: [gr.update(visible=kind == box) for box in PREDICATES],
                      [ui.item[4]], [ui.check_box, ui.question_box, ui.rubric_box], api_visibility="private")
    kinds = check_kinds()
    ui.item[5].change(lambda kind: gr.update(info=t("studio_card_check_fields_of", lang, kind=kind,
                                                    fields=", ".join(kinds.get(kind, [])))) if kind in kinds
                      else gr.update(info=None), [ui.item[5]], [ui.item[6]], api_visibility="private")

    def do_validate(text: str, card_id: str) -> str:
        return s.card_report(text, card_id, lang)

    ui.card_validate.click(shown(do_validate), [ui.card_text, ui.card_file], [ui.card_status],
                           api_name="studio_card_validate")
    ui.card_try.click(shown(s.try_scorecard), [ui.card_text, ui.card_file, run, n], [ui.card_results],
                      api_name="studio_card_try")
    ui.card_diff.click(shown(lambda text, card_id: s.diff_scorecard(text, card_id, lang)),
                       [ui.card_text, ui.card_file], [ui.card_diff_view], api_name="studio_card_diff")

    def do_save(text: str, based_on: str, request: gr.Request) -> list[str]:
        name = h.require_edit(request)
        return list(s.save_scorecard(text, based_on, lang, saved_by=name))

    saved = [ui.card_status, ui.card_text, fingerprint]
    ui.card_save.click(shown(do_save, saved, ui.card_status), [ui.card_text, fingerprint], saved,
                       api_name="studio_card_save")
    wire_fit(ui.fit, ui, h, shown, fingerprint)
