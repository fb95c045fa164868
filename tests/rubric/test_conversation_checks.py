"""Cross-turn checks, each with its evidence: pass and fail, the turn number and the quoted span (or what is
missing); per-turn forms of the single-turn checks; scope lint; applicability by sample kind."""
from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from rubriceval import Conversation, Rubric, Sample
from rubriceval.checks import run_check
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.i18n import evidence_text
from rubriceval.rubric.applies import applies
from rubriceval.rubric.schema import Item
from rubriceval.validate.lint import lint_rubric


def en(evidence) -> str:
    """The evidence as an English reader sees it (details are written in the sample's language)."""
    return evidence_text(evidence, "en")


LEVELS = {1: "差", 2: "较差", 3: "一般", 4: "较好", 5: "很好"}


def chat(*turns: tuple[str, str], cid: str = "c1") -> Sample:
    return conversation_sample(Conversation(id=cid, turns=[{"role": r, "content": c} for r, c in turns]))


def item(**fields):
    return TypeAdapter(Item).validate_python({"id": "x", **fields})


IDENTITY = dict(type="before", first="验证通过|身份已核实", then="订单号|物流单号|收货地址")
VERIFIED_FIRST = chat(("user", "我要退款"), ("assistant", "请提供手机号后四位。"), ("user", "1234"),
                      ("assistant", "验证通过。您的订单号 A100 已申请退款。"))
REVEALED_FIRST = chat(("user", "我要退款"), ("assistant", "您的收货地址是北京市朝阳区，请问要退哪件？"), ("user", "衣服"),
                      ("assistant", "好的，验证通过后为您处理。"))


def test_before_passes_when_a_precedes_b_in_the_same_turn():
    ev = run_check(item(**IDENTITY), VERIFIED_FIRST)
    assert ev.passed is True and ev.turn == 4 and ev.span == "验证通过"


def test_before_fails_at_the_turn_that_reveals_b_first():
    ev = run_check(item(**IDENTITY), REVEALED_FIRST)
    assert ev.passed is False and ev.turn == 2 and ev.span == "收货地址"
    assert ev.missing == ["验证通过|身份已核实"] and "first appears in turn 4" in en(ev)


def test_before_passes_when_b_never_occurs_and_fails_when_a_never_occurs():
    never_b = chat(("user", "你好"), ("assistant", "您好，请问有什么可以帮您？"))
    assert run_check(item(**IDENTITY), never_b).passed is True
    never_a = chat(("user", "查订单"), ("assistant", "您的物流单号是 SF123。"))
    ev = run_check(item(**IDENTITY), never_a)
    assert ev.passed is False and ev.turn == 2 and ev.span == "物流单号" and "never appears" in en(ev)


def test_before_b_said_earlier_in_the_same_turn_fails():
    ev = run_check(item(**IDENTITY), chat(("user", "退款"), ("assistant", "订单号 A100，验证通过。")))
    assert ev.passed is False and ev.turn == 2 and ev.span == "订单号"


APOLOGY = dict(type="max_count", phrases=["抱歉|对不起", "不好意思"], max=1)


def test_max_count_passes_with_one_apology():
    ev = run_check(item(**APOLOGY), chat(("user", "太慢了"), ("assistant", "非常抱歉让您久等。"), ("user", "好吧"),
                                         ("assistant", "已为您催促。")))
    assert ev.passed is True and ev.turn == 2 and ev.span == "抱歉"


def test_max_count_fails_at_the_first_turn_over_the_limit():
    convo = chat(("user", "太慢了"), ("assistant", "非常抱歉。"), ("user", "然后呢"), ("assistant", "不好意思，正在查。"),
                 ("user", "快点"), ("assistant", "对不起，马上。"))
    ev = run_check(item(**APOLOGY), convo)
    assert ev.passed is False and ev.turn == 4 and ev.span == "不好意思"
    assert "turns 2, 4, 6" in en(ev)


def test_max_count_min_reports_what_is_missing():
    ev = run_check(item(type="max_count", phrases=["退款"], min=1, max=5), chat(("user", "a"), ("assistant", "b")))
    assert ev.passed is False and ev.missing == ["退款"]
    with pytest.raises(ValidationError, match="min"):
        item(type="max_count", phrases=["x"], min=3, max=1)


