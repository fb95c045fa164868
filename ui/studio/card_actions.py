"""What the scorecard tab's events do, without Gradio: the card's YAML text in, what the page shows out.

The YAML text is the one state: the form is read from it (YAML → form) and every form action writes into it
(studio/card_form.py) and validates the result with the scorecard loader, said in the page's language
(studio/messages.py). Versions go through the studio's shelf for scorecards (the folder, or the run store).
"""
from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import pandas as pd

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Lang, t
from rubriceval.judge.config import JudgeConfig
from rubriceval.local.backends import make_judge
from rubriceval.studio import versions
from rubriceval.studio.card_form import (
    ITEM_FIELDS,
    CardForm,
    CardHead,
    ItemForm,
    card_form_from_yaml,
    item_form_of,
    item_rows,
    yaml_with_head,
    yaml_with_item,
    yaml_without_item,
)
from rubriceval.studio.scorecards import CardFolder, card_report, load_text, scorecard_tag, try_scorecard
from rubriceval.ui.common.wording import headers
from rubriceval.ui.studio.card_layout import CARD_ITEM_COLUMNS

CARD_COLUMNS = ["sample_id", "total", "deductions", "fatal", "not_applicable"]
HEAD_FIELDS = tuple(CardHead.model_fields)


def _name(card_id: str | None) -> str:
    return f"{card_id or 'scorecard'}.yaml"


