"""Checklist level rules: the condition language, points tables, and the errors/warnings `rubriceval validate` gives
(file, line, field)."""
from pathlib import Path

import pytest

from rubriceval import RubricEvalError, load_rubric, validate_path
from rubriceval.rubric.checklist_lint import unreachable_levels
from rubriceval.rubric.level_rule import (
    LevelRuleError,
    check_levels_rule,
    check_points,
    level_from_points,
    level_from_rule,
    parse_condition,
)
from rubriceval.rubric.schema import ChecklistItem

RULE = {5: "all", 4: "soothe and status and eta", 3: "soothe and (status or eta)", 2: "any", 1: "otherwise"}


def answers(**yes):
    base = {"soothe": False, "status": False, "eta": False, "reason": False}
    return {**base, **yes}


@pytest.mark.parametrize("yes,level", [
    ({"soothe": True, "status": True, "eta": True, "reason": True}, 5),
    ({"soothe": True, "status": True, "eta": True}, 4),
    ({"soothe": True, "eta": True}, 3),
    ({"status": True, "eta": True}, 2),          # no soothing: 3 needs it
    ({}, 1),
])
def test_highest_level_whose_condition_holds(yes, level):
    assert level_from_rule(RULE, answers(**yes))[0] == level


def test_condition_language():
    a = answers(soothe=True, eta=True)
    assert parse_condition("not status and soothe").holds(a)
    assert parse_condition("2 of (soothe, status, eta)").holds(a)
    assert not parse_condition("3 of (soothe, status, eta)").holds(a)
    assert parse_condition("none").holds(answers())
    assert parse_condition("soothe or status and reason").holds(a)   # and binds tighter than or
    assert parse_condition("安抚").names() == {"安抚"}                   # Chinese question ids


@pytest.mark.parametrize("text", ["soothe and", "(soothe", "soothe status", "and", "", "2 of soothe", "soothe $"])
def test_unreadable_conditions_are_errors(text):
    with pytest.raises(LevelRuleError):
        parse_condition(text)


def test_rule_checks_name_the_level():
    problems = dict(check_levels_rule({5: "all", 4: "soothe and statsu", 3: "otherwise", 7: "any"},
                                      ["soothe", "status"]))
    assert "statsu" in problems[4] and "otherwise" in problems[3] and "1–5" in problems[7]
    assert 5 not in problems


def test_points_table():
    points = {5: 0.9, 4: 0.7, 3: 0.5, 2: 0.25}
    assert level_from_points(points, 0.95)[0] == 5
    assert level_from_points(points, 0.69)[0] == 3
    assert level_from_points(points, 0.1)[0] == 1
    assert level_from_points(None, 0.5)[0] == 3 and level_from_points(None, 1.0)[0] == 5   # 1 + 4·share
    assert dict(check_points({5: 0.5, 4: 0.7}))[5].startswith("level 5 needs a larger share")
    assert check_points({1: 0.1})


def test_unreachable_level_is_found():
    item = ChecklistItem(id="c", type="checklist", questions=[{"id": "a", "ask": "a?"}, {"id": "b", "ask": "b?"}],
                         levels={5: "a or b", 4: "a", 2: "b"})
    assert unreachable_levels(item) == [2, 4]


RUBRIC = """id: t
name: 测试
criterion: 先安抚
score_descriptions: {{1: 一, 2: 二, 3: 三, 4: 四, 5: 五}}
judge_mode: checklist
items:
  - id: checklist
    type: checklist
    questions:
      - {{id: soothe, ask: 是否安抚？}}
      - {{id: status, ask: 是否给出状态？}}
      - {{id: unused, ask: 是否礼貌？}}
    levels:
      5: soothe and status
      4: {level4}
      1: otherwise
"""


def write(tmp_path: Path, level4: str) -> Path:
    path = tmp_path / "r.yaml"
    path.write_text(RUBRIC.format(level4=level4), encoding="utf-8")
    return path


def test_unknown_question_id_names_file_line_and_field(tmp_path):
    path = write(tmp_path, "soothe and statsu")
    with pytest.raises(RubricEvalError) as info:
        load_rubric(path)
    err = info.value
    assert err.file == str(path) and err.line == 15 and err.field.endswith("levels.4")
    assert "statsu" in err.message


def test_syntax_error_names_the_level_line(tmp_path):
    _, findings = validate_path(write(tmp_path, "(soothe"))
    assert [(f.severity, f.line) for f in findings] == [("error", 15)]
    assert "ends too early" in findings[0].message


def test_lint_warns_about_unused_questions_and_shadowed_levels(tmp_path):
    rubrics, findings = validate_path(write(tmp_path, "soothe and status and soothe"))
    assert len(rubrics) == 1
    messages = {f.field: f.message for f in findings}
    assert any("unused" in m and "no level condition" in m for m in messages.values())
    assert any(field.endswith("levels.4") and "never be the score" in m for field, m in messages.items())
    assert all(f.severity == "warning" and f.line for f in findings)


def test_checklist_modes_need_a_checklist_and_fitted_weights(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("id: t\nname: t\ncriterion: c\nscore_descriptions: {1: a, 2: b, 3: c, 4: d, 5: e}\n"
                    "judge_mode: checklist\n", encoding="utf-8")
    with pytest.raises(RubricEvalError, match="needs a checklist item"):
        load_rubric(path)
    path.write_text(RUBRIC.format(level4="soothe").replace("judge_mode: checklist", "judge_mode: checklist_fitted"),
                    encoding="utf-8")
    with pytest.raises(RubricEvalError, match="fit-weights"):
        load_rubric(path)


def test_shipped_rubrics_lint_clean_and_keep_checklists():
    rubrics, findings = validate_path("rubrics")
    assert not [f for f in findings if f.severity == "error"]
    with_checklist = {r.id for r in rubrics if r.checklist_items}
    assert {"emotional_soothing", "process_compliance", "policy_compliance"} <= with_checklist
