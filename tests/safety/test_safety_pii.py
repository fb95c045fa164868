"""Personal data: detection measured on the labelled Chinese set, validity rules, consistent placeholders, restore."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rubriceval import Conversation, Sample
from rubriceval.safety.pii import find_pii
from rubriceval.safety.redaction import Redaction, redact_sample, restore

ROWS = [json.loads(line) for line in (Path(__file__).parents[1] / "fixtures/security/pii_zh.jsonl")
        .read_text(encoding="utf-8").splitlines()]
VALID_ID = "11010119900307109X"     # checksum-valid (ISO 7064 MOD 11-2), check character X
VALID_CARD = "4111111111111111"     # Luhn-valid


def _measure(rows: list[dict]) -> tuple[float, float, list[str]]:
    """Span-level recall and precision: a span counts when one of the same kind covers ≥ 80 % of it, and a found span
    counts as right when ≥ 80 % of it lies in a labelled span of its kind."""
    found = missed = wrong = 0
    problems = []
    for row in rows:
        text, predicted = row["text"], find_pii(row["text"])
        gold = [(g["type"], text.index(g["value"]), text.index(g["value"]) + len(g["value"])) for g in row["spans"]]
        for kind, lo, hi in gold:
            if any(p.kind == kind and min(hi, p.end) - max(lo, p.start) >= 0.8 * (hi - lo) for p in predicted):
                found += 1
            else:
                missed += 1
                problems.append(f"missed {kind} {text[lo:hi]!r} in {row['id']}")
        for p in predicted:
            if not any(p.kind == k and min(hi, p.end) - max(lo, p.start) >= 0.8 * (p.end - p.start)
                       for k, lo, hi in gold):
                wrong += 1
                problems.append(f"wrong {p.kind} {p.text!r} in {row['id']}")
    return found / max(1, found + missed), found / max(1, found + wrong), problems


def test_labelled_set_has_every_kind_and_negatives():
    kinds = Counter(s["type"] for row in ROWS for s in row["spans"])
    assert sum(kinds.values()) >= 60 and set(kinds) == {"手机号", "电话", "身份证", "银行卡", "邮箱", "地址"}
    assert sum(1 for row in ROWS if not row["spans"]) >= 30      # order/tracking numbers, hotlines, codes …


@pytest.mark.parametrize("part", ["tune", "heldout"])
def test_recall_and_precision_at_least_095(part):
    recall, precision, problems = _measure([r for r in ROWS if r.get("split", "tune") == part])
    assert recall >= 0.95 and precision >= 0.95, f"{part}: recall {recall:.3f} precision {precision:.3f}: {problems}"


def test_validity_rules_reject_look_alikes():
    assert [s.kind for s in find_pii(f"身份证 {VALID_ID}")] == ["身份证"]
    assert find_pii(f"身份证 {VALID_ID[:-1]}1") == []                 # wrong check character
    assert find_pii(f"身份证 110101{'19991332'}1231") == []            # 13th month
    assert [s.kind for s in find_pii(f"卡号 {VALID_CARD}")] == ["银行卡"]
    assert find_pii(f"卡号 {VALID_CARD[:-1]}2") == []                 # Luhn fails
    assert find_pii(f"订单号 {VALID_CARD}") == []                     # an identifier, not a card
    assert find_pii("客服热线 400-820-8820 或 95588") == []
    assert find_pii("卡6222 0212 3456 7890 123") == []                # no phone inside a digit-group run


def test_spans_quote_full_width_originals():
    [span] = find_pii("电话１３８００１３８０００谢谢")
    assert span.kind == "手机号" and span.text == "１３８００１３８０００"


def test_placeholders_are_consistent_across_fields_and_spellings():
    sample = Sample(id="s", question="我的手机 138 0013 8000，邮箱 Zhang@QQ.com",
                    answer="已记录 +86 13800138000，另一个号码 13900001111 也已保存；邮件发到 zhang@qq.com",
                    contexts=[f"客户身份证 {VALID_ID}，住北京市海淀区中关村大街27号"], ground_truth="无")
    masked, redaction = redact_sample(sample)
    assert masked.question == "我的手机 [手机号1]，邮箱 [邮箱1]"
    assert masked.answer == "已记录 [手机号1]，另一个号码 [手机号2] 也已保存；邮件发到 [邮箱1]"
    assert masked.contexts == ["客户身份证 [身份证1]，住[地址1]"]
    assert redaction.mapping["[手机号1]"] == "138 0013 8000" and redaction.mapping["[身份证1]"] == VALID_ID
    assert restore(masked.contexts[0], redaction.mapping) == sample.contexts[0]
    assert masked.id == sample.id and masked.metadata == sample.metadata


def test_conversation_turns_share_the_samples_placeholders():
    conversation = Conversation.model_validate({"id": "c", "reference_outcome": "回电 13800138000", "turns": [
        {"role": "user", "content": "我手机是138-0013-8000"},
        {"role": "assistant", "content": "好的，会打 13800138000", "contexts": ["档案：13800138000"],
         "tool_calls": [{"name": "lookup", "arguments": {"phone": "13800138000", "n": 1}}]}]})
    masked, redaction = redact_sample(Sample(id="c", question="来电", conversation=conversation))
    turns = masked.conversation.turns
    assert turns[0].content == "我手机是[手机号1]" and turns[1].content == "好的，会打 [手机号1]"
    assert turns[1].contexts == ["档案：[手机号1]"] and turns[1].tool_calls[0].arguments == {"phone": "[手机号1]", "n": 1}
    assert masked.conversation.reference_outcome == "回电 [手机号1]" and list(redaction.mapping) == ["[手机号1]"]


def test_masking_is_idempotent_and_restore_leaves_unknown_placeholders():
    redaction = Redaction()
    once = redaction.mask("联系 13800138000")
    assert redaction.mask(once) == once
    assert restore("见 [手机号1] 与 [手机号9]", {"[手机号1]": "13800138000"}) == "见 13800138000 与 [手机号9]"
    assert Redaction.model_validate_json(redaction.model_dump_json()).mapping == redaction.mapping


def test_judge_view_and_recorded_mapping():
    from rubriceval import Verdict
    from rubriceval.safety.redaction import judge_view, record_redactions, restore_for_expert

    sample = Sample(id="s", question="回电 13800138000", answer="好的，会打 13800138000")
    assert judge_view(sample, False)[0] is sample
    masked, redaction = judge_view(sample, True)
    assert masked.answer == "好的，会打 [手机号1]"
    verdict = record_redactions(Verdict(sample_id="s", scorer="r", score=4.0, feedback="回答复述了 [手机号1]"), redaction)
    assert verdict.details["redactions"] == {"[手机号1]": "13800138000"}
    assert restore_for_expert(verdict.feedback, verdict.details) == "回答复述了 13800138000"
    assert record_redactions(verdict, judge_view(Sample(id="x", question="无"), True)[1]) is verdict
