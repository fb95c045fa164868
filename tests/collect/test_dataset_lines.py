"""JSONL rows end at \\n only: text pasted from web pages and chat apps carries U+2028/U+2029/U+0085, which
str.splitlines() would treat as line ends inside a valid row."""
import json

import pytest

from rubriceval import DatasetError, Sample, read_dataset, write_dataset

SEPARATORS = ["\u2028", "\u2029", "\u0085", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c"]


def _samples():
    return [Sample(id=f"s{i}", question=f"订单{sep}还没到？", answer=f"抱歉{sep}我们马上查。",
                   contexts=[f"物流{sep}延迟", "第二段"], ground_truth="查物流", metadata={"note": f"a{sep}b"})
            for i, sep in enumerate(SEPARATORS)]


def test_write_dataset_output_reads_back_unchanged(tmp_path):
    samples = _samples()
    path = write_dataset(samples, tmp_path / "out.jsonl")
    assert "\u2028" in path.read_text(encoding="utf-8")       # written raw (ensure_ascii=False), not escaped
    assert read_dataset(path) == samples


def test_crlf_line_ends_and_blank_lines(tmp_path):
    rows = [{"id": "a", "question": "你好\u2028吗"}, {"id": "b", "question": "第二行"}]
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\r\n\r\n").encode())
    assert [s.question for s in read_dataset(path)] == ["你好\u2028吗", "第二行"]


def test_a_bad_line_is_still_named_by_its_newline_count(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = json.dumps({"id": "a", "question": "一\u2028二\u0085三"}, ensure_ascii=False)
    path.write_text(f"{good}\n{good.replace('a', 'b')}\n{{broken\n", encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_dataset(path)
    assert err.value.line == 3


def test_collect_resume_reads_rows_with_unicode_separators(tmp_path):
    from rubriceval.collect.resumable import read_partial

    path = tmp_path / "partial.jsonl"
    rows = [{"id": "q1", "answer": "甲\u2028乙"}, {"id": "q2", "answer": "丙\u0085丁"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    got, order = read_partial(path, lambda d: type("Row", (), d))
    assert order == ["q1", "q2"] and got["q2"].answer == "丙\u0085丁"