ESCALATE = dict(type="escalate_after", failures=2, bot_failure="无法|不清楚", user_failure="还是不行|没用",
                handover="转人工|人工客服")


def test_escalate_after_two_failures_then_handover_passes():
    convo = chat(("user", "快递丢了"), ("assistant", "请耐心等待。"), ("user", "还是不行"), ("assistant", "请再等等。"),
                 ("user", "没用！"), ("assistant", "马上为您转人工客服。"))
    ev = run_check(item(**ESCALATE), convo)
    assert ev.passed is True and ev.turn == 6 and ev.span == "转人工"
    assert "user at turn 3: “还是不行”" in en(ev) and "user at turn 5: “没用”" in en(ev)


def test_escalate_after_failures_without_handover_fails_at_the_due_turn():
    convo = chat(("user", "快递丢了"), ("assistant", "我无法查询。"), ("user", "？"), ("assistant", "我不清楚。"),
                 ("user", "那怎么办"), ("assistant", "请耐心等待。"))
    ev = run_check(item(**ESCALATE), convo)
    assert ev.passed is False and ev.turn == 6 and ev.span == "请耐心等待。"
    assert ev.missing == ["转人工|人工客服"] and "turn 2: “无法”" in en(ev) and "turn 4: “不清楚”" in en(ev)


def test_escalate_after_conversation_ending_while_handover_owed_fails():
    convo = chat(("user", "退款"), ("assistant", "请等待。"), ("user", "还是不行"), ("assistant", "请再等等。"),
                 ("user", "没用"))
    ev = run_check(item(**ESCALATE), convo)
    assert ev.passed is False and ev.turn == 4 and "ends without a handover" in en(ev)


def test_escalate_after_a_success_resets_the_streak():
    convo = chat(("user", "a"), ("assistant", "我无法处理。"), ("user", "好"), ("assistant", "已为您登记。"),
                 ("user", "嗯"), ("assistant", "我不清楚。"), ("user", "谢谢"), ("assistant", "再见"))
    ev = run_check(item(**ESCALATE), convo)
    assert ev.passed is True and ev.turn is None and "never 2 consecutive" in en(ev)


def test_escalate_after_needs_a_failure_pattern():
    with pytest.raises(ValidationError, match="bot_failure and/or user_failure"):
        item(type="escalate_after", handover="转人工")


CLOSING = dict(type="final_turn", phrases=["还有什么可以帮您|还有其他问题"])


def test_final_turn_quotes_the_closing_or_says_what_the_last_turn_said():
    good = chat(("user", "谢谢"), ("assistant", "不客气，请问还有什么可以帮您？"))
    ev = run_check(item(**CLOSING), good)
    assert ev.passed is True and ev.turn == 2 and ev.span == "还有什么可以帮您"
    bad = chat(("user", "谢谢"), ("assistant", "请问还有什么可以帮您？"), ("user", "没了"), ("assistant", "好的，再见。"))
    ev = run_check(item(**CLOSING), bad)
    assert ev.passed is False and ev.turn == 4 and ev.missing == ["还有什么可以帮您|还有其他问题"]
    assert "好的，再见。" in en(ev)


def test_per_turn_must_not_mention_finds_the_turn_that_asks_for_a_password():
    convo = chat(("user", "登录不上"), ("assistant", "请问您的账号是？"), ("user", "abc"),
                 ("assistant", "请把您的登录密码发给我，我帮您登录。"))
    never = item(type="must_not_mention", phrases=["密码|完整卡号|CVV"], turns="assistant")
    ev = run_check(never, convo)
    assert ev.passed is False and ev.turn == 4 and ev.span == "密码" and en(ev).startswith("turn 4:")
    # The user saying it is not the bot asking for it.
    user_only = chat(("user", "我忘了密码"), ("assistant", "可以通过短信验证码重置。"))
    assert run_check(never, user_only).passed is True


