"""The streamed workbook writer (report/xlsx_stream.py) writes what openpyxl and pandas read back: text stays text
(formula-looking, XML-special, control and surrogate characters included), numbers stay numbers, each sheet keeps
its frozen header, filter and per-column widths."""
from __future__ import annotations

import pandas as pd
from openpyxl import load_workbook

from rubriceval.report.xlsx_stream import Book, write_sheet


def test_cells_read_back_as_written(tmp_path):
    book = Book(tmp_path / "w.xlsx")
    rows = [["=1+1", 0.25, 3, True, None, "a & b <c> 'd'\n第二行"], ["ok\x07bell", 1e-9, -2, False, "", "\ud800x"]]
    write_sheet(book.create_sheet("data & more"), ["文本", "float", "int", "bool", "none", "wrapped"], rows,
                wrapped=[5])
    write_sheet(book.create_sheet("empty"), ["h"], [])
    path = book.close()
    wb = load_workbook(path)
    assert wb.sheetnames == ["data & more", "empty"]
    ws = wb["data & more"]
    values = [[c.value for c in row] for row in ws.iter_rows(min_row=2)]
    assert values[0][:4] == ["'=1+1", 0.25, 3, True] and values[0][5] == "a & b <c> 'd'\n第二行"
    assert values[1][0] == "okbell" and values[1][1] == 1e-9 and values[1][5] == "?x"
    assert ws["A2"].data_type == "s" and ws.freeze_panes == "A2" and ws.auto_filter.ref == "A1:F3"
    assert ws.column_dimensions["F"].width == 50 and ws.column_dimensions["A"].width == 8
    assert ws["A1"].font.b and ws["F2"].alignment.wrap_text
    assert wb["empty"].max_row == 1 and not wb["empty"].auto_filter.ref
    frame = pd.read_excel(path, sheet_name="data & more")
    assert list(frame.columns) == ["文本", "float", "int", "bool", "none", "wrapped"] and len(frame) == 2
