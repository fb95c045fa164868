"""Rubric YAML → Rubric, and errors that name file, line and field."""
import json
import textwrap

import pytest

from rubriceval import Rubric, RubricError, load_rubric, load_rubrics, validate_path

GOOD = textwrap.dedent("""\
    id: demo
    name: 演示
    criterion: 回答是否有帮助
    score_descriptions:
      1: 完全没有帮助
      2: 帮助很少
      3: 部分有帮助
      4: 大部分有帮助
      5: 完全解决问题
    """)


def write(tmp_path, text, name="r.yaml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_shipped_rubrics_are_valid():
    rubrics, findings = validate_path("rubrics")
    assert not [f for f in findings if f.severity == "error"], [f.format() for f in findings]
    ids = {r.id for r in rubrics}
    assert {"process_compliance", "emotional_soothing", "required_link", "resolution_completeness",
            "policy_compliance", "helpfulness_en"} <= ids
    assert any(r.language == "en" for r in rubrics)


def test_minimal_rubric_gets_a_judge_item(tmp_path):
    r = load_rubric(write(tmp_path, GOOD))
    assert [i.type for i in r.items] == ["judge"]
    assert r.version_tag.startswith("v1@")


def test_missing_level_names_line_and_field(tmp_path):
    bad = GOOD.replace("  4: 大部分有帮助\n", "")
    with pytest.raises(RubricError) as exc:
        load_rubric(write(tmp_path, bad))
    e = exc.value
    assert e.field == "score_descriptions" and e.line == 4 and "missing level(s) [4]" in e.message
    assert str(tmp_path / "r.yaml") in e.format()


def test_duplicate_level_is_an_error_with_both_lines(tmp_path):
    bad = GOOD.replace("  5: 完全解决问题\n", "  5: 完全解决问题\n  5: 又一个五分\n")
    with pytest.raises(RubricError) as exc:
        load_rubric(write(tmp_path, bad))
    assert exc.value.line == 10 and "first defined on line 9" in exc.value.message


def test_identical_anchors_are_an_error(tmp_path):
    bad = GOOD.replace("帮助很少", "完全没有帮助")
    with pytest.raises(RubricError, match="repeat the description"):
        load_rubric(write(tmp_path, bad))


def test_unknown_field_has_hint(tmp_path):
    with pytest.raises(RubricError) as exc:
        load_rubric(write(tmp_path, GOOD + "threshhold: 4\n"))
    assert exc.value.field == "threshhold" and exc.value.line == 10 and "rubriceval schema" in exc.value.hint


def test_unknown_check_type_names_item_line(tmp_path):
    text = GOOD + "items:\n  - id: judge\n    type: judge\n  - id: x\n    type: spellcheck\n"
    with pytest.raises(RubricError) as exc:
        load_rubric(write(tmp_path, text))
    assert exc.value.field == "item 2 (id: x)" and exc.value.line == 13      # counted from 1, as editors do
    assert "must_mention" in exc.value.hint


def test_invalid_regex_is_reported(tmp_path):
    text = GOOD + "items:\n  - id: judge\n    type: judge\n  - id: x\n    type: regex\n    pattern: '([a-z'\n"
    with pytest.raises(RubricError) as exc:
        load_rubric(write(tmp_path, text))
    assert "invalid regex" in exc.value.message and exc.value.line == 15


def test_malformed_yaml(tmp_path):
    with pytest.raises(RubricError) as exc:
        load_rubric(write(tmp_path, "id: x\nname: [unclosed\ncriterion: y\n"))
    assert exc.value.line is not None and "malformed YAML" in exc.value.message


def test_checks_only_rubric_needs_explicit_rule(tmp_path):
    text = GOOD + "items:\n  - id: len\n    type: max_length\n    max_chars: 10\n"
    with pytest.raises(RubricError, match="judge_capped"):
        load_rubric(write(tmp_path, text))
    r = load_rubric(write(tmp_path, text + "combine:\n  rule: min\n"))
    assert not r.judge_items


def test_lint_flags_unfillable_placeholder_and_near_duplicate_levels(tmp_path):
    text = (GOOD.replace("回答是否有帮助", "回答是否提到 {{ product_name }}")
            .replace("3: 部分有帮助", "3: 回答大部分有帮助，只缺少少量细节。")
            .replace("4: 大部分有帮助", "4: 回答大部分有帮助，只缺少少量细节"))
    write(tmp_path, text)
    _, findings = validate_path(tmp_path)
    messages = [f.format() for f in findings]
    assert any("product_name" in m and "error" in m for m in messages)
    assert any("levels 3 and 4" in m for m in messages)


def test_duplicate_rubric_ids_across_files(tmp_path):
    write(tmp_path, GOOD, "a.yaml")
    write(tmp_path, GOOD, "b.yaml")
    with pytest.raises(RubricError, match="also used by"):
        load_rubrics(tmp_path)


def test_json_schema_export_covers_items():
    schema = json.dumps(Rubric.model_json_schema())
    for name in ("must_mention", "required_link", "steps_in_order", "score_descriptions", "applies_to"):
        assert name in schema


def test_content_hash_changes_with_edit(tmp_path):
    a = load_rubric(write(tmp_path, GOOD))
    b = load_rubric(write(tmp_path, GOOD.replace("完全解决问题", "彻底解决问题")))
    assert a.version_tag != b.version_tag
