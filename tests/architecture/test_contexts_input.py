"""A plain string where contexts (a list of passages) belong: refused in JSON/JSONL with file:line [field]; read as
one context from a CSV/Excel cell (which cannot hold a list), said once per file with the count of such rows."""
import json

import pandas as pd
import pytest

from rubriceval import DatasetError, read_dataset


def jsonl(tmp_path, rows, name="data.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("column", ["contexts", "retrieved_contexts", "reference_contexts"])
def test_a_string_in_jsonl_is_refused_naming_file_line_and_field(tmp_path, column):
    path = jsonl(tmp_path, [{"question": "q", "answer": "a", column: ["ok"]},
                            {"question": "q", "answer": "a", column: "会员包邮。运费 10 元。"}])
    with pytest.raises(DatasetError) as exc:
        read_dataset(path)
    assert exc.value.file == str(path) and exc.value.line == 2 and exc.value.field == column
    assert "must be a list of strings" in exc.value.format()


def test_jsonl_lists_blank_strings_and_json_text_still_read(tmp_path, capsys):
    path = jsonl(tmp_path, [{"question": "q", "answer": "a", "contexts": ["p1", "p2"]},
                            {"question": "q", "answer": "a", "contexts": ""},
                            {"question": "q", "answer": "a", "contexts": '["p3"]'}])
    assert [s.contexts for s in read_dataset(path)] == [["p1", "p2"], [], ["p3"]]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_a_plain_text_cell_is_one_context_and_noted_once_with_the_count(tmp_path, capsys, suffix):
    frame = pd.DataFrame({"question": ["q1", "q2", "q3", "q4"], "answer": ["a"] * 4,
                          "contexts": ['["p1", "p2"]', "会员包邮。", "", "运费 10 元。"]})
    path = tmp_path / f"data{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_excel(path, index=False)
    samples = read_dataset(path)
    assert [s.contexts for s in samples] == [["p1", "p2"], ["会员包邮。"], [], ["运费 10 元。"]]
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "2 row(s) give contexts as plain text (lines 3, 5)" in notes[0]
    assert str(path) in notes[0] and "JSON list" in notes[0]
