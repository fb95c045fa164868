"""Validation messages in the page's language (issue 30.2): English exactly as `rubriceval validate` prints them,
Chinese said by their frame and kind, unknown messages left in English."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import MESSAGES, t
from rubriceval.studio.messages import Problem, said_error, say_field, say_message, say_problem
from rubriceval.studio.scorecards import load_text
from rubriceval.studio.workbench import check_draft
from rubriceval.validate.lint import validate_path

ROOT = Path(__file__).resolve().parents[2]
CARD = (ROOT / "scorecards" / "ecommerce_qa_zh.yaml").read_text(encoding="utf-8")
RUBRIC = (ROOT / "rubrics" / "closing.yaml").read_text(encoding="utf-8")


def card_error(old: str, new: str) -> RubricEvalError:
    with pytest.raises(RubricEvalError) as caught:
        load_text(CARD.replace(old, new, 1), "ecommerce_qa_zh.yaml")
    return caught.value


def test_english_is_exactly_what_validate_prints(tmp_path):
    bad = tmp_path / "closing.yaml"
    bad.write_text(RUBRIC.replace("threshold: 4", "threshold: 9") + "\nfoo: 1\n", encoding="utf-8")
    _, findings = validate_path(bad)
    assert findings
    assert [say_problem(Problem.of(f), "en") for f in findings] == [f.format() for f in findings]
    error = card_error("points: -3", "points: -3.5")
    assert say_problem(Problem.of(error), "en") == "error: " + error.format()


def test_a_scorecard_error_in_chinese_names_file_line_field_message_and_hint():
    error = card_error("points: -3", "points: -3.5")
    said = say_problem(Problem.of(error), "zh")
    assert said == (f"错误：文件 ecommerce_qa_zh.yaml，第 {error.line} 行，字段 第 1 项（id: greeting）.points：应为整数"
                    "（提示：分值为整数：扣分如 -3，加分如 2）")
    dim = say_problem(Problem.of(card_error("dimension: 服务规范", "dimension: 无")), "zh")
    assert "未知维度「无」" in dim and "本评分卡的维度：服务规范" in dim
    nested = say_problem(Problem.of(card_error("max_chars: 80, ", "")), "zh")
    assert "检查的 max_chars：缺少必填字段" in nested                   # a message inside a message, said too


def test_a_rubric_draft_is_reported_in_the_page_language():
    draft = RUBRIC.replace("threshold: 4", "threshold: 9")
    checked = check_draft(draft, "closing.yaml")
    assert checked.report("en") == "\n".join(f.format() for f in checked.findings)
    assert checked.report("zh").startswith("错误：文件 closing.yaml，第 ") and "字段 threshold：应小于或等于 5" in checked.report("zh")


def test_unknown_messages_stay_english_and_fields_keep_their_keys():
    assert say_message("something the loaders never say", "zh") == "something the loaders never say"
    assert say_message("Input should be a valid URL", "zh") == "Input should be a valid URL"     # not {choices}
    assert say_field("item 2 (id: a.b).check.phrases", "zh") == "第 2 项（id: a.b）.check.phrases"
    assert say_field("item 2 (id: a.b).check", "en") == "item 2 (id: a.b).check"
    error = said_error(RubricEvalError("no such thing", field="item 1", hint="this field is required"), "zh")
    assert (error.message, error.field, error.hint) == ("no such thing", "第 1 项", "此字段为必填")


def test_every_message_kind_reads_back_from_its_english_text():
    """The English side of each kind is the loader's wording with {params}: filled in, it is recognised as that kind
    and said in Chinese with the same parameters."""
    for key, text in MESSAGES.items():
        if not key.startswith(("vmsg_", "vhint_")):
            continue
        names = re.findall(r"\{(\w+)\}", text["en"])
        shapes = {"inner": "Field required", "choices": "'a' or 'b'", "n": "7", "got": "0"}
        params = {n: shapes.get(n, f"«{n}»") for n in names}
        english = t(key, "en", **params)
        expected = t(key, "zh", **{**params, **({"inner": t("vmsg_required", "zh")} if "inner" in names else {})})
        assert say_message(english, "zh") == expected, key
        assert say_message(english, "en") == english


def test_the_studios_own_errors_are_said_in_chinese_too():
    from rubriceval.studio.workbench import pick_samples

    with pytest.raises(RubricEvalError) as caught:
        pick_samples([], None, "first", 0)
    said = said_error(caught.value, "zh")
    assert (said.message, said.field) == ("至少选一个样本", "n")
    assert said_error(caught.value, "en").message == "pick at least one sample"
