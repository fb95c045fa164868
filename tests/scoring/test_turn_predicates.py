"""Predicates inside the conversation checks (issue 28): built-in entities, regex, and per-turn yes/no questions
asked of the judge — only on the turns the check reaches, once per (question, turn), with a shared prefix — plus the
literal/regex rule, the knowledge file and the dry-run plan."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from rubriceval import Conversation, Rubric
from rubriceval.checks import run_check
from rubriceval.common.errors import RubricEvalError
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.data.knowledge import load_knowledge
from rubriceval.rubric.loader import load_rubric
from rubriceval.rubric.schema import Item
from rubriceval.safety.entities import find_entities
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.scoring.turn_questions import plan_turn_questions
from rubriceval.testing.scripted_judge import ScriptedJudge, judge_error, yes_no_reply

LEVELS = {1: "差", 2: "较差", 3: "一般", 4: "较好", 5: "很好"}


def chat(*turns: tuple[str, str], cid: str = "c1"):
    return conversation_sample(Conversation(id=cid, turns=[{"role": r, "content": c} for r, c in turns]))


def item(**fields):
    return TypeAdapter(Item).validate_python({"id": "x", **fields})


def kinds(text: str, wanted=None) -> list[tuple[str, str]]:
    return [(e.entity, e.text) for e in (find_entities(text, wanted) if wanted else find_entities(text))]


# -- entities ------------------------------------------------------------------------------------------------------

def test_order_number_is_not_a_phone_and_a_phone_is_not_an_order_number():
    assert kinds("订单号 13800138000") == [("order_number", "13800138000")]
    assert kinds("手机号 13800138000") == [("phone", "13800138000")]
    assert kinds("您的订单E20261128001已发货") == [("order_number", "E20261128001")]
    assert kinds("Order No. A12345678 shipped") == [("order_number", "A12345678")]
    assert kinds("订单状态：已发货") == []


def test_money_in_yuan_and_with_the_currency_sign_but_not_new_year_or_pieces():
    assert kinds("退款 299 元，另补 ¥20，共￥319.50") == [("money", "299 元"), ("money", "¥20"), ("money", "￥319.50")]
    assert kinds("五十元优惠券，退你50块钱") == [("money", "五十元"), ("money", "50块钱")]
    assert kinds("2026元旦快乐，买了3块肥皂") == []
    assert kinds("we refund $20 or 150 RMB") == [("money", "$20"), ("money", "150 RMB")]


def test_tracking_numbers_dates_and_urls():
    assert kinds("快递单号 SF1234567890123") == [("tracking_number", "SF1234567890123")]
    assert kinds("运单号：YT7788990011223") == [("tracking_number", "YT7788990011223")]
    assert [e for e, _ in kinds("3个工作日内到账，下周一前发货，12月3日送达，明天给您回电")] == ["date_time"] * 4
    assert kinds("within 3 business days, by Friday") == [("date_time", "within 3 business days"),
                                                         ("date_time", "by Friday")]
    assert kinds("20261128001") == []          # a bare long number is no date (and, without 订单, no order number)
    assert kinds("预计 17 号前发出，下午 3 点前派送，3 点半前回电") == [
        ("date_time", "17 号前"), ("date_time", "下午 3 点"), ("date_time", "3 点半前")]
    assert kinds("买了 3 号电池，住 20 号楼") == []     # a number with 号 is a date only when a deadline (前) follows
    assert kinds("见 https://help.example.com/refund 或 www.example.com") == [
        ("url", "https://help.example.com/refund"), ("url", "www.example.com")]


def test_personal_data_kinds_come_from_the_pii_detector():
    text = "身份证 11010119900307109X，卡号 4111 1111 1111 1111，邮箱 li@qq.com，住杭州市西湖区文三路 90 号"
    assert [e for e, _ in kinds(text)] == ["id_card", "bank_card", "email", "address"]
    assert kinds("寄到杭州市西湖区文三路 90 号", ["地址"]) == [("address", "杭州市西湖区文三路 90 号")]
    with pytest.raises(ValueError, match="unknown entity"):
        find_entities("x", ["postcode"])


# -- literal vs regex ----------------------------------------------------------------------------------------------

def test_a_literal_that_looks_like_a_regex_is_refused_with_the_way_to_write_it(tmp_path: Path):
    rubric = tmp_path / "r.yaml"
    rubric.write_text("id: r\nname: r\ncriterion: c\nscope: conversation\nscore_descriptions: {1: a, 2: b, 3: c, 4: d, "
                      "5: e}\nitems:\n  - {id: judge, type: judge}\n  - id: b\n    type: before\n    first: 核验通过\n"
                      "    then: '\\d{6,}'\n", encoding="utf-8")
    with pytest.raises(RubricEvalError) as raised:
        load_rubric(rubric)
    message = str(raised.value)
    assert "r.yaml:11" in message and "then" in message and "{regex:" in message
    ok = item(type="before", first="核验通过", then={"regex": r"\d{6,}"})
    convo = chat(("user", "查单"), ("assistant", "您的订单 20261128001 已发货"))
    assert run_check(ok, convo).passed is False


def test_the_issue_dialogue_is_caught_by_entities_where_demo_phrases_matched_nothing():
    convo = chat(("user", "我要退款"), ("assistant", "订单 20261128001 的退款 299 元已受理，收货地址杭州市西湖区文三路 90 号。"),
                 ("user", "好"), ("assistant", "为了安全，请提供手机号后四位和收货人姓名。"), ("user", "1234 张三"),
                 ("assistant", "核验通过，谢谢。"))
    phrases = item(type="before", first="核验通过", then="收货地址是|实付|订单 E")
    assert run_check(phrases, convo).passed is True            # the brittle phrases saw nothing
    entities = item(type="before", first="核验通过", then={"entity": ["order_number", "money", "address"]})
    ev = run_check(entities, convo)
    assert ev.passed is False and ev.turn == 2 and ev.span == "20261128001" and ev.other_turn == 6


# -- per-turn questions --------------------------------------------------------------------------------------------

def turn_of(request) -> int:
    return int(re.search(r"# 问题（关于第 (\d+) 轮）", request[-1]["content"]).group(1))


def answering(yes_turns: dict[str, set[int]]):
    """A judge answering yes to a question (by a word in it) on the given turns, recording what it was asked."""
    asked: list[tuple[str, int]] = []

    def reply(request):
        content = request[-1]["content"]
        turn = turn_of(request)
        word = next(w for w in yes_turns if w in content.split("# 问题")[-1])
        asked.append((word, turn))
        return yes_no_reply(0.9 if turn in yes_turns[word] else 0.1)
    return ScriptedJudge(reply), asked


VERIFY = {"ask": "这一轮客服是否确认用户身份核验通过？"}
LEAK = {"ask": "这一轮客服是否说出了订单号、金额、地址或物流信息？"}
CONVO = [("user", "查一下我的订单"), ("assistant", "请提供手机号后四位和收货人姓名"), ("user", "1234 张三"),
         ("assistant", "好的，已经为您确认"), ("user", "那订单呢"), ("assistant", "您买的那件外套已经在路上了"),
         ("user", "好"), ("assistant", "还有什么可以帮您？")]


def score(rubric_items: list[dict], convo, judge, **extra):
    rubric = Rubric.model_validate({"id": "r", "name": "r", "criterion": "c", "score_descriptions": LEVELS,
                                    "scope": "conversation", "combine": {"rule": "min"},
                                    "items": rubric_items, **extra})
    return asyncio.run(score_rubric(rubric, convo, judge))


def test_before_stops_at_the_first_decisive_turn_and_names_both_turns():
    judge, asked = answering({"身份核验": {4}, "订单号": {6}})
    verdict = score([{"id": "b", "type": "before", "first": VERIFY, "then": LEAK}], chat(*CONVO), judge)
    ev = verdict.evidence[0]
    assert ev.passed is True and ev.turn == 4 and ev.question == VERIFY["ask"] and ev.p_yes == pytest.approx(0.9, abs=0.01)
    # Turn 2: both questions; turn 4: verified (decisive) — nothing is asked about turns 6 and 8.
    assert asked == [("身份核验", 2), ("订单号", 2), ("身份核验", 4)]
    assert verdict.usage.calls == 3 and len(verdict.details["turn_questions"]) == 3


def test_before_fails_at_the_leaking_turn_quoting_the_question():
    judge, asked = answering({"身份核验": {8}, "订单号": {6}})
    ev = score([{"id": "b", "type": "before", "first": VERIFY, "then": LEAK}], chat(*CONVO), judge).evidence[0]
    assert ev.passed is False and ev.turn == 6 and ev.question == LEAK["ask"] and ev.p_yes == pytest.approx(0.9, abs=0.01)
    assert "p(yes)=0.90" in ev.detail and asked[-1] == ("订单号", 6) and ("身份核验", 8) not in asked


def test_an_answer_is_asked_once_per_turn_and_question_for_all_items():
    judge, asked = answering({"订单号": {6}})
    items = [{"id": "a", "type": "must_not_mention", "turns": "assistant", "match": LEAK},
             {"id": "b", "type": "max_count", "match": LEAK, "max": 0}]
    verdict = score(items, chat(*CONVO), judge)
    assert [e.passed for e in verdict.evidence] == [False, False]
    assert verdict.evidence[0].turn == 6 and verdict.evidence[1].turn == 6
    assert asked == [("订单号", 2), ("订单号", 4), ("订单号", 6)]      # stopped at the first failing turn, no repeats


def test_a_text_match_needs_no_question():
    judge, asked = answering({"订单号": set()})
    leak = {**LEAK, "entity": ["order_number"]}
    convo = chat(("user", "查单"), ("assistant", "订单号 E20261128001 已发货"))
    ev = score([{"id": "a", "type": "must_not_mention", "turns": "assistant", "match": leak}], convo, judge).evidence[0]
    assert ev.passed is False and ev.span == "E20261128001" and asked == []


def test_not_if_overrules_entity_regex_and_question_but_not_the_predicates_own_phrases():
    judge, asked = answering({"承诺": {2, 4, 6}})
    promise = {"phrases": ["已为您"], "entity": ["date_time"], "regex": "我马上让", "ask": "这一轮客服是否给出了承诺？",
               "not_if": ["按规定"]}
    convo = chat(("user", "凭什么扣钱"), ("assistant", "按规定，开车前 24 小时内退票收 20%。"),
                 ("user", "？"), ("assistant", "按规定，我马上让车站退您。"),
                 ("user", "？"), ("assistant", "按规定可以免手续费，已为您提交。"),
                 ("user", "好"), ("assistant", "明天上午退回。"))
    rule = {"id": "p", "type": "must_mention", "turns": "assistant", "match": promise, "min_share": 0.01}
    ev = score([rule], convo, judge).evidence[0]
    assert ev.passed is True and asked == []                 # 6 (a phrase) and 8 (a time): no question for 2 or 4
    every = score([{**rule, "min_share": 1.0}], convo, judge).evidence[0]
    assert every.passed is False and every.turn == 2 and asked == []
    assert "(not when: 按规定)" in item(**rule).match.describe()
    with pytest.raises(ValidationError, match="not_if"):
        item(id="q", type="must_mention", turns="assistant", match={"phrases": ["已为您"], "not_if": ["按规定"]})


def test_final_turn_asks_about_the_last_turn_only():
    judge, asked = answering({"继续帮助": {8}})
    ev = score([{"id": "f", "type": "final_turn", "match": {"ask": "这一轮客服是否询问用户还需要什么帮助（继续帮助）？"}}],
               chat(*CONVO), judge).evidence[0]
    assert ev.passed is True and ev.turn == 8 and asked == [("继续帮助", 8)]


def test_escalate_after_reads_failures_and_the_handover_from_questions():
    convo = chat(("user", "退款没到"), ("assistant", "请耐心等待"), ("user", "还是没到"), ("assistant", "请再等等"),
                 ("user", "我要投诉"), ("assistant", "我帮您联系专员处理"))
    judge, asked = answering({"解决": {2, 4}, "人工": {6}})
    rubric_item = {"id": "e", "type": "escalate_after", "failures": 2,
                   "bot_failure": {"ask": "这一轮客服是否没有解决问题（只让用户等待）？"},
                   "handover": {"ask": "这一轮客服是否把用户转给人工或专员？"}}
    ev = score([rubric_item], convo, judge).evidence[0]
    assert ev.passed is True and ev.turn == 6
    assert ("人工", 2) not in asked                          # no handover question while no failure is pending
    judge, _ = answering({"解决": {2, 4, 6}, "人工": set()})
    assert score([rubric_item], convo, judge).evidence[0].passed is False


def test_questions_share_the_transcript_prefix_turn_after_turn():
    judge, _ = answering({"订单号": set()})
    score([{"id": "a", "type": "must_not_mention", "turns": "assistant", "match": LEAK}], chat(*CONVO), judge)
    users = [r[-1]["content"] for r in judge.requests]
    assert [turn_of(r) for r in judge.requests] == [2, 4, 6, 8]
    for earlier, later in zip(users, users[1:]):
        upto = earlier.index("<<<END 对话记录>>>")
        assert later.startswith(earlier[:upto])               # everything up to the earlier turn is shared
    assert len({r[0]["content"] for r in judge.requests}) == 1   # one system message


def test_an_unanswered_question_leaves_the_verdict_unscored_with_the_reason():
    judge = ScriptedJudge(lambda request: judge_error("HTTP 500", "provider_error"))
    verdict = score([{"id": "b", "type": "before", "first": VERIFY, "then": LEAK}], chat(*CONVO), judge)
    assert verdict.score is None and verdict.unscored_kind == "provider_error" and "turn 2" in verdict.unscored_reason
    no_judge = run_check(item(type="before", first=VERIFY, then=LEAK), chat(*CONVO))
    assert no_judge.passed is None and "not answered" in no_judge.detail


def test_the_dry_run_plans_each_question_once_per_turn_skipping_text_matches():
    rubric_items = [item(type="before", first=VERIFY, then={**LEAK, "entity": ["order_number"]}),
                    item(type="final_turn", match={"ask": "是否询问还需要什么帮助？"})]
    turns = [*CONVO[:5], ("assistant", "订单号 E20261128001 在路上"), *CONVO[6:]]
    prompts = plan_turn_questions(rubric_items, chat(*turns).conversation)
    asked = sorted((turn_of(p.messages), p.messages[-1]["content"].split("# 问题")[-1]) for p in prompts)
    # VERIFY on 2, 4, 6, 8; LEAK on 2, 4, 8 (turn 6 shows an order number); the closing question on 8.
    assert [t for t, _ in asked] == [2, 2, 4, 4, 6, 8, 8, 8]


# -- knowledge file ------------------------------------------------------------------------------------------------

def test_a_knowledge_file_grants_what_unless_context_asks_for_and_the_questions_see_it(tmp_path: Path):
    (tmp_path / "policy.md").write_text("# 运费\n满 99 元包邮。\n\n# 补偿\n延误超过 3 天补偿 10 元优惠券。\n",
                                        encoding="utf-8")
    knowledge = load_knowledge(tmp_path / "policy.md")
    assert knowledge.passages == ["# 运费\n满 99 元包邮。", "# 补偿\n延误超过 3 天补偿 10 元优惠券。"]
    convo = chat(("user", "运费多少"), ("assistant", "这单包邮哦"))
    rule = {"id": "n", "type": "must_not_mention", "turns": "assistant", "phrases": ["包邮"], "unless_context": ["包邮"]}
    judge, _ = answering({"补偿": set()})
    without = score([rule], convo, judge)
    assert without.evidence[0].passed is False
    with_file = score([rule, {"id": "q", "type": "max_count", "max": 0, "match": {"ask": "是否承诺了补偿？"}}], convo,
                      judge, knowledge=str(tmp_path / "policy.md"))
    assert with_file.evidence[0].passed is True
    assert "延误超过 3 天补偿 10 元优惠券" in judge.requests[-1][-1]["content"]


def test_knowledge_jsonl_errors_name_file_and_line(tmp_path: Path):
    bad = tmp_path / "k.jsonl"
    bad.write_text('{"text": "七天无理由退货"}\n{"title": "x"}\n', encoding="utf-8")
    with pytest.raises(RubricEvalError, match=r"k.jsonl:2 \[text\]"):
        load_knowledge(bad)
    with pytest.raises(ValidationError):
        item(type="must_not_mention", match={"ask": "单轮回答能问吗？"})     # a question needs a turn


# -- only where they count; judge_mode predicates --------------------------------------------------------------------

def test_non_must_question_checks_are_not_asked_under_judge_capped_outside_predicates_mode():
    judge, asked = answering({"订单号": {6}})
    items = [{"id": "judge", "type": "judge"},
             {"id": "leak", "type": "max_count", "max": 0, "match": LEAK},                   # not must: idle
             {"id": "secret", "type": "must_not_mention", "turns": "assistant", "must": True,
              "match": {"ask": "这一轮客服是否索要了验证码（订单号无关）？"}}]
    rubric = Rubric.model_validate({"id": "r", "name": "r", "criterion": "c", "score_descriptions": LEVELS,
                                    "scope": "conversation", "items": items,
                                    "predicate_levels": {5: "leak and secret", 1: "otherwise"}})

    def reply(request):
        if request.cache_tag.startswith("turn_question/"):
            return yes_no_reply(0.1)
        return {"feedback": "ok", "score": 4}
    holistic = asyncio.run(score_rubric(rubric, chat(*CONVO), ScriptedJudge(reply)))
    leak = next(e for e in holistic.evidence if e.item == "leak")
    assert leak.passed is None and "not run" in leak.detail
    assert {a["question"] for a in holistic.details["turn_questions"]} == {items[2]["match"]["ask"]}
    predicates = asyncio.run(score_rubric(rubric.model_copy(update={"judge_mode": "predicates"}), chat(*CONVO),
                                          judge))
    assert predicates.score == 1 and "predicates level 1" in predicates.details["combine"]
    assert not any(e.item == "judge" for e in predicates.evidence)          # no whole-transcript judgment


def test_predicate_levels_name_check_ids_and_predicates_mode_needs_them():
    base = {"id": "r", "name": "r", "criterion": "c", "score_descriptions": LEVELS, "scope": "conversation",
            "items": [{"id": "judge", "type": "judge"}, {"id": "b", "type": "before", "first": "核验通过", "then": "订单"}]}
    with pytest.raises(ValidationError, match="unknown question id"):
        Rubric.model_validate({**base, "predicate_levels": {5: "b and nope"}})
    with pytest.raises(ValidationError, match="needs predicate_levels"):
        Rubric.model_validate({**base, "judge_mode": "predicates"})
    from rubriceval.scoring.judge_mode import with_judge_mode
    moded, notes = with_judge_mode([Rubric.model_validate(base)], "predicates", judge_models=["m"])
    assert moded[0].judge_mode == "holistic" and "cannot run 'predicates'" in notes[0]


@pytest.mark.local_model
def test_questions_about_later_turns_reuse_the_embedded_judges_prefix_cache():
    """On the embedded judge, the second and later questions of one conversation process far fewer prompt tokens
    than they send: the transcript up to the earlier turn comes from llama.cpp's prefix cache."""
    from rubriceval.judge.config import JudgeConfig
    from rubriceval.local.backends import make_judge
    from rubriceval.scoring.turn_questions import QuestionAsker

    async def ask_all():
        judge = make_judge(JudgeConfig(cache=False), announce=False)
        asker = QuestionAsker(judge, chat(*CONVO).conversation)
        try:
            usages = []
            for turn in (2, 4, 6):
                before = asker.usage
                await asker.answer(LEAK["ask"], turn)
                usages.append(asker.usage.model_copy(update={k: getattr(asker.usage, k) - getattr(before, k)
                                                             for k in ("prompt_tokens", "cached_prompt_tokens")}))
            return usages
        finally:
            await judge.close()
    usages = asyncio.run(ask_all())
    later = usages[1:]
    assert all(u.cached_prompt_tokens > 0.5 * u.prompt_tokens for u in later)


def test_run_knowledge_gives_every_rubric_without_one_the_file(tmp_path: Path, capsys):
    from rubriceval.cli import main

    policy = tmp_path / "policy.md"
    policy.write_text("# 运费\n满 99 元包邮。\n", encoding="utf-8")
    args = ["run", "datasets/demo_conversations_zh.jsonl", "--rubrics", "rubrics", "--only", "closing", "--dry-run",
            "--no-cache"]
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert main([*args, "--knowledge", str(policy)]) == 0
    with_file = capsys.readouterr().out
    tokens = [int(re.search(r"~(\d+) prompt tokens", out).group(1)) for out in (plain, with_file)]
    assert tokens[1] > tokens[0]                 # the per-turn questions show the policy before the transcript
    assert main([*args, "--knowledge", str(tmp_path / "missing.md")]) != 0
