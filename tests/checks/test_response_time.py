"""response_time (首响 / 回复超时, issue 38.3): an agent reply later than N seconds after the customer's message, one
occurrence per late reply, from the turn timestamps the chat-log readers keep; the evidence names the reply's turn,
the customer's turn and the delay; a missing timestamp leaves the check undecided (never a pass); zh and en."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from rubriceval import Conversation, Sample
from rubriceval.checks import run_check
from rubriceval.checks.response_time import late_replies
from rubriceval.data.chatlog import ChatLogConfig, read_chatlog
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.data.io import read_dataset
from rubriceval.i18n import evidence_text
from rubriceval.rubric.schema import Item, Rubric
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.validate.lint import scope_mismatches

ROOT = Path(__file__).resolve().parents[2]


def chat(*turns: tuple) -> Sample:
    """(role, text, timestamp or None[, other turn fields])"""
    return conversation_sample(Conversation(id="c1", turns=[
        {"role": role, "content": text, **({"timestamp": at} if at else {}), **(more[0] if more else {})}
        for role, text, at, *more in turns]))


def check(**fields):
    return TypeAdapter(Item).validate_python({"id": "slow", "type": "response_time", **fields})


# Customer at 0 s, reply at 95 s (late), customer at 120 s, reply at 130 s (on time), customer at 200 s and 201 s,
# reply at 300 s: 100 s from the first of the two waiting messages (late).
LATE_TWICE = chat(("user", "在吗", "2026-11-16T01:00:00Z"), ("assistant", "您好，请讲", "2026-11-16T01:01:35Z"),
                  ("user", "查订单 A1001", "2026-11-16T01:02:00Z"), ("assistant", "已发货", "2026-11-16T01:02:10Z"),
                  ("user", "什么时候到", "2026-11-16T01:03:20Z"), ("user", "急", "2026-11-16T01:03:21Z"),
                  ("assistant", "明天送达", "2026-11-16T01:05:00Z"))


def test_each_late_reply_is_an_occurrence_naming_its_turn_and_delay():
    occurrences = late_replies(check(max_seconds=60), LATE_TWICE)
    assert [(ev.turn, ev.other_turn, ev.passed) for ev in occurrences] == [(2, 1, False), (7, 5, False)]
    assert [ev.message.params["delay"] for ev in occurrences] == [95, 100]
    assert evidence_text(occurrences[1], "en") == ("turn 7 replies 100 s after the customer's message (turn 5), "
                                                   "over the 60 s limit")
    assert evidence_text(occurrences[1], "zh") == "第 7 轮客服在用户消息（第 5 轮）100 秒后才回复，超过上限 60 秒"


def test_the_check_fails_at_the_first_late_reply_and_lists_the_others():
    ev = run_check(check(max_seconds=60), LATE_TWICE)
    assert ev.passed is False and ev.turn == 2 and ev.other_turn == 1 and ev.span == "您好，请讲"
    assert evidence_text(ev, "en").endswith("(2 late replies: turns 2, 7)")
    assert evidence_text(ev, "zh").endswith("（共 2 次超时：第 2、7 轮）")


def test_within_the_limit_passes_naming_the_slowest_reply():
    ev = run_check(check(max_seconds=100), LATE_TWICE)
    assert ev.passed is True and ev.turn == 7
    assert evidence_text(ev, "en") == "all 3 repl(ies) within 100 s (slowest: turn 7, 100 s)"
    assert late_replies(check(max_seconds=100), LATE_TWICE) == []


def test_first_reply_only_times_the_first_answer():
    ev = run_check(check(max_seconds=90, replies="first"), LATE_TWICE)
    assert ev.passed is False and ev.turn == 2 and ev.message.params["delay"] == 95
    assert run_check(check(max_seconds=96, replies="first"), LATE_TWICE).passed is True   # turn 7's 100 s not read


def test_a_missing_timestamp_cannot_be_decided_rather_than_passing():
    sample = chat(("user", "在吗", "2026-11-16T01:00:00Z"), ("assistant", "您好", None))
    ev = run_check(check(max_seconds=60), sample)
    assert ev.passed is None and ev.turn == 2 and ev.missing == ["timestamp of turn 2"]
    assert evidence_text(ev, "en").startswith("cannot decide: turn 2 has no readable timestamp")
    assert evidence_text(ev, "zh").startswith("无法判断：第 2 轮没有可读的时间戳")
    assert run_check(check(max_seconds=60), chat(("user", "在吗", None), ("assistant", "您好", None))).passed is None
    # a reply that is certainly late still fails, whatever another reply's clock says
    mixed = chat(("user", "a", "2026-11-16T01:00:00Z"), ("assistant", "b", "2026-11-16T01:05:00Z"),
                 ("user", "c", None), ("assistant", "d", None))
    assert run_check(check(max_seconds=60), mixed).passed is False


def test_tool_turns_and_agent_follow_ups_are_not_replies():
    sample = chat(("user", "查物流", "2026-11-16T01:00:00Z"), ("assistant", "", "2026-11-16T01:00:01Z",
                                                           {"tool_calls": [{"name": "track", "id": "t1"}]}),
                  ("tool", "已签收", "2026-11-16T01:00:02Z", {"tool_call_id": "t1"}), ("assistant", "已签收", "2026-11-16T01:00:30Z"),
                  ("assistant", "还有别的吗", "2026-11-16T01:10:00Z"))
    ev = run_check(check(max_seconds=60), sample)
    assert ev.passed is True and ev.message.params["n"] == 1 and ev.message.params["delay"] == 30
    assert run_check(check(max_seconds=60), chat(("assistant", "您好", None))).passed is True   # nobody waits


def test_only_in_conversation_rubrics():
    rubric = Rubric.model_validate({"id": "r", "name": "r", "criterion": "c", "items": [
        {"id": "slow", "type": "response_time", "max_seconds": 60}],
        "score_descriptions": {n: f"level {n}" for n in range(1, 6)}, "combine": {"rule": "min"}})
    assert any("'response_time' checks a conversation" in m for m, *_ in scope_mismatches(rubric))
    with pytest.raises(ValueError, match="max_seconds"):
        check(max_seconds=0)


CARD = {"id": "qa", "name": "质检", "dimensions": [{"id": "service"}], "items": [
    {"id": "slow", "dimension": "service", "points": -2, "per": "occurrence", "cap": 10,
     "check": {"type": "response_time", "max_seconds": 60}}]}


def test_a_scorecard_counts_every_late_reply_without_turns():
    card = Scorecard.model_validate(CARD)
    verdict = asyncio.run(score_scorecard(card, LATE_TWICE, None))
    outcome = verdict.outcomes[0]
    assert outcome.status == "hit" and outcome.occurrences == 2 and [e.turn for e in outcome.evidence] == [2, 7]
    assert verdict.totals.total == 96
    undecided = asyncio.run(score_scorecard(card, chat(("user", "在吗", None), ("assistant", "您好", None)), None))
    assert undecided.outcomes[0].status == "unscored" and undecided.totals.total is None
    with pytest.raises(ValueError, match="per: occurrence counts failing turns.*counts its occurrences: response_time"):
        Scorecard.model_validate({**CARD, "items": [{**CARD["items"][0], "check": {"type": "before", "first": "a",
                                                                                   "then": "b"}}]})


def test_chat_log_export_timestamps_time_the_replies(tmp_path: Path):
    """A CSV export in the contact centre's clock (Asia/Shanghai, no offset): the reader keeps each row's time (in
    UTC), and the check reads the delays from them."""
    export = tmp_path / "week.csv"
    export.write_text("会话ID,发送时间,发言人,内容\n"
                      "c-1,2026-11-16 09:00:05,用户,我的快递三天了还没到\n"
                      "c-1,2026-11-16 09:00:07,机器人,非常抱歉，请提供订单号。\n"
                      "c-1,2026-11-16 09:00:30,用户,订单号 A1001\n"
                      "c-1,2026-11-16 09:03:00,客服,已为您催促仓库。\n", encoding="utf-8")
    config = ChatLogConfig(timezone="Asia/Shanghai", speakers={"用户": "user", "机器人": "assistant", "客服": "assistant"})
    conversation = read_chatlog(export, config)[0]
    assert conversation.turns[3].timestamp == "2026-11-16T01:03:00Z"
    ev = run_check(check(max_seconds=120), conversation_sample(conversation))
    assert ev.passed is False and ev.turn == 4 and ev.other_turn == 3 and ev.message.params["delay"] == 150


def test_the_shipped_weekly_qa_export_times_its_replies():
    """datasets/qa_exports: OpenAI-style messages with a timestamp each; every agent reply there comes 40 s after the
    customer."""
    samples = read_dataset(ROOT / "datasets" / "qa_exports" / "2026-W46.jsonl", require=())
    first = samples[0]
    assert [ev.message.params["delay"] for ev in late_replies(check(max_seconds=30), first)] == [40, 40]
    assert run_check(check(max_seconds=40), first).passed is True


def test_a_rubric_whose_check_cannot_decide_is_unscored_not_failed():
    from rubriceval.scoring.rubric_scorer import score_rubric

    rubric = Rubric.model_validate({"id": "r", "name": "r", "criterion": "c", "scope": "conversation",
                                    "score_descriptions": {n: f"level {n}" for n in range(1, 6)},
                                    "combine": {"rule": "min"},
                                    "items": [{"id": "slow", "type": "response_time", "max_seconds": 60}]})
    verdict = asyncio.run(score_rubric(rubric, chat(("user", "在吗", None), ("assistant", "您好", None)), None))
    assert verdict.score is None and verdict.unscored_kind == "missing_field"
    assert verdict.unscored_reason.startswith("check 'slow' cannot decide:")
    assert asyncio.run(score_rubric(rubric, LATE_TWICE, None)).score == 1
