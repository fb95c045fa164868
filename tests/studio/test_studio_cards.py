"""The studio's scorecard form (issue 30): YAML → form → YAML through the scorecard loader, comments kept."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric.items import CONVERSATION_CHECKS
from rubriceval.studio.card_form import (
    CardHead,
    ItemForm,
    card_form_from_yaml,
    check_kinds,
    item_form_from_tree,
    yaml_with_head,
    yaml_with_item,
    yaml_without_item,
)
from rubriceval.studio.form import load_tree
from rubriceval.studio.scorecards import CardFolder, card_report, load_text

ROOT = Path(__file__).resolve().parents[2]
CARD = (ROOT / "scorecards" / "ecommerce_qa_zh.yaml").read_text(encoding="utf-8")
# The shipped card names its policies (knowledge: ecommerce_policies_zh.md): drafts are read beside it.
SHIPPED = CardFolder.of(ROOT / "scorecards")


def test_every_item_written_back_unchanged_leaves_the_file_as_it_was():
    form = card_form_from_yaml(CARD)
    assert form.head.id == "ecommerce_qa_zh" and form.head.base == 100 and form.head.pass_total == 85
    assert form.head.dimensions.splitlines()[1] == "情绪安抚 |  | 10 | 2"
    text = CARD
    for item in form.items:
        text = yaml_with_item(text, item, item.id)
    assert text == CARD and yaml_with_head(CARD, form.head) == CARD


def test_the_form_shows_each_predicate_with_its_fields():
    items = {i.id: i for i in card_form_from_yaml(CARD).items}
    long_turn = items["long_turn"]
    assert (long_turn.predicate, long_turn.check_type, long_turn.turns) == ("check", "max_length", "assistant")
    assert long_turn.check_fields == "max_chars: 80" and (long_turn.per, long_turn.cap, long_turn.points) == (
        "occurrence", 3, -1)
    soothe = items["soothe"]
    assert soothe.predicate == "question" and soothe.when_question == "用户是否表现出愤怒、担心、不满或失望？"
    assert soothe.when_pattern == ""                   # v4: the judge says whether it applies, not a keyword list
    assert items["promise"].hit_on == "yes" and items["promise"].when_contexts == "yes"
    assert items["handover"].when_tags == "投诉"
    assert any(i.fatal for i in items.values())


def test_an_edited_item_changes_only_its_own_lines_and_the_loader_reads_the_edit():
    item = item_form_from_tree(load_tree(CARD)["items"][0])
    edited = item.model_copy(update={"points": -4, "check_fields": 'phrases: ["您好"]\nmin: 1\nmax: 50'})
    text = yaml_with_item(CARD, edited, "greeting")
    changed = [(a, b) for a, b in zip(CARD.splitlines(), text.splitlines()) if a != b]
    assert len(changed) == 2 and len(text.splitlines()) == len(CARD.splitlines())
    assert "# 电商客服质检评分表" in text
    card = load_text(text, "ecommerce_qa_zh.yaml", SHIPPED)
    greeting = card.items[0]
    assert greeting.points == -4 and greeting.check == {"type": "max_count", "phrases": ["您好"], "min": 1, "max": 50}


def test_add_then_remove_an_item_and_change_the_dimensions():
    new = ItemForm(id="refund_link", name="未给退款链接", dimension="业务准确", predicate="check",
                   check_type="required_link", check_fields='url: "https://example.com/refund"', points=-3,
                   when_intents="refund, return")
    added = load_text(yaml_with_item(CARD, new, None), "c.yaml", SHIPPED)
    refund = added.items[-1]
    assert refund.id == "refund_link" and refund.check["url"] == "https://example.com/refund"
    assert refund.applies_when.intents == ["refund", "return"]
    assert len(added.items) == len(load_text(CARD, "c", SHIPPED).items) + 1
    removed = load_text(yaml_without_item(yaml_with_item(CARD, new, None), "greeting"), "c.yaml", SHIPPED)
    assert [i.id for i in removed.items][:1] == ["closing"] and "refund_link" in [i.id for i in removed.items]
    with pytest.raises(RubricEvalError, match="no item 'nope'"):
        yaml_without_item(CARD, "nope")
    head = card_form_from_yaml(CARD).head
    text = yaml_with_head(CARD, CardHead(**{**head.model_dump(), "base": 90, "pass_total": 80,
                                            "dimensions": head.dimensions + "\n话术 | 话术规范 | 5"}))
    card = load_text(text, "c.yaml", SHIPPED)
    assert (card.base, card.pass_total) == (90, 80) and card.dimension("话术").max_deduction == 5
    assert "  - {id: 情绪安抚, max_deduction: 10, max_bonus: 2}" in text          # kept as written


def test_a_question_item_turned_into_a_rubric_reference_drops_the_question_keys():
    promise = item_form_from_tree(next(e for e in load_tree(CARD)["items"] if e["id"] == "promise"))
    as_rubric = promise.model_copy(update={"predicate": "rubric", "rubric_id": "faithfulness_zh", "min_score": 3})
    card = load_text(yaml_with_item(CARD, as_rubric, "promise"), "c.yaml", SHIPPED)
    item = next(i for i in card.items if i.id == "promise")
    assert item.kind == "rubric" and item.rubric.min_score == 3 and item.question is None
    assert not item.judge_sees_knowledge and item.hit_on is None


def test_a_question_item_keeps_its_examples_and_an_applies_question_cleared_drops_its_own():
    soothe = item_form_from_tree(next(e for e in load_tree(CARD)["items"] if e["id"] == "soothe"))
    kept = load_text(yaml_with_item(CARD, soothe.model_copy(update={"name": "未安抚"}), "soothe"), "c.yaml", SHIPPED)
    item = next(i for i in kept.items if i.id == "soothe")
    assert len(item.examples) == 2 and item.applies_when is not None and len(item.applies_when.examples) == 2
    by_keyword = soothe.model_copy(update={"when_question": "", "when_pattern": "投诉|没用"})
    card = load_text(yaml_with_item(CARD, by_keyword, "soothe"), "c.yaml", SHIPPED)
    item = next(i for i in card.items if i.id == "soothe")
    assert item.applies_when is not None and item.applies_when.question is None and not item.applies_when.examples
    assert len(item.examples) == 2                     # the item's own question keeps its 示例


def test_an_invalid_item_is_written_and_named_by_the_loader_with_line_and_field():
    item = item_form_from_tree(load_tree(CARD)["items"][2])                     # long_turn, per occurrence
    broken = item.model_copy(update={"turns": ""})                             # per occurrence needs a per-turn check
    report = card_report(yaml_with_item(CARD, broken, "long_turn"), "ecommerce_qa_zh.yaml")
    assert report.startswith("error: ecommerce_qa_zh.yaml:") and "[item 3 (id: long_turn)]" in report
    assert "per: occurrence counts failing turns" in report
    zh = card_report(yaml_with_item(CARD, broken, "long_turn"), "ecommerce_qa_zh.yaml", "zh")
    assert zh.startswith("错误：文件 ecommerce_qa_zh.yaml，第 ") and "第 3 项（id: long_turn）" in zh and "逐轮检查" in zh
    with pytest.raises(RubricEvalError, match="line 2 of the check fields"):
        yaml_with_item(CARD, item.model_copy(update={"check_fields": "max_chars: 80\nno colon here"}), "long_turn")


def test_the_check_kinds_come_from_the_check_models():
    kinds = check_kinds()
    assert set(CONVERSATION_CHECKS) <= set(kinds) and "judge" not in kinds and "checklist" not in kinds
    assert kinds["max_length"][0] == "max_chars" and "handover" in kinds["escalate_after"]
