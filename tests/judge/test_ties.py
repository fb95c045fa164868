"""Temperature-0 ties in holistic judgments: P(level) at the score token from the reply's logprobs, the expected
score, the tie flag (top two levels within TIE_MARGIN), what the verdict records, which calls ask for logprobs,
and that the dry-run planner (so the Batch API) sends the very same request as the scorer."""
import json
import math

import pytest

from rubriceval import JudgeConfig, Rubric, Sample
from rubriceval.judge.client import JudgeResponse
from rubriceval.judge.options import TokenLogprob
from rubriceval.run.planning import planned_judge_calls
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.scoring.score_probs import (
    TIE_MARGIN,
    holistic_options,
    score_distribution,
    tie_details,
    wants_score_logprobs,
)
from rubriceval.testing.scripted_judge import ScriptedJudge

RUBRIC = Rubric.model_validate({
    "id": "t", "name": "Helpful", "language": "en", "criterion": "Is the answer helpful?",
    "score_descriptions": {1: "no", 2: "barely", 3: "partly", 4: "mostly", 5: "fully"},
    "judge_sees": ["question", "answer"], "items": [{"id": "judge", "type": "judge"}]})
SAMPLE = Sample(id="s1", question="Where is my parcel?", answer="In Hangzhou, arriving Friday.")


def json_reply_tokens(score: int, probs: dict[str, float], feedback: str = "score: 2 was considered") -> list:
    """A JSON verdict as a llama.cpp-like server tokenises it, with `probs` offered at the score token."""
    top = {token: math.log(p) for token, p in probs.items()}
    return [TokenLogprob(token='{"feedback": "', logprob=-0.01),
            TokenLogprob(token=feedback, logprob=-0.2),
            TokenLogprob(token='", "score": ', logprob=-0.01),
            TokenLogprob(token=str(score), logprob=top[str(score)], top=top),
            TokenLogprob(token="}", logprob=-0.01)]


def reply(score: int, probs: dict[str, float] | None) -> JudgeResponse:
    text = json.dumps({"feedback": "score: 2 was considered", "score": score})
    return JudgeResponse(text=text, data=json.loads(text), prompt_tokens=100, completion_tokens=12,
                         logprobs=json_reply_tokens(score, probs) if probs else None)


def test_distribution_expected_score_and_tie():
    close = score_distribution(json_reply_tokens(4, {"4": 0.50, "3": 0.42, '"': 0.05, "5": 0.03}), 4)
    assert close.probs == {3: pytest.approx(0.4421, abs=1e-4), 4: pytest.approx(0.5263, abs=1e-4),
                           5: pytest.approx(0.0316, abs=1e-4)}
    assert close.expected == pytest.approx(3 * 0.4421 + 4 * 0.5263 + 5 * 0.0316, abs=2e-3)
    assert (close.first, close.second, close.tie) == (4, 3, True) and close.margin < TIE_MARGIN
    assert close.coverage == pytest.approx(0.95)
    sure = score_distribution(json_reply_tokens(5, {"5": 0.80, "4": 0.15}), 5)
    assert (sure.first, sure.second, sure.tie) == (5, 4, False) and sure.margin == pytest.approx(0.6842, abs=1e-3)
    alone = score_distribution(json_reply_tokens(2, {"2": 0.99}), 2)
    assert alone.probs == {2: 1.0} and alone.second is None and alone.margin == 1.0 and not alone.tie


def test_the_score_token_is_found_after_the_feedback_and_in_text_replies():
    # The feedback's own "score: 2" is not the score: the last marker with the written level is.
    tokens = json_reply_tokens(2, {"2": 0.6, "1": 0.4})
    assert score_distribution(tokens, 2).probs == {1: 0.4, 2: 0.6}
    text = [TokenLogprob(token="Feedback: fine. [RESULT]", logprob=-0.1),
            TokenLogprob(token=" 3", logprob=math.log(0.5), top={" 3": math.log(0.5), " 4": math.log(0.45)})]
    assert score_distribution(text, 3).tie
    assert score_distribution(text, 4) is None                    # the written level must be the one found
    assert score_distribution(None, 3) is None and score_distribution(tokens, None) is None
    no_levels = [TokenLogprob(token='"score": ', logprob=0.0), TokenLogprob(token="x", logprob=0.0)]
    assert score_distribution(no_levels, 3) is None


