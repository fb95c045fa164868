"""Shared helpers for deterministic checks: each check reads one sample field and returns Evidence, worded from the
one catalogue (`rubriceval.i18n`) in the sample's language and kept as a message for the report and the app."""
from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from rubriceval.data.sample import Sample
from rubriceval.i18n import msg, render
from rubriceval.i18n.catalogue import Message


def field_text(sample: Sample, field: str) -> str:
    value = getattr(sample, field)
    if isinstance(value, list):
        return "\n".join(value)
    return value or ""


@lru_cache(maxsize=16)
def normalise(text: str, case_sensitive: bool = False) -> str:
    """NFKC folds full-width letters/digits (ＯＡ → OA) so '二级主管' matches however it was typed."""
    text = unicodedata.normalize("NFKC", text)
    return text if case_sensitive else text.casefold()


def _alternatives(phrase: str) -> list[str]:
    return [a.strip() for a in phrase.split("|") if a.strip()]


def find_any(text: str, alternatives: str, case_sensitive: bool = False) -> tuple[int, str] | None:
    """Earliest position of any '|'-separated alternative, with the alternative found. Positions refer to NFKC text,
    which keeps length for CJK and ASCII, so spans quote the original answer."""
    haystack = normalise(text, case_sensitive)
    best: tuple[int, str] | None = None
    for alt in _alternatives(alternatives):
        pos = haystack.find(normalise(alt, case_sensitive))
        if pos != -1 and (best is None or pos < best[0]):
            best = (pos, alt)
    return best


def span_at(text: str, start: int, length: int) -> str:
    return text[start:start + length] if len(unicodedata.normalize("NFKC", text)) == len(text) else \
        unicodedata.normalize("NFKC", text)[start:start + length]


def worded(sample: Sample, key: str, **params: Any) -> dict[str, Any]:
    """`detail` (in the sample's language) and `message` for an Evidence: Evidence(..., **worded(sample, key, …))."""
    message = msg(key, **params)
    return {"detail": render(message, sample.language), "message": message}


def reworded(sample: Sample, message: Message) -> dict[str, Any]:
    return {"detail": render(message, sample.language), "message": message}


def quoted(text: str) -> str:
    """A phrase as evidence shows it, the same in both languages."""
    return f"“{text}”"


def synonym_group(phrase: str) -> str:
    """A required phrase with its synonyms, as evidence shows what is missing: “退款 / 补偿”."""
    return quoted(" / ".join(_alternatives(phrase)))
