"""The rubric files' `measured:` block (issue 24): machine-readable, checked by validate, left out of the hash, read
by reports."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval import load_rubric, validate_path
from rubriceval.common.errors import RubricEvalError
from rubriceval.report.measured import measured_section

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = """id: m
name: M
criterion: c
score_descriptions: {1: a, 2: b, 3: c, 4: d, 5: e}
"""
ROW = ("  - {judge: local, mode: %s, kappa: %s, ci: [%s, %s], n: 22, dataset: %s, date: 2026-11-30}\n")


def write(tmp_path: Path, *rows: str, judge_mode: str = "") -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(RUBRIC + (f"judge_mode: {judge_mode}\n" if judge_mode else "") + "measured:\n" + "".join(rows),
                    encoding="utf-8")
    return path


def test_measurements_do_not_change_the_version(tmp_path):
    (tmp_path / "labels.jsonl").write_text("{}\n")
    bare = tmp_path / "bare.yaml"
    bare.write_text(RUBRIC, encoding="utf-8")
    measured = load_rubric(write(tmp_path, ROW % ("holistic", 0.5, 0.2, 0.7, "labels.jsonl")))
    assert measured.measured[0].kappa == 0.5
    assert measured.version_tag == load_rubric(bare).version_tag


def test_a_figure_outside_its_interval_names_file_line_and_field(tmp_path):
    path = write(tmp_path, ROW % ("holistic", 0.9, 0.2, 0.7, "labels.jsonl"))
    with pytest.raises(RubricEvalError) as raised:
        load_rubric(path)
    err = raised.value
    assert err.file == str(path) and err.line == 6 and "measured" in (err.field or "")
    assert "outside its interval" in err.message


def test_validate_warns_on_a_missing_data_set_and_an_unmeasured_declared_mode(tmp_path):
    write(tmp_path, ROW % ("checklist", 0.4, 0.2, 0.6, "nowhere.jsonl"), judge_mode="")
    _, findings = validate_path(tmp_path)
    messages = [f.format() for f in findings]
    assert any("nowhere.jsonl" in m and "[measured.0.dataset]" in m for m in messages), messages
    assert any("judge_mode 'holistic' was never measured on judge 'local'" in m for m in messages), messages
    (tmp_path / "nowhere.jsonl").write_text("{}\n")
    write(tmp_path, ROW % ("holistic+per_level", 0.4, 0.2, 0.6, "nowhere.jsonl"))
    assert validate_path(tmp_path)[1] == []


def test_shipped_rubrics_carry_their_measurements_and_ship_a_measured_mode():
    rubrics, findings = validate_path(ROOT / "rubrics")
    assert [f.format() for f in findings if "measured" in (f.field or "")] == []
    by_id = {r.id: r for r in rubrics}
    soothing = by_id["emotional_soothing"]
    best = max(soothing.measured, key=lambda m: m.kappa)
    assert (best.mode, best.kappa, best.ci, best.n) == ("checklist_fitted", 0.83, (0.70, 0.91), 22)
    assert soothing.judge_mode == "checklist_fitted"
    assert {m.base_mode for m in by_id["process_compliance"].measured} >= {"holistic", "checklist_fitted"}
    for path in (ROOT / "rubrics").glob("*.yaml"):      # the header is prose for a QA lead, not benchmark notes
        lines = path.read_text(encoding="utf-8").splitlines()
        header = lines[:next(i for i, line in enumerate(lines) if line.startswith("id:"))]
        assert not any("κ" in line for line in header), path.name


def test_the_report_section_reads_the_run_judge_and_mode():
    definition = {"name": "情绪安抚", "judge_mode": "checklist_fitted", "measured": [
        {"judge": "local", "mode": "checklist_fitted", "kappa": 0.83, "ci": [0.7, 0.91], "n": 22,
         "dataset": "d.jsonl", "date": "2026-11-30"},
        {"judge": "local", "mode": "checklist_fitted", "kappa": 0.77, "ci": [0.36, 0.9], "n": 11,
         "dataset": "d.jsonl", "date": "2026-11-30"}]}
    scorers = [{"scorer": "es", "kind": "rubric", "definition": definition},
               {"scorer": "plain", "kind": "rubric", "definition": {"name": "plain"}}]
    section = measured_section(scorers, {"model": "local"}, "en")
    assert section[1] == "- 情绪安抚: checklist_fitted on local: κ 0.83 [0.70, 0.91], n=22 (d.jsonl, 2026-11-30)"
    assert len(section) == 3          # heading, the one measured rubric, blank line
    other = measured_section(scorers, {"model": "qwen-max"}, "zh")
    assert "未在本次的裁判与模式（qwen-max / checklist_fitted）上实测" in other[1]
    assert measured_section(scorers[1:], {"model": "local"}, "en") == []
