"""Spreadsheet exports never start a formula, and the project's own reader gets the original text back."""
from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook

from rubriceval import Sample, read_dataset, write_dataset
from rubriceval.data.spreadsheet import FORMULA_STARTS, escape_cell, escape_frame, unescape_cell

HOSTILE_CELLS = ['=HYPERLINK("http://x","点我")', "@SUM(1,2)", "-5", "+86 138 0013 8000", "=1+1", "+SUM(A1)",
                 "-2+3+cmd|' /C calc'!A0", "\t=1", "\r=1", "＝HYPERLINK(\"http://x\")", "'=already quoted",
                 "''=twice", "'plain apostrophe", "-", "+", "普通文本", "", "-3.5e2", "@"]


def _formula_like(cell: str) -> bool:
    return bool(cell) and cell[0] in FORMULA_STARTS


@pytest.mark.parametrize("text", HOSTILE_CELLS)
def test_escape_then_unescape_is_the_identity(text):
    assert unescape_cell(escape_cell(text)) == text


@pytest.mark.parametrize("text", HOSTILE_CELLS)
def test_no_escaped_text_cell_starts_a_formula(text):
    escaped = escape_cell(text)
    plain_number = text in ("-5", "-3.5e2")
    assert not _formula_like(escaped) or plain_number


def test_numbers_are_never_touched():
    assert escape_cell(-5) == -5 and escape_cell(3.5) == 3.5 and escape_cell(None) is None
    frame = escape_frame(pd.DataFrame({"score": [-5.0, 4.0], "answer": ["=1+1", "ok"]}))
    assert frame["score"].tolist() == [-5.0, 4.0] and frame["answer"].tolist() == ["'=1+1", "ok"]


def _samples() -> list[Sample]:
    return [Sample(id="=HYPERLINK(\"http://x\",\"点我\")", question="@SUM(1,2)", answer="-5",
                   ground_truth="+86 138 0013 8000", contexts=["=cmd|' /C calc'!A0"], intent="'=quoted",
                   metadata={"note": "-2+3"}),
            Sample(id="row-2", question="正常的问题？", answer="\t=1")]


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_dataset_round_trips_through_csv_and_excel(tmp_path: Path, suffix):
    samples = _samples()
    path = write_dataset(samples, tmp_path / f"data{suffix}")
    assert read_dataset(path) == samples


def test_written_csv_has_no_formula_cells(tmp_path: Path):
    path = write_dataset(_samples(), tmp_path / "data.csv")
    with path.open(encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert "'=HYPERLINK(\"http://x\",\"点我\")" in cells and "'@SUM(1,2)" in cells
    assert not [cell for cell in cells if _formula_like(cell) and cell != "-5"]


def test_written_workbook_has_no_formula_cells(tmp_path: Path):
    path = write_dataset(_samples(), tmp_path / "data.xlsx")
    sheet = load_workbook(path).active
    cells = [cell for row in sheet.iter_rows() for cell in row]
    assert not [c.coordinate for c in cells if c.data_type == "f"]
    assert not [c.value for c in cells if isinstance(c.value, str) and _formula_like(c.value) and c.value != "-5"]


def test_results_csv_and_excel_report_escape_hostile_text(tmp_path: Path):
    """The run's results.csv and the Excel report: the hostile question/answer are text, not formulas."""
    from rubriceval import RunStore, write_excel_report
    from rubriceval.cli import main

    data = tmp_path / "hostile.jsonl"
    write_dataset([Sample(id="a", question='=HYPERLINK("http://x","点我")', answer="@SUM(1,2)",
                          ground_truth="@SUM(1,2)")], data)
    store_path = tmp_path / "runs.sqlite"
    assert main(["run", str(data), "--metrics", "exact_match", "--out", str(tmp_path / "out"),
                 "--store", str(store_path)]) == 0
    with (tmp_path / "out" / "results.csv").open(encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["question"] == "'=HYPERLINK(\"http://x\",\"点我\")" and rows[0]["answer"] == "'@SUM(1,2)"
    assert not [c for row in rows for c in row.values() if c and _formula_like(c)]
    store = RunStore(store_path)
    run_id = store.list_runs()[0].run_id
    sheets = load_workbook(write_excel_report(store, run_id, tmp_path / "report.xlsx"))
    cells = [cell for sheet in sheets for row in sheet.iter_rows() for cell in row]
    assert not [c.coordinate for c in cells if c.data_type == "f"]
    texts = [c.value for c in cells if isinstance(c.value, str)]
    assert "'@SUM(1,2)" in texts and not [t for t in texts if _formula_like(t)]
