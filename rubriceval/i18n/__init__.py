"""One catalogue of user-visible wording in Chinese and English, used by the report, the audit app and the checks'
evidence, and the one rule for choosing the language: the data's language unless the user asks for the other.

    t("cache_hits", "zh")                    → 评审缓存命中
    render(evidence.message, "en")           → the same evidence, said in English
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rubriceval.i18n.catalogue import LANGS, MESSAGES, Lang, Message, check_lang, msg, render, resay, say, t

__all__ = ["LANGS", "MESSAGES", "Lang", "Message", "check_lang", "detect_language", "evidence_text", "format_number",
           "format_percent", "msg", "render", "resay", "say", "t"]


def detect_language(samples: Iterable[Any]) -> Lang:
    """'zh' when at least half the samples are Chinese (ties go to Chinese, the project's first language)."""
    zh = en = 0
    for sample in samples:
        if sample.language == "zh":
            zh += 1
        else:
            en += 1
    if zh == 0 and en == 0:
        return "en"
    return "zh" if zh >= en else "en"


def evidence_text(evidence: Any, lang: Lang) -> str:
    """A check's evidence in `lang` (from its stored message); text written without a message is shown as it is."""
    message = getattr(evidence, "message", None)
    return render(message, lang) if message is not None else (getattr(evidence, "detail", "") or "")


def format_number(value: float | None, digits: int = 2, lang: Lang = "en") -> str:
    if value is None:
        return t("not_available", lang)
    return f"{value:.{digits}f}"


def format_percent(value: float | None, lang: Lang = "en") -> str:
    if value is None:
        return t("not_available", lang)
    return f"{value * 100:.1f}%"
