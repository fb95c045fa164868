"""The workbook a run's report writes its sections into: sheets streamed to disk row by row (report/xlsx_stream.py),
sheet names unique, the report's language and the sheet row limit at hand."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from rubriceval.i18n import Lang
from rubriceval.report.xlsx_stream import Book, Sheet, write_sheet

EXCEL_MAX_ROWS = 1_048_576        # rows an Excel worksheet holds, its header row included


class ExcelBook:
    def __init__(self, path: str | Path, lang: Lang, max_rows: int = EXCEL_MAX_ROWS):
        self.book = Book(path)
        self.lang, self.max_rows = lang, max_rows

    @property
    def taken(self) -> set[str]:
        return {sheet.name for sheet in self.book.sheets}

    def sheet(self, name: str, headers: Sequence[str], rows: Iterable[Sequence[Any]],
              wrapped: Sequence[int] = ()) -> Sheet:
        """A table sheet: bold frozen header, autofilter, fitted widths; rows may be a generator (streamed)."""
        sheet = self.book.create_sheet(name)
        write_sheet(sheet, headers, rows, wrapped)
        return sheet

    def split_sheet(self, names: Sequence[str], headers: Sequence[str], rows: Iterator[Sequence[Any]],
                    wrapped: Sequence[int]) -> None:
        """One table over several sheets, `max_rows` rows each (Excel refuses a sheet beyond its limit)."""
        for name in names:
            self.sheet(name, headers, islice(rows, self.max_rows - 1), wrapped)

    def plain_sheet(self, name: str, rows: Iterable[Sequence[Any]]) -> Sheet:
        """A sheet of lines and tables as they come (no header styling): text still escaped, never a formula."""
        sheet = self.book.create_sheet(name)
        for row in rows:
            sheet.append(row)
        return sheet

    def close(self) -> Path:
        return self.book.close()


def split_names(name: str, n_rows: int, max_rows: int) -> list[str]:
    """Rows beyond Excel's sheet limit continue on name_2, name_3, … (Excel would refuse to open the file, or drop
    them silently)."""
    parts = max(1, -(-n_rows // (max_rows - 1)))
    return [name] + [f"{name}_{i}" for i in range(2, parts + 1)]
