"""The one catalogue of user-visible wording, in Chinese and English, and the rules for saying a message.

Every label of the report and the audit app, and every sentence a deterministic check writes as evidence, is a key
here. A missing key or language is a bug, so `t` raises instead of printing the key.

A `Message` (key + parameters) is what a check stores with its evidence: the report and the app say it again in
their own language. Parameters may be Messages themselves (said in the same language) or lists: a list of Messages
is joined as clauses (“；” / “; ”), any other list as items (“、” / “, ”).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.i18n.auto_accept_text import AUTO_ACCEPT_TEXT
from rubriceval.i18n.awaiting_text import AWAITING_TEXT
from rubriceval.i18n.conversation_text import CONVERSATION_TEXT
from rubriceval.i18n.evidence_text import EVIDENCE_TEXT
from rubriceval.i18n.official_text import OFFICIAL_TEXT
from rubriceval.i18n.pairwise_text import PAIRWISE_TEXT
from rubriceval.i18n.report_text import REPORT_TEXT
from rubriceval.i18n.run_report_text import RUN_REPORT_TEXT
from rubriceval.i18n.scorecard_review_text import SCORECARD_REVIEW_TEXT
from rubriceval.i18n.scorecard_text import SCORECARD_TEXT
from rubriceval.i18n.segment_text import SEGMENT_TEXT
from rubriceval.i18n.studio_messages_text import STUDIO_MESSAGES_TEXT
from rubriceval.i18n.studio_text import STUDIO_TEXT
from rubriceval.i18n.team_text import TEAM_TEXT
from rubriceval.i18n.ui_text import UI_TEXT
from rubriceval.i18n.weekly_text import WEEKLY_TEXT

Lang = Literal["zh", "en"]
LANGS: tuple[Lang, ...] = ("zh", "en")

ITEM_SEPARATOR: dict[str, str] = {"zh": "、", "en": ", "}
CLAUSE_SEPARATOR: dict[str, str] = {"zh": "；", "en": "; "}


def _merge(*parts: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for part in parts:
        clash = set(merged) & set(part)
        if clash:
            raise KeyError(f"catalogue keys defined twice: {sorted(clash)}")
        merged.update(part)
    return merged


MESSAGES: dict[str, dict[str, str]] = _merge(REPORT_TEXT, EVIDENCE_TEXT, UI_TEXT, PAIRWISE_TEXT, CONVERSATION_TEXT,
                                             TEAM_TEXT, SEGMENT_TEXT, OFFICIAL_TEXT, SCORECARD_TEXT,
                                             STUDIO_TEXT, SCORECARD_REVIEW_TEXT, STUDIO_MESSAGES_TEXT, RUN_REPORT_TEXT,
                                             AUTO_ACCEPT_TEXT,
                                             WEEKLY_TEXT, AWAITING_TEXT)


class Message(BaseModel):
    """A catalogue key with its parameters, kept so the text can be said again in either language."""

    key: str
    params: dict[str, Any] = Field(default_factory=dict)


def msg(key: str, **params: Any) -> Message:
    if key not in MESSAGES:
        raise KeyError(f"no catalogue text for {key!r}")
    return Message(key=key, params=params)


def t(key: str, lang: Lang, **params: object) -> str:
    """The text of `key` in `lang`, with `{name}` placeholders filled from params."""
    try:
        text = MESSAGES[key][lang]
    except KeyError:
        raise KeyError(f"no catalogue text for {key!r} in {lang!r}") from None
    return text.format(**params) if params else text


def _param(value: Any, lang: Lang) -> Any:
    if isinstance(value, dict) and "key" in value and set(value) <= {"key", "params"}:
        value = Message.model_validate(value)        # a nested message read back from JSON
    if isinstance(value, Message):
        return render(value, lang)
    if isinstance(value, (list, tuple)):
        said = [_param(v, lang) for v in value]
        clauses = any(isinstance(v, (Message, dict)) for v in value)
        return (CLAUSE_SEPARATOR if clauses else ITEM_SEPARATOR)[lang].join(str(s) for s in said)
    return value


def render(message: Message | dict, lang: Lang) -> str:
    """Say a message (and the messages inside it) in `lang`."""
    if isinstance(message, dict):
        message = Message.model_validate(message)
    return t(message.key, lang, **{name: _param(value, lang) for name, value in message.params.items()})


def say(text: Message | dict | str, lang: Lang) -> str:
    """A message in `lang`; text that is already written (no message) as it is."""
    return text if isinstance(text, str) else render(text, lang)


@cache
def _english_pattern(key: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", MESSAGES[key]["en"])
    return re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts)))


def resay(text: str, lang: Lang, keys: Iterable[str]) -> str:
    """`text`, an English sentence one of `keys` wrote (a record stored in English, e.g. a summary's notes), said in
    `lang` with the parameters read back from it; any other text as it is."""
    if lang == "en" or not text:
        return text
    for key in keys:
        if found := _english_pattern(key).fullmatch(text):
            return t(key, lang, **found.groupdict())
    parts = text.split("; ")                  # several notes joined ("…; …"): each said on its own
    if len(parts) > 1:
        return CLAUSE_SEPARATOR[lang].join(resay(part, lang, keys) for part in parts)
    return text


def check_lang(lang: str | None) -> Lang | None:
    if lang is None:
        return None
    if lang not in LANGS:
        from rubriceval.common.errors import RubricEvalError

        raise RubricEvalError(f"unknown language {lang!r}", field="lang", hint="use 'zh' or 'en'")
    return lang
