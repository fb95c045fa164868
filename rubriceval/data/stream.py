"""Dataset records read one at a time (JSONL and CSV line by line, Excel in openpyxl's read-only mode), so a file of
any size is read in flat memory and a bad line is reported the moment it is reached: file:line [field].

Each record comes as (line or row number as a person counts it, dict). A JSON file holding one list is a single
document and is read whole; a legacy .xls goes through pandas.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubriceval.common.errors import DatasetError
from rubriceval.data.spreadsheet import unescape_cell

JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
CSV_SUFFIXES = (".csv", ".tsv")
EXCEL_SUFFIXES = (".xlsx", ".xlsm", ".xls")
Record = tuple[int, dict[str, Any]]


def iter_records(path: str | Path) -> Iterator[Record]:
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.exists():
        raise DatasetError("file not found", file=str(path))
    if suffix in JSON_SUFFIXES:
        if suffix == ".json" and _starts_with_list(path):
            yield from _json_list(path)
        else:
            yield from _jsonl(path)
    elif suffix in CSV_SUFFIXES:
        yield from _csv(path, "\t" if suffix == ".tsv" else ",")
    elif suffix == ".xls":
        yield from _legacy_excel(path)
    elif suffix in EXCEL_SUFFIXES:
        yield from _excel(path)
    else:
        raise DatasetError(f"unsupported file type '{suffix}'", file=str(path), hint="use .jsonl, .csv or .xlsx")


def _starts_with_list(path: Path) -> bool:
    with path.open("rb") as fh:
        head = fh.read(4096).decode("utf-8-sig", errors="replace")
    return head.lstrip().startswith("[")


def _json_list(path: Path) -> Iterator[Record]:
    try:
        items = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not valid UTF-8 (byte {exc.start})", file=str(path), hint="re-save the file as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    for i, item in enumerate(items):
        yield i + 1, item


def _jsonl(path: Path) -> Iterator[Record]:
    # Binary lines end at b"\n" only: U+2028/U+2029/U+0085 inside a row do not split it (str.splitlines would).
    offset = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"not valid UTF-8 (byte {offset + exc.start})", file=str(path), line=lineno,
                                   hint="re-save the file as UTF-8") from None
            offset += len(raw)
            obj = jsonl_record(line, path, lineno)
            if obj is not None:
                yield lineno, obj


def jsonl_record(line: str, path: str | Path, lineno: int | None) -> dict[str, Any] | None:
    """One JSONL line as its record (None for a blank line), or the error naming file and line."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=str(path), line=lineno) from None
    if not isinstance(obj, dict):
        raise DatasetError("each line must be a JSON object", file=str(path), line=lineno)
    return obj


def _csv(path: Path, delimiter: str) -> Iterator[Record]:
    # Rows are numbered as a spreadsheet shows them: the header is row 1, so data row i is row i + 2.
    with path.open("r", encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        try:
            header = next(reader, None)
            if header is None:
                raise DatasetError("the file is empty", file=str(path))
            header = [unescape_cell(h) for h in header]
            for i, cells in enumerate(reader):
                if not cells:
                    continue
                if len(cells) > len(header):
                    raise DatasetError(f"row has {len(cells)} cells, the header names {len(header)} columns",
                                       file=str(path), line=i + 2, hint="quote cells that contain the delimiter")
                yield i + 2, {name: unescape_cell(cells[k]) if k < len(cells) else None
                              for k, name in enumerate(header)}
        except UnicodeDecodeError:
            raise DatasetError("not valid UTF-8", file=str(path), line=reader.line_num + 1,
                               hint="re-save the file as UTF-8 CSV") from None
        except csv.Error as exc:
            raise DatasetError(f"CSV error: {exc}", file=str(path), line=reader.line_num) from None


def _excel_text(value: Any) -> str:
    """A cell as text, the way pandas reads a sheet with dtype=str (empty cells are '')."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return unescape_cell(str(value))


def _excel(path: Path) -> Iterator[Record]:
    from openpyxl import load_workbook

    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        rows = wb.worksheets[0].iter_rows(values_only=True)
        header_row = next(rows, None)
        if header_row is None:
            return
        header = [_excel_text(h) for h in header_row]
        while header and not header[-1]:                 # trailing empty header cells of a read-only sheet
            header.pop()
        for i, row in enumerate(rows):
            cells = [_excel_text(v) for v in row[:len(header)]]
            if not any(cells):
                continue
            cells += [""] * (len(header) - len(cells))
            yield i + 2, dict(zip(header, cells))
    finally:
        wb.close()


def _legacy_excel(path: Path) -> Iterator[Record]:
    import pandas as pd

    from rubriceval.data.spreadsheet import unescape_frame

    frame = pd.read_excel(path, dtype=str).fillna("")
    for i, record in enumerate(unescape_frame(frame).to_dict(orient="records")):
        yield i + 2, record
