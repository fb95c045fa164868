"""Bad input → one clear line naming file/line/field, exit code 2, no traceback."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rubriceval.cli import main

RUBRIC = Path("rubrics/emotional_soothing.yaml").read_text(encoding="utf-8")


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def rubric_dir(tmp_path):
    d = tmp_path / "rubrics"
    d.mkdir()
    return d


def dataset(tmp_path, lines, name="data.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("mutate,expect", [
    (lambda t: t.replace("criterion: |", "criterion: : |"), ":"),                       # malformed YAML
    (lambda t: t.replace("  3: 有安抚", "  9: 有安抚"), "score_descriptions"),          # missing level 3
    (lambda t: t.replace("type: steps_in_order", "type: sentiment"), "(id: soothe_first)"),  # unknown check type
    (lambda t: t.replace('steps: ["抱歉', 'bad: 1\n    steps: ["抱歉'), "(id: soothe_first).bad"),  # unknown field
])
def test_bad_rubric_via_run(capsys, tmp_path, rubric_dir, mutate, expect):
    (rubric_dir / "r.yaml").write_text(mutate(RUBRIC), encoding="utf-8")
    code, _, err = run_cli(capsys, "run", "datasets/demo_cs_zh.jsonl", "--rubrics", str(rubric_dir), "--dry-run")
    line = one_error_line(err)
    assert code == 2 and "r.yaml:" in line and expect in line


def test_invalid_regex_in_rubric(capsys, tmp_path, rubric_dir):
    text = RUBRIC.replace('combine:', '  - id: rx\n    type: regex\n    pattern: "(退款"\ncombine:')
    (rubric_dir / "r.yaml").write_text(text, encoding="utf-8")
    code, out, _ = run_cli(capsys, "validate", str(rubric_dir))
    assert code == 2 and "invalid regex" in out and "0 rubric(s) valid, 1 error(s)" in out   # not a rubric: exit 2
    code, _, err = run_cli(capsys, "run", "datasets/demo_cs_zh.jsonl", "--rubrics", str(rubric_dir), "--dry-run")
    line = one_error_line(err)
    assert "(id: rx).pattern" in line and "invalid regex" in line and "r.yaml:" in line


def test_missing_column(capsys, tmp_path):
    p = dataset(tmp_path, [{"question": "a", "answer": "b"}, {"answer": "c"}])
    code, _, err = run_cli(capsys, "run", str(p), "--rubrics", "rubrics", "--dry-run")
    line = one_error_line(err)
    assert code == 2 and "data.jsonl:2 [question]" in line and "missing required field" in line


def test_contexts_not_a_list(capsys, tmp_path):
    p = dataset(tmp_path, [{"question": "a", "answer": "b", "contexts": 5}])
    code, _, err = run_cli(capsys, "run", str(p), "--rubrics", "rubrics", "--dry-run")
    line = one_error_line(err)
    assert "data.jsonl:1 [contexts]" in line


def test_non_utf8_file(capsys, tmp_path):
    p = tmp_path / "gbk.jsonl"
    p.write_bytes(json.dumps({"question": "报销"}, ensure_ascii=False).encode("gbk") + b"\n")
    code, _, err = run_cli(capsys, "run", str(p), "--rubrics", "rubrics", "--dry-run")
    line = one_error_line(err)
    assert "gbk.jsonl:1" in line and "UTF-8" in line


def test_non_utf8_csv(capsys, tmp_path):
    p = tmp_path / "gbk.csv"
    p.write_bytes("question,answer\n报销,找财务\n".encode("gbk"))
    code, _, err = run_cli(capsys, "run", str(p), "--rubrics", "rubrics", "--dry-run")
    assert "gbk.csv" in one_error_line(err) and "UTF-8" in err


def test_empty_dataset(capsys, tmp_path):
    p = tmp_path / "empty.jsonl"
    p.write_text("", encoding="utf-8")
    code, _, err = run_cli(capsys, "run", str(p), "--rubrics", "rubrics", "--dry-run")
    assert code == 2 and "empty.jsonl" in one_error_line(err) and "no rows" in err


def test_invalid_json_line(capsys, tmp_path):
    p = tmp_path / "broken.jsonl"
    p.write_text('{"question": "a"}\n{"question": "b",\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "run", str(p), "--rubrics", "rubrics", "--dry-run")
    assert "broken.jsonl:2" in one_error_line(err)


def test_ten_megabyte_answer_is_planned_and_scored_unscored_not_crashed(capsys, tmp_path):
    big = "退款" * (5 * 1024 * 1024)
    p = dataset(tmp_path, [{"id": "big", "question": "订单延迟了怎么办？", "answer": big, "tags": ["订单延迟"]}])
    code, out, err = run_cli(capsys, "run", str(p), "--rubrics", "rubrics/emotional_soothing.yaml", "--dry-run")
    assert code == 0 and "Traceback" not in err


async def test_ten_megabyte_answer_is_unscored_with_reason():
    from rubriceval import Sample, load_rubric
    from rubriceval.scoring.rubric_scorer import score_rubric
    from rubriceval.testing.scripted_judge import ScriptedJudge

    judge = ScriptedJudge(['{"feedback": "x", "score": 3}'])
    sample = Sample(id="big", question="订单延迟了怎么办？", answer="退款" * (5 * 1024 * 1024))
    v = await score_rubric(load_rubric("rubrics/emotional_soothing.yaml"), sample, judge)
    assert v.score is None and v.unscored_kind == "input_too_long" and judge.requests == []
    assert any(e.item == "follow_up" and e.passed for e in v.evidence)   # checks still ran


def test_cli_subprocess_prints_no_traceback(tmp_path):
    bad = tmp_path / "r.yaml"
    bad.write_text("id: x\nname: y\ncriterion: z\nscore_descriptions: {1: a}\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "rubriceval.cli", "run", "datasets/demo_cs_zh.jsonl",
                           "--rubrics", str(bad), "--dry-run"], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "r.yaml:4 [score_descriptions]" in proc.stderr
