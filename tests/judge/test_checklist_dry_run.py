"""The dry run sizes a checklist question's reply from its yes/no choices (~2 tokens under llama.cpp's grammar, a
small JSON object under a JSON-schema enum), not the 120 tokens of a holistic verdict with feedback; cached calls
cost nothing; the cost line uses the same numbers."""
from __future__ import annotations

import pytest

from rubriceval import JudgeConfig, Sample, load_rubrics
from rubriceval.judge.cache import CallCache
from rubriceval.prompt.checklist import call_options, choice_answer_tokens
from rubriceval.run.planning import EXPECTED_COMPLETION_TOKENS, plan_cost, planned_judge_calls

SAMPLES = [Sample(id=f"s{i}", question="我的快递怎么还没到？", answer=f"抱歉让您久等，包裹在杭州转运中心，预计周{i + 3}送达。",
                  contexts=["杭州转运中心，预计周五送达"]) for i in range(3)]


def config(**update) -> JudgeConfig:
    return JudgeConfig(**{"base_url": "http://127.0.0.1:9/v1", "model": "m", "cache": False, "price_in_per_mtok": 1.0,
                          "price_out_per_mtok": 10.0, **update})


@pytest.fixture(scope="module")
def rubrics():
    return load_rubrics("rubrics", only=["emotional_soothing"])


def test_checklist_questions_are_sized_from_their_choices(rubrics):
    holistic = plan_cost(SAMPLES, rubrics, [], config(judge_mode="holistic"))
    assert holistic.completion_tokens == holistic.calls * EXPECTED_COMPLETION_TOKENS
    grammar = plan_cost(SAMPLES, rubrics, [], config(judge_mode="checklist", choice_constraint="grammar"))
    assert grammar.calls > holistic.calls
    assert grammar.completion_tokens == grammar.calls * 2                 # "yes" + end of turn
    schema = plan_cost(SAMPLES, rubrics, [], config(judge_mode="checklist"))
    per_call = choice_answer_tokens(call_options(), "json_schema")
    assert 2 < per_call <= 10 and schema.completion_tokens == schema.calls * per_call
    assert f"+ ~{grammar.completion_tokens} completion tokens" in grammar.format()
    expected_cost = (grammar.prompt_tokens * 1.0 + grammar.completion_tokens * 10.0) / 1e6
    assert grammar.cost_usd == pytest.approx(expected_cost)


def test_cached_questions_add_no_completion_tokens(rubrics, tmp_path):
    cfg = config(judge_mode="checklist", choice_constraint="grammar", cache=True,
                 cache_path=str(tmp_path / "cache.sqlite"))
    cache = CallCache(tmp_path / "cache.sqlite")
    calls = list(planned_judge_calls(SAMPLES, rubrics, [], cfg))
    cache.put(calls[0].key(), {"text": "yes"})
    plan = plan_cost(SAMPLES, rubrics, [], cfg, cache=cache)
    assert plan.cached == 1 and plan.completion_tokens == (plan.calls - 1) * 2


def test_the_answer_estimate_respects_max_tokens():
    options = call_options().model_copy(update={"max_tokens": 1})
    assert choice_answer_tokens(options, "json_schema") == 1