def test_tie_details_name_the_levels_in_doubt_and_their_gap():
    a = score_distribution(json_reply_tokens(4, {"4": 0.45, "2": 0.40}), 4)
    b = score_distribution(json_reply_tokens(5, {"5": 0.9, "4": 0.1}), 5)
    assert tie_details({"a": a, "b": b}) == {"items": {"a": [4, 2]}, "spread": 2.0, "disagreement": True}
    assert tie_details({"b": b}) is None


async def test_verdict_keeps_the_written_level_and_records_probabilities_and_the_tie():
    judge = ScriptedJudge([reply(4, {"4": 0.50, "3": 0.45})], score_logprobs=True)
    verdict = await score_rubric(RUBRIC, SAMPLE, judge)
    assert verdict.score == 4.0                                   # the level the judge wrote, not round(expected)
    probs = verdict.details["score_probs"]["judge"]
    assert probs["probs"] == {3: pytest.approx(0.4737, abs=1e-4), 4: pytest.approx(0.5263, abs=1e-4)}
    assert probs["tie"] and probs["expected"] == pytest.approx(3.526, abs=1e-3)
    assert verdict.details["tie"] == {"items": {"judge": [4, 3]}, "spread": 1.0, "disagreement": True}
    assert judge.requests[0].options.logprobs and judge.requests[0].options.top_logprobs == 10
    json.dumps(verdict.details)                                   # stored as JSON


async def test_a_clear_judgment_is_not_flagged_and_no_logprobs_means_no_record():
    clear = await score_rubric(RUBRIC, SAMPLE, ScriptedJudge([reply(5, {"5": 0.9, "4": 0.1})], score_logprobs=True))
    assert "tie" not in clear.details and not clear.details["score_probs"]["judge"]["tie"]
    plain = await score_rubric(RUBRIC, SAMPLE, ScriptedJudge([reply(3, None)], score_logprobs=True))
    assert plain.score == 3.0 and "score_probs" not in plain.details and "tie" not in plain.details


async def test_logprobs_are_asked_for_by_default_only_from_the_embedded_judge():
    hosted = ScriptedJudge([reply(3, None)])                      # a hosted judge: score_logprobs unset
    await score_rubric(RUBRIC, SAMPLE, hosted)
    assert hosted.requests[0].options is None                     # the plain call, its cache key unchanged
    assert wants_score_logprobs(JudgeConfig()) and not wants_score_logprobs(JudgeConfig(base_url="http://x/v1"))
    assert not wants_score_logprobs(JudgeConfig(score_logprobs=False))
    checklist = Rubric.model_validate({**RUBRIC.model_dump(), "judge_mode": "checklist", "items": [
        {"id": "c", "type": "checklist", "questions": [{"id": "q", "ask": "Helpful?"}], "levels": {5: "q"}}]})
    assert holistic_options(checklist, JudgeConfig()) is None     # checklist questions have their own options


def test_the_planner_plans_the_request_the_scorer_sends():
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", score_logprobs=True, cache=False)
    (call,) = planned_judge_calls([SAMPLE], [RUBRIC], [], config)
    assert call.options == holistic_options(RUBRIC, config) and call.options.logprobs
    judge = ScriptedJudge([reply(3, None)], score_logprobs=True)
    import asyncio

    asyncio.run(score_rubric(RUBRIC, SAMPLE, judge))
    assert judge.requests[0].options == call.options and judge.requests[0].messages == call.messages