def _number(value: Any, field: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = 0.5
    if not number.is_integer():
        raise RubricEvalError(f"{field}: '{value}' is not a whole number", field=field)
    return int(number)


def _named(form: CardForm) -> list[tuple[str, str]]:
    """The items as a dropdown lists them: by name (and id), the value the id."""
    return [(f"{i.name}（{i.id}）" if i.name.strip() else i.id, i.id) for i in form.items]


class CardActions:
    """The scorecard half of the studio (mixed into ui/studio/actions.Studio, which sets these)."""

    card_shelf: versions.Shelf | None
    card_folder: CardFolder         # where a draft's relative paths (knowledge:) are read from
    judge: JudgeConfig
    lang: Lang                      # the page's: the tables' headers are said in it

    def samples(self, run: str | None) -> list[Any]: ...      # the studio's

    def _cards(self) -> versions.Shelf:
        if self.card_shelf is None:
            raise RubricEvalError("no scorecards folder", field="scorecards",
                                  hint="start the studio with --scorecards DIR (or --versions-in store)")
        return self.card_shelf

    def scorecard_files(self) -> list[str]:
        return self.card_shelf.ids() if self.card_shelf is not None else []

    def scorecard_choices(self) -> list[tuple[str, str]]:
        """The scorecard dropdown: each card by its name (and id)."""
        named = []
        for card_id in self.scorecard_files():
            try:
                name = str(versions.load_tree(self.card_shelf.current(card_id)).get("name") or "").strip()
            except RubricEvalError:
                name = ""
            named.append((f"{name}（{card_id}）" if name else card_id, card_id))
        return named

    def open_scorecard(self, card_id: str, lang: Lang = "en") -> tuple[str, str, str]:
        text = versions.current_text(self._cards(), card_id)
        return text, versions.fingerprint(text), self.card_report(text, card_id, lang)

    def card_report(self, text: str, card_id: str | None, lang: Lang) -> str:
        """The loader's verdict on the draft, read as the card's file in the studio's scorecards folder."""
        return card_report(text or "", _name(card_id), lang, self.card_folder)

    def try_scorecard(self, text: str, card_id: str, run: str | None, n: float) -> pd.DataFrame:
        card = load_text(text, _name(card_id), self.card_folder)

        async def ask() -> Any:
            judge = make_judge(self.judge, announce=False)
            try:
                return await try_scorecard(card, self.samples(run), judge, int(n or 5))
            finally:
                await judge.close()

        rows = [[r.sample_id, r.total if r.total is not None else t("studio_unscored", self.lang,
                                                                     reason=r.unscored_reason or ""),
                 ", ".join(r.deductions), ", ".join(r.fatal), ", ".join(r.not_applicable)] for r in asyncio.run(ask())]
        return pd.DataFrame(rows, columns=headers(CARD_COLUMNS, self.lang))

    def diff_scorecard(self, text: str, card_id: str, lang: Lang) -> str:
        saved = versions.current_text(self._cards(), card_id) if card_id else ""
        return versions.diff(saved, text, _name(card_id)) or t("studio_no_diff", lang)

    def save_scorecard(self, text: str, based_on: str, lang: Lang, saved_by: str = "") -> tuple[str, str, str]:
        shelf = self._cards()
        card_id = str(versions.load_tree(text).get("id", "") or "")
        current = shelf.current(card_id) if card_id.strip() else ""
        if current and current == text and versions.fingerprint(current) == based_on:
            return t("studio_nothing_to_save", lang), current, based_on        # unchanged: no new version
        saved = versions.save_version(shelf, text, based_on=based_on, saved_by=saved_by,
                                      validate=partial(scorecard_tag, folder=self.card_folder))
        new = shelf.current(card_id)
        where = saved.path if isinstance(shelf, versions.StoreShelf) else _name(card_id)
        return (t("studio_saved", lang, path=where, version=saved.version, tag=saved.version_tag),
                new, versions.fingerprint(new))

    # -- the form ------------------------------------------------------------------------------------------------------
    def card_form(self, text: str, card_id: str | None) -> tuple[list[Any], pd.DataFrame, list[str], list[str]]:
        """YAML → form: the card's fields, the items table, the item ids and the dimension ids."""
        form = card_form_from_yaml(text or "", _name(card_id))
        dims = [line.split("|")[0].strip() for line in form.head.dimensions.splitlines() if line.strip()]
        return ([getattr(form.head, f) for f in HEAD_FIELDS], self._rows(form), [i.id for i in form.items], dims)

    def card_items(self, text: str, card_id: str | None) -> list[tuple[str, str]]:
        """The items as the item dropdown lists them: (name (id), id)."""
        return _named(card_form_from_yaml(text or "", _name(card_id)))

    def _rows(self, form: CardForm) -> pd.DataFrame:
        return pd.DataFrame(item_rows(form, self.lang), columns=headers(CARD_ITEM_COLUMNS, self.lang))

    def card_item(self, text: str, card_id: str | None, item_id: str | None) -> list[Any]:
        """One item's fields (a blank item when `item_id` is not one of the card's)."""
        form = card_form_from_yaml(text or "", _name(card_id))
        found = next((i for i in form.items if i.id == item_id), None)
        item = found or ItemForm(dimension=form.items[-1].dimension if form.items else "")
        return [getattr(item, f) for f in ITEM_FIELDS]

    def _written(self, text: str, card_id: str | None, lang: Lang
                 ) -> tuple[str, str, pd.DataFrame, list[tuple[str, str]]]:
        form = card_form_from_yaml(text, _name(card_id))
        report = t("studio_card_written", lang) + self.card_report(text, card_id, lang)
        return text, report, self._rows(form), _named(form)

    def card_apply_item(self, text: str, card_id: str | None, replacing: str | None, values: tuple[Any, ...],
                        lang: Lang) -> tuple[str, str, pd.DataFrame, list[tuple[str, str]], str]:
        """Form → YAML for one item (over the item it was opened from, or added); the loader's verdict on it."""
        item = item_form_of(dict(zip(ITEM_FIELDS, values)))
        if not item.id.strip():
            raise RubricEvalError("give the item an id", field="id", hint="letters, digits, _, - or Chinese")
        written = yaml_with_item(text or "", item, replacing, _name(card_id))
        return (*self._written(written, card_id, lang), item.id.strip())

    def card_remove_item(self, text: str, card_id: str | None, item_id: str, lang: Lang
                         ) -> tuple[str, str, pd.DataFrame, list[tuple[str, str]]]:
        return self._written(yaml_without_item(text or "", item_id, _name(card_id)), card_id, lang)

    def card_apply_head(self, text: str, card_id: str | None, values: tuple[Any, ...], lang: Lang
                        ) -> tuple[str, str, pd.DataFrame, list[tuple[str, str]]]:
        raw = dict(zip(HEAD_FIELDS, values))
        head = CardHead(id=raw["id"] or "", name=raw["name"] or "", base=_number(raw["base"], "base") or 100,
                        pass_total=_number(raw["pass_total"], "pass_total"), dimensions=raw["dimensions"] or "")
        return self._written(yaml_with_head(text or "", head, _name(card_id)), card_id, lang)
