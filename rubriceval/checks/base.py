"""Shared helpers for deterministic checks: each check reads one sample field and returns Evidence."""
from __future__ import annotations

import unicodedata
from functools import lru_cache

from rubriceval.data.sample import Sample


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


def find_any(text: str, alternatives: str, case_sensitive: bool = False) -> tuple[int, str] | None:
    """Earliest position of any '|'-separated alternative, with the alternative found. Positions refer to NFKC text,
    which keeps length for CJK and ASCII, so spans quote the original answer."""
    haystack = normalise(text, case_sensitive)
    best: tuple[int, str] | None = None
    for alt in (a.strip() for a in alternatives.split("|")):
        if not alt:
            continue
        pos = haystack.find(normalise(alt, case_sensitive))
        if pos != -1 and (best is None or pos < best[0]):
            best = (pos, alt)
    return best


def quote(text: str, start: int, length: int) -> str:
    return text[start:start + length] if len(unicodedata.normalize("NFKC", text)) == len(text) else \
        unicodedata.normalize("NFKC", text)[start:start + length]
