"""Workbook sheets written row by row to disk (XlsxWriter's constant-memory mode): a sheet of millions of rows
costs no more memory than one row. XlsxWriter over openpyxl: openpyxl keeps every cell object in memory (gigabytes
for a million-row run) and, in its write-only mode, writes about a third as fast.

Each sheet has a bold frozen header row, an autofilter and column widths fitted to its content (wrapped text
columns at a fixed width). Text is written as text, never as a formula, URL or number, with characters Excel
rejects removed and formula-like text escaped (OWASP's leading apostrophe).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import xlsxwriter
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

from rubriceval.safety.spreadsheet import escape_cell

EXCEL_CELL_LIMIT = 32767
MAX_COLUMN_WIDTH = 60
WRAPPED_COLUMN_WIDTH = 50
HEADER_FILL = "#DDE4EE"
# XlsxWriter adds the cell padding to a width (5 px at 7 px a character); take it off so Excel shows `width`.
_PADDING_CHARS = 5 / 7


def clean(value: Any) -> Any:
    if isinstance(value, str):
        value = escape_cell(ILLEGAL_CHARACTERS_RE.sub("", value))   # formula-like text gets OWASP's apostrophe
        if len(value) > EXCEL_CELL_LIMIT:
            value = value[:EXCEL_CELL_LIMIT - 1] + "…"
    return value


def width(value: Any) -> int:
    """Display width of a cell's first line: CJK characters count two."""
    text = "" if value is None else str(value)
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in text.split("\n")[0])


class Book:
    """A workbook being written; sheets are created in order and filled row by row."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.wb = xlsxwriter.Workbook(str(self.path), {"constant_memory": True, "strings_to_formulas": False,
                                                       "strings_to_urls": False, "strings_to_numbers": False})
        self.header = self.wb.add_format({"bold": True, "bg_color": HEADER_FILL})
        self.wrap = self.wb.add_format({"text_wrap": True, "valign": "top"})
        self._column_formats: dict[tuple[int, bool], Any] = {}

    def column_format(self, col: int, wrapped: bool) -> Any:
        """A format object of the column's own (equal formats are stored once): XlsxWriter merges neighbouring
        columns of the same width and format object into one range, which readers that look a column up by its
        letter (openpyxl's column_dimensions) then miss."""
        key = (col, wrapped)
        if key not in self._column_formats:
            self._column_formats[key] = self.wb.add_format({"text_wrap": True, "valign": "top"} if wrapped else {})
        return self._column_formats[key]

    def create_sheet(self, name: str) -> "Sheet":
        return Sheet(self, self.wb.add_worksheet(name))

    def close(self) -> Path:
        self.wb.close()
        return self.path


class Sheet:
    def __init__(self, book: Book, ws: Any):
        self.book, self.ws = book, ws
        self.rows = 0                       # rows written, the header included

    def append(self, values: Sequence[Any], cell_format: Any = None, wrapped: Sequence[int] = ()) -> list[Any]:
        """Write one row; returns its values as written (cleaned)."""
        written = [clean(v) for v in values]
        for col, value in enumerate(written):
            fmt = self.book.wrap if col in wrapped else cell_format
            if value is None:
                if fmt is not None:
                    self.ws.write_blank(self.rows, col, None, fmt)
            elif isinstance(value, str):
                self.ws.write_string(self.rows, col, value, fmt)
            elif isinstance(value, bool):
                self.ws.write_boolean(self.rows, col, value, fmt)
            else:
                self.ws.write_number(self.rows, col, value, fmt)
        self.rows += 1
        return written


def write_sheet(sheet: Sheet, headers: Sequence[str], rows: Iterable[Sequence[Any]],
                wrapped: Sequence[int] = ()) -> int:
    """Header, rows (any iterable: a generator streams), frozen header, autofilter, widths. Returns the row count."""
    sheet.append(list(headers), sheet.book.header)
    widths = [width(h) for h in headers]
    n = 0
    measured = [col for col in range(len(headers)) if col not in wrapped]
    for row in rows:
        written = sheet.append(row, wrapped=wrapped)
        for col in measured:
            if col < len(written):
                widths[col] = max(widths[col], width(written[col]))
        n += 1
    sheet.ws.freeze_panes(1, 0)
    if n:
        sheet.ws.autofilter(0, 0, n, len(headers) - 1)
    for col in range(len(headers)):
        chars = WRAPPED_COLUMN_WIDTH if col in wrapped else min(MAX_COLUMN_WIDTH, max(8, widths[col] + 2))
        sheet.ws.set_column(col, col, chars - _PADDING_CHARS, sheet.book.column_format(col, col in wrapped))
    return n
