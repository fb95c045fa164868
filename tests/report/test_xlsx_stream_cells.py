"""The workbook writer's shortcuts (report/xlsx_stream.py) change no cell: short text remembered across rows is
escaped and cleaned like new text, escape_cell is asked only about text that starts like a formula or an apostrophe
but decides as before, and column widths read only the first characters yet come out as a full measure gives."""
from __future__ import annotations

import random

from openpyxl import load_workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

from rubriceval.data.spreadsheet import FORMULA_STARTS, escape_cell
from rubriceval.report import xlsx_stream
from rubriceval.report.xlsx_stream import MAX_COLUMN_WIDTH, Book, write_sheet

HOSTILE = ["=1+1", "+86 138 0013 8000", "-5", "@SUM(A1)", "'=x", "''=x", "\x01=cmd", "\t=x", "＝HYPERLINK(\"x\")",
           "'", "a\x00b", "&<>", "\ufffe", "中文", "ok", "", "-", "'plain", "=" + "x" * 70]


def _full_width(value) -> int:
    text = "" if value is None else str(value)
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in text.split("\n")[0])


def test_every_first_character_is_cleaned_as_escape_cell_says():
    """clean() skips escape_cell only where it would return the text unchanged."""
    for first in [chr(c) for c in range(0x20, 0x7F)] + sorted(FORMULA_STARTS) + ["中", "'", "\x01"]:
        for text in (first, first + "=1", first + "5", first + "'=x"):
            expected = escape_cell(ILLEGAL_CHARACTERS_RE.sub("", text))
            assert xlsx_stream.clean(text) == expected, repr(text)


def test_remembered_short_text_is_escaped_in_every_row(tmp_path):
    rng = random.Random(7)
    rows = [[rng.choice(HOSTILE), rng.choice(HOSTILE), i, "长" * (i % 90) + "\n第二行"] for i in range(3000)]
    book = Book(tmp_path / "w.xlsx")
    write_sheet(book.create_sheet("s"), ["a", "b", "n", "long"], rows)
    ws = load_workbook(book.close())["s"]
    read = [[c.value for c in row] for row in ws.iter_rows(min_row=2)]
    for written, row in zip(read, rows):
        for got, value in zip(written[:2], row[:2]):
            expected = escape_cell(ILLEGAL_CHARACTERS_RE.sub("", value))       # what the writer did before
            assert (got or "") == expected.replace("\ufffe", ""), (got, value)
    for column, values in zip("ABCD", zip(*[[xlsx_stream.clean(v) for v in r] for r in rows])):
        full = max(_full_width(v) for v in [column.lower() if column != "C" else "n", *values])
        if column == "D":
            full = max(_full_width(v) for v in ["long", *values])
        assert ws.column_dimensions[column].width == min(MAX_COLUMN_WIDTH, max(8, full + 2))


def test_the_cache_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_stream, "_REMEMBERED", 50)
    book = Book(tmp_path / "w.xlsx")
    sheet = book.create_sheet("ids")
    write_sheet(sheet, ["id", "formula"], ([f"s{i:05d}", "=A1"] for i in range(500)))
    assert len(sheet._remembered) <= 50
    ws = load_workbook(book.close())["ids"]
    assert [c.value for c in ws["B"]][1:] == ["'=A1"] * 500
