"""Workbook sheets streamed to disk as SpreadsheetML, row by row: a sheet of millions of rows costs no more memory
than one row, and ~16 µs a row of 17 cells.

Why not a library: openpyxl keeps every cell object in memory (gigabytes for a million-row run) and its write-only
mode, like XlsxWriter's constant-memory mode, spends 100–400 µs a row in generic per-cell code here: the report of a
100,000-row run (500,000 sheet rows) took minutes. The part of the format used is small and fixed — inline strings,
numbers, three cell styles (header, wrapped, plain), a frozen header row, an autofilter, column widths — and the tests
read every workbook back with openpyxl and pandas.

Each sheet has a bold frozen header row, an autofilter and column widths fitted to its content (wrapped text
columns at a fixed width). Text is written as text, never as a formula, with characters XML and Excel reject removed
and formula-like text escaped (OWASP's leading apostrophe).
"""
from __future__ import annotations

import re
import shutil
import tempfile
import zipfile
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.utils import get_column_letter

from rubriceval.data.spreadsheet import ESCAPE, FORMULA_STARTS, escape_cell

EXCEL_CELL_LIMIT = 32767
MAX_COLUMN_WIDTH = 60
WRAPPED_COLUMN_WIDTH = 50
PLAIN, HEADER, WRAPPED = 0, 1, 2                     # cell style ids (cellXfs in STYLES)
_NOT_XML = str.maketrans({0xFFFE: None, 0xFFFF: None})
_MAY_ESCAPE = FORMULA_STARTS | {ESCAPE}                # first characters escape_cell may act on
_WIDE = re.compile("[\u2e81-\U0010ffff]")               # counted twice in a column's width (ord > 0x2E80)
WIDTH_SCAN = MAX_COLUMN_WIDTH + 1
_SHORT = 64                                          # strings this short have their cell XML remembered
_REMEMBERED = 4096                                   # at most this many (cleared when full: ids churn)
_LETTERS = [get_column_letter(i + 1) for i in range(256)]   # for filter ranges
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006"
STYLES = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet xmlns="{_MAIN}">'
          '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font>'
          '<font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
          '<fills count="3"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/>'
          '</fill><fill><patternFill patternType="solid"><fgColor rgb="FFDDE4EE"/><bgColor indexed="64"/>'
          '</patternFill></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border>'
          '</borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
          '<cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
          '<xf numFmtId="0" fontId="1" fillId="2" borderId="0" xfId="0" applyFont="1" applyFill="1"/>'
          '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1">'
          '<alignment vertical="top" wrapText="1"/></xf></cellXfs>'
          '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>')


def clean(value: Any) -> Any:
    if isinstance(value, str):
        value = ILLEGAL_CHARACTERS_RE.sub("", value)
        if value and value[0] in _MAY_ESCAPE:    # escape_cell decides on the first character: ask it only then
            value = escape_cell(value)           # (formula-like text gets OWASP's apostrophe)
        if len(value) > EXCEL_CELL_LIMIT:
            value = value[:EXCEL_CELL_LIMIT - 1] + "…"
    return value


def width(value: Any) -> int:
    """Display width of a cell's first line: CJK characters count two. Only the first WIDTH_SCAN characters are
    read: a column is never wider than MAX_COLUMN_WIDTH."""
    text = "" if value is None else value if isinstance(value, str) else str(value)
    line = text[:WIDTH_SCAN].partition("\n")[0]
    return len(line) if line.isascii() else len(line) + len(_WIDE.findall(line))


def _xml(text: str) -> str:
    if "&" in text or "<" in text or ">" in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if "\ufffe" in text or "\uffff" in text:
        text = text.translate(_NOT_XML)
    return text


def _cell(value: Any, style: int) -> str:
    # No r="A1" reference: a cell's column is its place in the row (every cell is written, empty ones too), so the
    # same value's XML serves every row it appears in.
    s = f' s="{style}"' if style else ""
    if value is None:
        return f"<c{s}/>"
    if isinstance(value, str):
        return f'<c{s} t="inlineStr"><is><t xml:space="preserve">{_xml(value)}</t></is></c>'
    if isinstance(value, bool):
        return f'<c{s} t="b"><v>{int(value)}</v></c>'
    return f"<c{s}><v>{value!r}</v></c>"


