"""A comparison view of untrusted text: NFKC, case-folded, invisible characters dropped, common homoglyphs mapped.

Every defence that looks for something in hostile text (control tokens, delimiter look-alikes, judge-directed text,
personal data) searches this view, so `＜＜＜`, `<\u200b<<`, `ＲＥＳＵＬＴ`, `Ⓡ𝐞sult` and Cyrillic `Іgnore` are
caught like their plain forms. Each view character remembers the original character it came from, so a match is
quoted, or neutralised, in the original text: the shown text stays intact outside the matched spans.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# Cyrillic and Greek letters that render like Latin ones (NFKC leaves them alone). Small on purpose: the letters
# an attacker needs to spell "ignore", "system", "score", "result", "judge" … without tripping an ASCII match.
HOMOGLYPHS: dict[str, str] = {
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ɡ": "g", "ո": "n", "ս": "u",
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
}


@lru_cache(maxsize=4096)
def fold_char(char: str) -> str:
    """What one character compares as ('' for characters that render as nothing)."""
    if unicodedata.category(char) == "Cf" or "\ufe00" <= char <= "\ufe0f":   # zero-width, bidi marks, BOM, VS
        return ""
    folded = unicodedata.normalize("NFKC", char).casefold()
    return "".join(HOMOGLYPHS.get(c, c) for c in folded)


@dataclass(frozen=True)
class Folded:
    """`text` is the comparison view; `origin[i]` is the index in `original` that view character i came from."""

    original: str
    text: str
    origin: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) covering view characters [start, end)."""
        if start >= end:
            at = self.origin[start] if start < len(self.origin) else len(self.original)
            return at, at
        return self.origin[start], self.origin[end - 1] + 1

    def quote(self, start: int, end: int) -> str:
        lo, hi = self.span(start, end)
        return self.original[lo:hi]


@lru_cache(maxsize=1024)    # a sample's text is folded by each defence in turn: once is enough
def fold(text: str) -> Folded:
    pieces: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = char if char.isascii() and not char.isupper() else fold_char(char)
        pieces.append(folded)
        origin.extend([index] * len(folded))
    return Folded(original=text, text="".join(pieces), origin=tuple(origin))


def replace_chars_in_spans(text: str, spans: list[tuple[int, int]], replacements: dict[str, str]) -> str:
    """Swap, inside the given original spans, each character whose folded form is a key of `replacements`."""
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        for index in range(start, end):
            swapped = replacements.get(fold_char(chars[index]))
            if swapped is not None:
                chars[index] = swapped
    return "".join(chars)
