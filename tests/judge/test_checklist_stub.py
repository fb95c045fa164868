"""Checklist questions through the real client and the loopback stub server: the constrained answer (GBNF grammar
or JSON-schema enum), logprobs back into p(yes), prompt tokens reused from the server's prefix cache, and the
client's cache keyed on the call options."""
import pytest

from rubriceval import Sample, load_rubric
from rubriceval.judge.client import JudgeClient
from rubriceval.judge.options import CallOptions
from rubriceval.scoring.judge_mode import with_judge_mode
from rubriceval.scoring.rubric_scorer import score_rubric

SAMPLE = Sample(id="d1", question="我的订单延迟三天了还没到", tags=["订单延迟"],
                answer="非常抱歉让您久等了。包裹在杭州转运中心，预计周五送达；超过 5 天可申请退款。",
                contexts=["杭州转运中心，暴雨延误，预计周五送达。"])


@pytest.fixture
def soothing():
    (rubric,), _ = with_judge_mode([load_rubric("rubrics/emotional_soothing.yaml")], "checklist",
                                  judge_models=["local"])
    return rubric


@pytest.mark.parametrize("constraint", ["grammar", "json_schema"])
async def test_p_yes_comes_from_the_servers_logprobs(judge_config, stub_server, soothing, constraint):
    client = JudgeClient(judge_config.model_copy(update={"choice_constraint": constraint}))
    try:
        verdict = await score_rubric(soothing, SAMPLE, client)
    finally:
        await client.close()
    questions = verdict.details["checklist"]["checklist"]["questions"]
    assert verdict.score is not None and len(questions) == len(soothing.checklist_items[0].questions)
    for answer in questions.values():
        assert answer["source"] == "logprobs"
        assert (answer["p_yes"] >= 0.5) == answer["label"]          # the label is the likelier answer
        assert 0.02 < answer["p_yes"] < 0.98                         # a probability, not the label
    bodies = [r.body for r in stub_server.stats.requests]
    assert all(b["logprobs"] is True and b["top_logprobs"] >= 5 and b["max_tokens"] <= 8 for b in bodies)
    if constraint == "grammar":
        assert all(b["grammar"] == 'root ::= "yes" | "no"' and "response_format" not in b for b in bodies)
    else:
        assert all(b["response_format"]["json_schema"]["schema"]["properties"]["answer"]["enum"] == ["yes", "no"]
                   for b in bodies)


async def test_shared_prefix_is_counted_as_cached_prompt_tokens(judge_config, soothing):
    client = JudgeClient(judge_config.model_copy(update={"choice_constraint": "grammar"}))
    try:
        verdict = await score_rubric(soothing, SAMPLE, client)
    finally:
        await client.close()
    usage = verdict.usage
    n = len(soothing.checklist_items[0].questions)
    # Every question after the first reuses the whole prompt but its last lines.
    assert usage.calls == n and usage.cached_prompt_tokens > 0.8 * usage.prompt_tokens * (n - 1) / n
    assert client.stats.cached_prompt_tokens == usage.cached_prompt_tokens


async def test_options_are_part_of_the_client_cache_key(judge_config, stub_server):
    client = JudgeClient(judge_config.model_copy(update={"choice_constraint": "grammar"}))
    messages = [{"role": "user", "content": "是否安抚？只回答 yes 或 no。"}]
    options = CallOptions(max_tokens=1, logprobs=True, top_logprobs=5, choices=["yes", "no"])
    try:
        first = await client.complete(messages, options=options)
        again = await client.complete(messages, options=options)
        other = await client.complete(messages, options=options.model_copy(update={"top_logprobs": 3}))
        plain = await client.complete(messages)
    finally:
        await client.close()
    assert not first.cached and again.cached and again.logprobs == first.logprobs   # logprobs survive the cache
    assert not other.cached and not plain.cached and plain.logprobs is None
    assert stub_server.stats.calls["chat"] == 3
