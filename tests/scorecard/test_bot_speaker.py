"""Chat exports with bots and agents (issue 40.6): a `bot` speaker stays in the transcript (机器人, what the customer
read) but is not the agent — `turns: assistant` items and first/final-turn checks score the human agent only; a
conversation the bot handled alone is left out with a note. The shipped card's closing item counts the closing
question in one of the agent's last two turns (`final_turn` with `last: 2`), so 还有其他问题吗 followed by
祝您生活愉快 is not a deduction."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rubriceval.data.chatlog import ChatLogConfig, parse_speaker_map, read_chatlog
from rubriceval.data.conversation import Conversation, Turn
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.data.sample import Sample
from rubriceval.prompt.transcript import render_transcript
from rubriceval.scorecard.loader import load_scorecard, scorecard_from_data
from rubriceval.scorecard.score import score_scorecard

ROOT = Path(__file__).resolve().parents[2]
ROWS = [  # 会话ID, 序号, 发言人, 内容, 客服工号
    ("c1", 1, "用户", "我的快递还没到", ""),
    ("c1", 2, "机器人", "亲，傻子都知道要等，请稍候，正在为您转接人工客服", ""),
    ("c1", 3, "客服", "您好，非常抱歉让您久等了，已为您加急。", "A-01"),
    ("c1", 4, "用户", "好的", ""),
    ("c1", 5, "客服", "请问还有其他问题吗？", "A-01"),
    ("c1", 6, "用户", "没有了", ""),
    ("c1", 7, "客服", "感谢您的耐心，祝您生活愉快！", "A-01"),
    ("c2", 1, "用户", "怎么开发票", ""),
    ("c2", 2, "机器人", "在「我的订单-申请发票」开具即可。", ""),
]


@pytest.fixture
def export(tmp_path) -> Path:
    path = tmp_path / "chats.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["会话ID", "序号", "发言人", "内容", "客服工号"])
        writer.writerows(ROWS)
    return path


def _card(items: list[dict]):
    return scorecard_from_data({"id": "t", "name": "t", "base": 100, "dimensions": [{"id": "d"}], "items": items},
                               Path("t.yaml"), {})


def test_a_bot_speaker_is_shown_but_not_scored_as_the_agent(export, capsys):
    speakers = parse_speaker_map("客服=assistant,机器人=bot,用户=user")
    assert speakers["机器人"] == "bot"
    conversations = read_chatlog(export, ChatLogConfig(speakers=speakers))
    assert [c.id for c in conversations] == ["c1"]            # c2: the bot alone, nothing of an agent to score
    assert "1 conversation(s)" in capsys.readouterr().err
    c1 = conversations[0]
    assert [t.role for t in c1.turns][:3] == ["user", "bot", "assistant"] and c1.turns[1].speaker == "机器人"
    assert c1.assistant_turns == [3, 5, 7]                    # the agent's turns only
    transcript = render_transcript(c1, "zh")
    assert "[2] 机器人: " in transcript and "[3] 客服: " in transcript
    # `turns: assistant`: the bot's rude line is not the agent's; the first-turn greeting is the agent's first turn
    card = _card([{"id": "abuse", "dimension": "d", "fatal": True,
                   "check": {"type": "must_not_mention", "turns": "assistant", "phrases": ["傻子"]}},
                  {"id": "greeting", "dimension": "d", "points": -3,
                   "check": {"type": "first_turn", "phrases": ["您好"]}}])
    import asyncio

    verdict = asyncio.run(score_scorecard(card, conversation_sample(c1), None, {}))
    assert verdict.totals.fatal == [] and verdict.totals.total == 100
    assert {o.item: o.status for o in verdict.outcomes} == {"abuse": "clear", "greeting": "clear"}
    # the same export with the bot as the assistant (what the examples used to say): the bot's words count
    as_agent = read_chatlog(export, ChatLogConfig(speakers=parse_speaker_map("客服=assistant,机器人=assistant,用户=user")))
    verdict = asyncio.run(score_scorecard(card, conversation_sample(as_agent[0]), None, {}))
    assert verdict.totals.fatal == ["abuse"]


def _closing_sample(*agent_turns: str) -> Sample:
    turns = [Turn(role="user", content="谢谢")]
    for text in agent_turns:
        turns += [Turn(role="assistant", content=text), Turn(role="user", content="好的")]
    return conversation_sample(Conversation(id="x", turns=turns[:-1]))


def test_the_shipped_cards_closing_item_counts_the_agents_last_two_turns():
    import asyncio

    card = load_scorecard(ROOT / "scorecards" / "ecommerce_qa_zh.yaml")
    closing = next(i for i in card.items if i.id == "closing")
    only = card.model_copy(update={"items": [closing]})

    def status(sample: Sample) -> str:
        return asyncio.run(score_scorecard(only, sample, None, {})).outcome("closing").status

    assert status(_closing_sample("已为您处理。", "请问还有其他问题吗？", "祝您生活愉快！")) == "clear"
    assert status(_closing_sample("请问还有其他问题吗？", "已为您处理。", "祝您生活愉快！")) == "hit"   # 3 turns back
    assert status(_closing_sample("已为您处理。", "祝您生活愉快！")) == "hit"


def test_last_is_checked_against_a_question_about_one_turn():
    with pytest.raises(Exception, match="last > 1"):
        _card([{"id": "c", "dimension": "d", "points": -2,
                "check": {"type": "final_turn", "last": 2, "match": {"ask": "客服是否询问了还有没有其他问题？"}}}])
