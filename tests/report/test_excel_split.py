"""The samples sheet never passes Excel's row limit: rows beyond it continue on samples_2, samples_3, …, and the
workbook and the console say so."""
from __future__ import annotations

from openpyxl import load_workbook

from rubriceval import RunConfig, RunStore, Sample, Verdict
from rubriceval.report.excel import EXCEL_MAX_ROWS, write_workbook
from rubriceval.report.run_data import load_run


def _store(tmp_path, n: int) -> RunStore:
    store = RunStore(tmp_path / "runs.sqlite")
    samples = [Sample(id=f"s{i:02d}", question=f"问题{i}", answer=f"回答{i}") for i in range(n)]
    run_id = store.create_run(RunConfig(), samples, [("rouge_l", "metric", "1", {"name": "rouge_l"})], name="r")
    for s in samples:
        store.save_verdict(run_id, Verdict(sample_id=s.id, scorer="rouge_l", kind="metric", score=0.5))
    return store


def test_excel_row_limit_is_excels():
    assert EXCEL_MAX_ROWS == 1_048_576


def test_rows_past_the_limit_continue_on_numbered_sheets(tmp_path, capsys):
    data = load_run(_store(tmp_path, 11), "r")
    path = write_workbook(data, tmp_path / "r.xlsx", lang="en", max_rows=5)     # 4 data rows a sheet
    wb = load_workbook(path)
    parts = ["samples", "samples_2", "samples_3"]
    assert [n for n in wb.sheetnames if n.startswith("samples")] == parts
    ids = [row[0] for name in parts for row in wb[name].iter_rows(min_row=2, values_only=True)]
    assert ids == [f"s{i:02d}" for i in range(11)]                 # every row once, in order
    assert all(wb[name].max_row <= 5 and wb[name]["A1"].value == wb["samples"]["A1"].value for name in parts)
    said = [c for row in wb["summary"].iter_rows(values_only=True) for c in row if isinstance(c, str)]
    assert any("samples_2" in c and "11" in c for c in said)
    assert "samples, samples_2, samples_3" in capsys.readouterr().err


def test_a_run_within_the_limit_keeps_one_sheet_and_no_note(tmp_path, capsys):
    data = load_run(_store(tmp_path, 4), "r")
    wb = load_workbook(write_workbook(data, tmp_path / "r.xlsx", lang="en", max_rows=5))
    assert [n for n in wb.sheetnames if n.startswith("samples")] == ["samples"]
    assert wb["samples"].max_row == 5 and "samples_2" not in capsys.readouterr().err