class _Same:
    """Marks a cell that repeats the one above it (same value object, same style)."""


SAME = _Same()


class Book:
    """A workbook being written: sheets are created in order and filled row by row; `close` writes the file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Beside the output, not in /tmp: /tmp is often RAM (tmpfs), and a million-row sheet is gigabytes of XML.
        self._tmp = tempfile.TemporaryDirectory(prefix=".rubriceval-xlsx-", dir=self.path.parent)
        self.sheets: list[Sheet] = []

    def create_sheet(self, name: str) -> Sheet:
        sheet = Sheet(name, Path(self._tmp.name) / f"sheet{len(self.sheets) + 1}.xml")
        self.sheets.append(sheet)
        return sheet

    def close(self) -> Path:
        names = "".join(f'<sheet name="{_xml(s.name)}" sheetId="{i}" r:id="rId{i}"/>'
                        for i, s in enumerate(self.sheets, start=1))
        filters = "".join(f'<definedName name="_xlnm._FilterDatabase" localSheetId="{i}" hidden="1">'
                          f"'{_xml(s.name)}'!{s.filter_range(absolute=True)}</definedName>"
                          for i, s in enumerate(self.sheets) if s.filter_range())
        head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        with zipfile.ZipFile(self.path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
            zf.writestr("[Content_Types].xml", head + f'<Types xmlns="{_PKG}/content-types">'
                        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships'
                        '+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/'
                        'workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.'
                        'main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-'
                        'officedocument.spreadsheetml.styles+xml"/>' + "".join(
                            f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="application/vnd.'
                            'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
                            for i in range(1, len(self.sheets) + 1)) + "</Types>")
            zf.writestr("_rels/.rels", head + f'<Relationships xmlns="{_PKG}/relationships"><Relationship Id="rId1" '
                        f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>')
            zf.writestr("xl/workbook.xml", head + f'<workbook xmlns="{_MAIN}" xmlns:r="{_REL}"><sheets>{names}'
                        "</sheets>" + (f"<definedNames>{filters}</definedNames>" if filters else "") + "</workbook>")
            n = len(self.sheets)
            zf.writestr("xl/_rels/workbook.xml.rels", head + f'<Relationships xmlns="{_PKG}/relationships">' + "".join(
                f'<Relationship Id="rId{i}" Type="{_REL}/worksheet" Target="worksheets/sheet{i}.xml"/>'
                for i in range(1, n + 1)) + f'<Relationship Id="rId{n + 1}" Type="{_REL}/styles" '
                'Target="styles.xml"/></Relationships>')
            zf.writestr("xl/styles.xml", STYLES)
            for i, sheet in enumerate(self.sheets, start=1):
                sheet.write_into(zf, f"xl/worksheets/sheet{i}.xml", selected=i == 1)
        self._tmp.cleanup()
        return self.path


class Sheet:
    """One worksheet: rows go to a temporary file as they come; widths, frozen header and filter are added when the
    workbook is closed (they precede and follow the rows in the file)."""

    def __init__(self, name: str, tmp: Path):
        self.name, self.tmp = name, tmp
        self._fh = tmp.open("w", encoding="utf-8", errors="replace")   # a lone surrogate cannot be UTF-8: "?"
        self._buffer: list[str] = []
        self.rows = 0                         # rows written, the header included
        self.widths: list[float] = []
        self.filter_columns = 0               # > 0: an autofilter over the header and the rows written with it
        self.filter_rows = 0
        self.frozen = False
        self._last: list[tuple[Any, int, str] | None] = []   # per column: the last value, its style and XML
        self._remembered: dict[tuple[Any, int], tuple[Any, str]] = {}   # short text: its cleaned value and XML

    def append(self, values: Sequence[Any], style: int = PLAIN, wrapped: Collection[int] = ()) -> list[Any | _Same]:
        """Write one row; returns its values as written (cleaned), SAME where a column repeats the row above (a
        sample's text beside each of its verdicts is cleaned and escaped once)."""
        self.rows += 1
        lasts = self._last
        if len(lasts) < len(values):
            lasts.extend([None] * (len(values) - len(lasts)))
        remembered = self._remembered
        written: list[Any] = []
        cells: list[str] = []
        for col, value in enumerate(values):
            cell_style = WRAPPED if col in wrapped else style
            last = lasts[col]
            if last is not None and last[0] is value and last[1] == cell_style:
                written.append(SAME)
                cells.append(last[2])
                continue
            # Short text (names, kinds, marks) and empty cells repeat across rows: their cleaned value and XML once.
            key = (value, cell_style) if value is None or (type(value) is str and len(value) <= _SHORT) else None
            known = remembered.get(key) if key is not None else None
            if known is None:
                clean_value = clean(value)
                known = (clean_value, _cell(clean_value, cell_style))
                if key is not None:
                    if len(remembered) >= _REMEMBERED:
                        remembered.clear()
                    remembered[key] = known
            lasts[col] = (value, cell_style, known[1])
            written.append(known[0])
            cells.append(known[1])
        self._buffer.append(f'<row r="{self.rows}">{"".join(cells)}</row>')
        if len(self._buffer) >= 1000:
            self._fh.write("".join(self._buffer))
            self._buffer.clear()
        return written

    def filter_range(self, absolute: bool = False) -> str:
        if not self.filter_columns:
            return ""
        last = _LETTERS[self.filter_columns - 1]
        return f"$A$1:${last}${self.filter_rows}" if absolute else f"A1:{last}{self.filter_rows}"

    def write_into(self, zf: zipfile.ZipFile, name: str, *, selected: bool) -> None:
        self._fh.write("".join(self._buffer))
        self._fh.close()
        view = '<sheetView workbookViewId="0"' + (' tabSelected="1"' if selected else "") + ">"
        if self.frozen:
            view += ('<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>'
                     '<selection pane="bottomLeft"/>')
        cols = "".join(f'<col min="{i}" max="{i}" width="{w:g}" customWidth="1"/>'
                       for i, w in enumerate(self.widths, start=1))
        # An entry over 2 GiB needs ZIP64, which zipfile must be told of before writing (a sheet of a million long
        # rows can come close); smaller sheets stay in the plain format every reader knows.
        with zf.open(name, "w", force_zip64=self.tmp.stat().st_size > 1 << 30) as out:
            out.write((f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{_MAIN}" '
                       f'xmlns:r="{_REL}"><sheetViews>{view}</sheetView></sheetViews>'
                       '<sheetFormatPr defaultRowHeight="15"/>' + (f"<cols>{cols}</cols>" if cols else "")
                       + "<sheetData>").encode())
            with self.tmp.open("rb") as rows:
                shutil.copyfileobj(rows, out, 1 << 20)
            footer = "</sheetData>" + (f'<autoFilter ref="{self.filter_range()}"/>' if self.filter_columns else "")
            out.write((footer + "</worksheet>").encode())


def write_sheet(sheet: Sheet, headers: Sequence[str], rows: Iterable[Sequence[Any]],
                wrapped: Sequence[int] = ()) -> int:
    """Header, rows (any iterable: a generator streams), frozen header, autofilter, widths. Returns the row count."""
    sheet.append(list(headers), HEADER)
    wrapped_columns = frozenset(wrapped)
    widths = [width(h) for h in headers]
    measured = [col for col in range(len(headers)) if col not in wrapped_columns]
    known: dict[str, int] = {}                # the width of each short text seen (names, kinds, marks repeat)
    n = 0
    for row in rows:
        written = sheet.append(row, wrapped=wrapped_columns)
        for col in measured:
            if col < len(written) and (value := written[col]) is not SAME:
                if type(value) is str and len(value) <= _SHORT:
                    if (w := known.get(value)) is None:
                        w = known[value] = width(value)
                        if len(known) > _REMEMBERED:
                            known.clear()
                else:
                    w = width(value)
                if w > widths[col]:
                    widths[col] = w
        n += 1
        if n % 1024 == 0:        # a column at the widest it can be shown needs no more measuring
            measured = [col for col in measured if widths[col] < WIDTH_SCAN]
    sheet.frozen = True
    sheet.filter_columns, sheet.filter_rows = (len(headers) if n else 0), sheet.rows
    sheet.widths = [WRAPPED_COLUMN_WIDTH if col in wrapped_columns
                    else min(MAX_COLUMN_WIDTH, max(8, widths[col] + 2)) for col in range(len(headers))]
    return n
