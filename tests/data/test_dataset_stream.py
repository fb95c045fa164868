"""Datasets are read as a stream: JSONL/CSV row by row, Excel in openpyxl's read-only mode. Memory does not grow
with the file, and a malformed line is reported (file:line [field]) when it is reached."""
from __future__ import annotations

import json
import tracemalloc

import pandas as pd
import pytest

from rubriceval import DatasetError, Sample, read_dataset, write_dataset
from rubriceval.data.io import iter_samples
from rubriceval.data.stream import iter_records

ROW = {"question": "我的订单三天了还没发货，怎么回事？", "answer": "非常抱歉，仓库爆仓，预计明天发出。" * 8,
       "contexts": ["发货时效：下单后 48 小时内发货。" * 4, "爆仓时可延迟 1-2 天。", "补偿：延迟发货赠 5 元券。"]}


def _big_jsonl(path, n, bad_at=None):
    with path.open("w", encoding="utf-8") as fh:
        for i in range(1, n + 1):
            if i == bad_at:
                fh.write('{"id": "broken", "question": \n')
            else:
                fh.write(json.dumps({"id": f"r{i}", **ROW}, ensure_ascii=False) + "\n")
    return path


def test_a_malformed_line_deep_in_a_file_is_reported_in_flat_memory(tmp_path):
    n = 20_000
    path = _big_jsonl(tmp_path / "big.jsonl", n + 1, bad_at=n + 1)
    assert path.stat().st_size > 10_000_000
    tracemalloc.start()
    try:
        with pytest.raises(DatasetError) as err:
            for _ in iter_samples(path, check_duplicates=False):
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (err.value.file, err.value.line) == (str(path), n + 1) and "invalid JSON" in err.value.message
    assert peak < 2_000_000, f"peak {peak} bytes while reading a {path.stat().st_size}-byte file"


def test_samples_come_before_the_rest_of_the_file_is_read(tmp_path):
    path = _big_jsonl(tmp_path / "d.jsonl", 3, bad_at=3)
    rows = iter_samples(path)
    assert next(rows).id == "r1" and next(rows).id == "r2"
    with pytest.raises(DatasetError) as err:
        next(rows)
    assert err.value.line == 3


def test_duplicate_ids_are_refused_unless_the_caller_checks_them(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text("".join(json.dumps({"id": i, "question": "q"}) + "\n" for i in ("a", "b", "a")), encoding="utf-8")
    with pytest.raises(DatasetError, match="duplicate id 'a' \\(first at line 1\\)") as err:
        read_dataset(path)
    assert err.value.line == 3
    assert [s.id for s in iter_samples(path, check_duplicates=False)] == ["a", "b", "a"]


def _samples():
    return [Sample(id=f"s{i}", question=f"=问题{i}", answer=f"回答 {i}", contexts=[f"段落{i}", "第二段"],
                   ground_truth="+标准", tags=["物流", "投诉"], intent="物流查询", metadata={"n": i})
            for i in range(1, 6)]


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_tables_stream_back_what_write_dataset_wrote(tmp_path, suffix, monkeypatch):
    path = write_dataset(_samples(), tmp_path / f"d{suffix}")
    monkeypatch.setattr(pd, "read_csv", None)           # the stream does not go through pandas
    monkeypatch.setattr(pd, "read_excel", None)
    assert read_dataset(path) == _samples()


def test_excel_rows_are_numbered_as_excel_shows_them(tmp_path):
    frame = pd.DataFrame({"question": ["q1", "", "q3"], "answer": ["a1", "", "a3"], "id": [1, None, 3]})
    path = tmp_path / "gap.xlsx"
    frame.to_excel(path, index=False)
    assert [(line, rec["id"]) for line, rec in iter_records(path)] == [(2, "1"), (4, "3")]   # the blank row 3 skipped


def test_a_csv_row_with_more_cells_than_the_header_names_its_line(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("question,answer\nq1,a1\nq2,a2,extra\n", encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_dataset(path)
    assert err.value.line == 3 and "3 cells" in err.value.message


def test_bad_utf8_in_jsonl_names_line_and_byte(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"question": "ok"}\n{"question": "caf\xe9"}\n')
    with pytest.raises(DatasetError) as err:
        read_dataset(path)
    assert err.value.line == 2 and "byte 36" in err.value.message    # offset in the file, as before
