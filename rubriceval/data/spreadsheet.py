"""Spreadsheet formula injection (CSV injection): cells written to CSV/Excel never start a formula.

OWASP's rule: a text cell starting with `=`, `+`, `-`, `@`, tab or carriage return gets a leading apostrophe, which a
spreadsheet reads as "this is text". The full-width forms `＝＋－＠` are escaped too (CJK input methods produce them and
some spreadsheet locales accept them as formula starts). The escape is exact to undo: the project's own reader
(`rubriceval/data/io.py`) removes one leading apostrophe where the rest would have been escaped, and an original text
that itself starts with such an apostrophe gets one more, so every string reads back as it was written.

Numbers: only text cells are escaped. Numeric cells (scores, counts, costs) are numbers in the file and never
formulas. A text cell holding exactly a number (`-5`, `+3.5`) is left alone as well: a spreadsheet reads it as
that number, which cannot run anything, and the project's reader gets the same text back. `+86 138 0013 8000` is not
a plain number, so it is escaped.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:     # frames are only passed through: importing this module must not load pandas
    import pandas as pd

FORMULA_STARTS = frozenset("=+-@\t\r＝＋－＠")
ESCAPE = "'"
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _needs_escape(text: str) -> bool:
    if not text:
        return False
    if text[0] == ESCAPE:
        return _needs_escape(text[1:])       # the reader would strip this apostrophe: protect it
    return text[0] in FORMULA_STARTS and not _PLAIN_NUMBER.fullmatch(text)


def escape_cell(value: Any) -> Any:
    """A text cell made safe to open in a spreadsheet; anything that is not text is returned unchanged."""
    if isinstance(value, str) and _needs_escape(value):
        return ESCAPE + value
    return value


def unescape_cell(value: Any) -> Any:
    """The text `escape_cell` was given (for cells read back from CSV/Excel)."""
    if isinstance(value, str) and value.startswith(ESCAPE) and _needs_escape(value[1:]):
        return value[1:]
    return value


def escape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` with every text cell escaped (the header too), ready for to_csv / to_excel."""
    escaped = frame.copy()
    for column in escaped.columns:   # every column: pandas keeps text as `object` or `str` dtype, numbers stay
        escaped[column] = escaped[column].map(escape_cell)
    escaped.columns = [escape_cell(c) for c in escaped.columns]
    return escaped


def unescape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame read from CSV/Excel with `escape_frame` undone (cells and header)."""
    restored = frame.copy()
    for column in restored.columns:
        restored[column] = restored[column].map(unescape_cell)
    restored.columns = [unescape_cell(c) for c in restored.columns]
    return restored