def test_per_turn_regex_and_max_length_and_must_mention():
    convo = chat(("user", "卡号多少？"), ("assistant", "请提供卡号后四位。"), ("user", "好"),
                 ("assistant", "请提供完整卡号 6222 0000 1111 2222 以便核验。" + "补充说明。" * 20))
    card = item(type="regex", pattern=r"\d{4}\s?\d{4}\s?\d{4}\s?\d{4}", should_match=False, turns="assistant")
    ev = run_check(card, convo)
    assert ev.passed is False and ev.turn == 4 and ev.span == "6222 0000 1111 2222"
    short = item(type="max_length", max_chars=60, turns="assistant")
    ev = run_check(short, convo)
    assert ev.passed is False and ev.turn == 4
    greet = item(type="must_mention", phrases=["请"], turns="assistant")
    assert run_check(greet, convo).passed is True
    polite = item(type="must_mention", phrases=["您好"], turns="assistant")
    ev = run_check(polite, convo)
    assert ev.passed is False and ev.turn == 2 and "failing turns: 2, 4" in en(ev) and ev.missing == ["您好"]


def test_per_turn_check_reads_that_turns_contexts():
    convo = conversation_sample(Conversation(id="k", turns=[
        {"role": "user", "content": "运费多少"},
        {"role": "assistant", "content": "满 99 元包邮。", "contexts": ["运费：满 99 元包邮"]},
        {"role": "user", "content": "退货呢"},
        {"role": "assistant", "content": "七天无理由退货。", "contexts": []}]))
    has_kb = item(type="must_mention", phrases=["包邮|退货"], field="contexts", turns="assistant")
    ev = run_check(has_kb, convo)
    assert ev.passed is False and ev.turn == 4


def rubric(scope: str, items: list[dict], **extra) -> Rubric:
    return Rubric(id="r", name="r", criterion="c", score_descriptions=LEVELS, scope=scope,
                  items=[{"id": "judge", "type": "judge"}, *items], **extra)


def test_lint_flags_checks_that_do_not_fit_the_scope():
    single = rubric("sample", [{"id": "b", **IDENTITY}, {"id": "p", "type": "must_not_mention", "phrases": ["密码"],
                                                          "turns": "assistant"}])
    findings = [f for f in lint_rubric(single, {("items", 1, "type"): 7, ("items", 2, "turns"): 12}) if
                f.severity == "error"]
    assert [(f.line, f.field) for f in findings] == [(7, "item 2 (id: b).type"), (12, "item 3 (id: p).turns")]
    assert "scope: conversation" in findings[0].message
    convo = rubric("conversation", [{"id": "p", "type": "must_not_mention", "phrases": ["密码"]},
                                    {"id": "l", "type": "required_link"}, {"id": "ok", **CLOSING}])
    findings = [f for f in lint_rubric(convo, {}) if f.severity == "error"]
    assert [f.field for f in findings] == ["item 2 (id: p).type", "item 3 (id: l).type"]
    assert "turns: assistant" in findings[0].message


def test_turn_aggregate_only_with_assistant_turn_scope():
    with pytest.raises(ValidationError, match="turn_aggregate"):
        rubric("conversation", [], turn_aggregate={"rule": "mean"})
    assert rubric("assistant_turn", [], turn_aggregate={"rule": "share_at_least", "threshold": 4}).aggregate.rule == \
        "share_at_least"


def test_new_fields_at_their_defaults_keep_old_version_tags():
    old = Rubric(id="r", name="r", criterion="c", score_descriptions=LEVELS,
                 items=[{"id": "judge", "type": "judge"}, {"id": "m", "type": "must_mention", "phrases": ["a"]},
                        {"id": "n", "type": "max_length", "max_chars": 9}])
    # The hash this rubric had before scope/turn_aggregate/turns existed (computed with that schema).
    assert old.content_hash() == "8662d181c073"
    assert rubric("conversation", []).content_hash() != rubric("sample", []).content_hash()
    per_turn = Rubric(**{**old.model_dump(), "items": [{"id": "judge", "type": "judge"},
                                                       {"id": "m", "type": "must_mention", "phrases": ["a"],
                                                        "turns": "assistant"}]})
    assert per_turn.content_hash() != old.content_hash()


def test_conversation_rubrics_apply_only_to_conversations():
    single = Sample(id="s", question="退款", answer="好的")
    convo_rubric = rubric("conversation", [], applies_to={"question_pattern": "发票"})
    assert not applies(convo_rubric, single)
    assert not applies(rubric("sample", []), VERIFIED_FIRST)
    later = chat(("user", "你好"), ("assistant", "您好"), ("user", "我要开发票"), ("assistant", "好的"))
    assert applies(convo_rubric, later) and not applies(convo_rubric, VERIFIED_FIRST)
