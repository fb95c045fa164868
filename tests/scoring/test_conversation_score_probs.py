"""Score probabilities for conversation rubrics: a whole-conversation judgment (`scope: conversation`, one 1–5
score) asks for the score token's logprobs and reads P(level), the expected score and the tie flag exactly as a
single-turn item does; the dry-run planner (so the Batch API) plans the very same request; per-turn judgments
(`scope: assistant_turn`: one JSON list of many scores, or its per-turn fallback) ask for none."""
from __future__ import annotations

import asyncio
import json

import pytest

from rubriceval import Conversation, JudgeConfig, Rubric
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.run.planning import planned_judge_calls
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.scoring.score_probs import TOP_LOGPROBS, holistic_options
from rubriceval.testing.scripted_judge import ScriptedJudge
from tests.judge.test_ties import reply

LEVELS = {1: "很差", 2: "较差", 3: "一般", 4: "较好", 5: "很好"}
CONVO = conversation_sample(Conversation(id="c1", turns=[
    {"role": "user", "content": "我的快递三天了还没到"},
    {"role": "assistant", "content": "抱歉让您久等，包裹在杭州转运中心，预计周五送达。"},
    {"role": "user", "content": "好的，谢谢"},
    {"role": "assistant", "content": "不客气，请问还有什么可以帮您？"}]))


def rubric(scope: str, **extra) -> Rubric:
    return Rubric(**{"id": f"r_{scope}", "name": "结束语", "criterion": "客服是否礼貌收尾", "score_descriptions": LEVELS,
                     "scope": scope, **extra})


def test_whole_conversation_judgment_records_level_probabilities_expected_score_and_tie():
    judge = ScriptedJudge([reply(4, {"4": 0.50, "3": 0.45, "5": 0.05})], score_logprobs=True)
    verdict = asyncio.run(score_rubric(rubric("conversation"), CONVO, judge))
    assert verdict.score == 4.0                                   # the level the judge wrote
    options = judge.requests[0].options
    assert options is not None and options.logprobs and options.top_logprobs == TOP_LOGPROBS
    probs = verdict.details["score_probs"]["judge"]
    assert probs["probs"] == {3: pytest.approx(0.45), 4: pytest.approx(0.50), 5: pytest.approx(0.05)}
    assert probs["expected"] == pytest.approx(3 * 0.45 + 4 * 0.5 + 5 * 0.05, abs=1e-3)
    assert probs["tie"] and (probs["first"], probs["second"]) == (4, 3)
    assert verdict.details["tie"] == {"items": {"judge": [4, 3]}, "spread": 1.0, "disagreement": True}
    json.dumps(verdict.details)


def test_a_clear_conversation_judgment_is_not_a_tie_and_a_reply_without_logprobs_records_nothing():
    clear = asyncio.run(score_rubric(rubric("conversation"), CONVO,
                                     ScriptedJudge([reply(5, {"5": 0.9, "4": 0.1})], score_logprobs=True)))
    assert not clear.details["score_probs"]["judge"]["tie"] and "tie" not in clear.details
    plain = asyncio.run(score_rubric(rubric("conversation"), CONVO,
                                     ScriptedJudge([reply(2, None)], score_logprobs=True)))
    assert plain.score == 2.0 and "score_probs" not in plain.details and "tie" not in plain.details


def test_a_hosted_judge_asks_for_no_logprobs_by_default():
    hosted = ScriptedJudge([reply(3, None)])                      # score_logprobs unset: off for hosted judges
    asyncio.run(score_rubric(rubric("conversation"), CONVO, hosted))
    assert hosted.requests[0].options is None


def test_per_turn_scores_carry_no_probabilities():
    per_turn = rubric("assistant_turn")
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", score_logprobs=True)
    assert holistic_options(per_turn, config) is None
    assert holistic_options(rubric("conversation"), config) is not None
    turns = {"turns": [{"turn": 2, "feedback": "安抚并给出状态", "score": 4},
                       {"turn": 4, "feedback": "礼貌收尾", "score": 5}]}
    one_call = ScriptedJudge([turns], score_logprobs=True)
    verdict = asyncio.run(score_rubric(per_turn, CONVO, one_call))
    assert verdict.score is not None and "score_probs" not in verdict.details
    assert [r.options for r in one_call.requests] == [None]
    # The per-turn fallback (no structured output): one call per turn, each without logprobs either.
    fallback = ScriptedJudge([reply(4, {"4": 0.6, "3": 0.4}), reply(5, {"5": 0.9, "4": 0.1})],
                             score_logprobs=True, structured="text")
    verdict = asyncio.run(score_rubric(per_turn, CONVO, fallback))
    assert len(fallback.requests) == 2 and all(r.options is None for r in fallback.requests)
    assert "score_probs" not in verdict.details


@pytest.mark.parametrize("score_logprobs", [True, False])
def test_the_planner_plans_the_request_the_conversation_scorer_sends(score_logprobs):
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", score_logprobs=score_logprobs, cache=False)
    whole = rubric("conversation")
    (call,) = planned_judge_calls([CONVO], [whole], [], config)
    assert call.options == holistic_options(whole, config)
    assert (call.options is not None) == score_logprobs
    judge = ScriptedJudge([reply(3, {"3": 0.7, "2": 0.3})], score_logprobs=score_logprobs)
    asyncio.run(score_rubric(whole, CONVO, judge))
    assert judge.requests[0].options == call.options and judge.requests[0].messages == call.messages
