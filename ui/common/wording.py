"""Page wording from the one catalogue (rubriceval.i18n): components register their text while a layout is built, and a
page relabels itself in place when the language changes. Shared by every app."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from rubriceval.i18n import Lang, t

LANGUAGE_CHOICES = [("中文", "zh"), ("English", "en")]


def headers(columns: Iterable[str], lang: Lang) -> list[str]:
    """A table's column headers in `lang`: column `x` is said by the catalogue's `ui_col_x`, whose English is the
    column's own name (English pages, and scripts reading a table, see the columns they always had)."""
    return [t(f"ui_col_{column}", lang) for column in columns]


def choices(values: Iterable[str], lang: Lang, prefix: str) -> list[tuple[str, str]]:
    """A radio's or dropdown's (label, value) pairs: value `x` is said by the catalogue's `<prefix>x` in `lang`, and
    the value itself (what handlers, the API and the stored files see) stays as it is."""
    return [(t(f"{prefix}{value}", lang), value) for value in values]


@dataclass
class Wording:
    """One piece of a component's text (its label, its value, its choices…) as the catalogue says it."""

    component: Any
    prop: str
    say: Callable[[Lang], Any]


class Words:
    """Collects the wording while the layout is built: `words(component, label=key)` registers and returns it."""

    def __init__(self, lang: Lang):
        self.lang = lang
        self.entries: list[Wording] = []

    def __call__(self, component: Any, **props: str | Callable[[Lang], Any]) -> Any:
        for prop, key in props.items():
            say = key if callable(key) else (lambda lang, key=key: t(key, lang))
            self.entries.append(Wording(component, prop, say))
        return component

    def text(self, key: str) -> str:
        return t(key, self.lang)


class Relabelled:
    """A page whose wording was registered with `Words` (in `self.wording`): its components, and their text in
    another language. Shared by this app and the team app (ui/team/layout.py)."""

    wording: list[Wording]

    @property
    def worded(self) -> list[Any]:
        return [w.component for w in self.wording]

    def relabel(self, lang: Lang) -> list[Any]:
        """One update per registered wording, in the order of `worded`."""
        return [gr.update(**{w.prop: w.say(lang)}) for w in self.wording]
