"""The one judge path (rubriceval/judge/ask.py): usage, readers, the one re-ask, typed outcomes, cached spend."""
from __future__ import annotations

from pathlib import Path

import jinja2

from rubriceval import JudgeConfig, Usage
from rubriceval.generate import generate
from rubriceval.judge.ask import JudgeRequest, Reading, TemplateReask, ask, json_reader, usage_of
from rubriceval.judge.client import JudgeClient, JudgeResponse
from rubriceval.testing.scripted_judge import ScriptedJudge, judge_error
from rubriceval.testing.stub_server import StubServer

REQUEST = JudgeRequest(messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "rate it"}],
                       json_schema={"type": "object"}, schema_name="yes_no", cache_tag="t/v1")
REASK = TemplateReask(template=jinja2.Template("bad: {{ problems }} ({{ lang }})"), variables={"lang": "en"})


def read_yes_no(reply) -> Reading[bool]:
    answer = (reply.data or {}).get("answer")
    if answer not in ("yes", "no"):
        return Reading(problems=[f"answer is {answer!r}, not yes/no"], kind="parse_error", feedback="half-read")
    return Reading(value=answer == "yes")


def test_a_cached_reply_is_a_cache_hit_with_zero_tokens_and_cost():
    stored = JudgeResponse(text="x", prompt_tokens=900, completion_tokens=80, cost_usd=0.5, latency_s=2.0,
                           cached=True)
    assert usage_of(stored) == Usage(cache_hits=1)
    fresh = stored.model_copy(update={"cached": False})
    assert usage_of(fresh) == Usage(calls=1, prompt_tokens=900, completion_tokens=80, cost_usd=0.5, latency_s=2.0)


async def test_readable_reply_is_the_value_with_its_usage():
    judge = ScriptedJudge({"yes_no": {"answer": "yes"}}, prompt_tokens=10, completion_tokens=3, cost_per_call=0.01)
    asked = await ask(judge, REQUEST, read_yes_no, reask=REASK)
    assert asked.ok and asked.value is True and asked.unscored_kind is None and asked.attempts == 1
    assert asked.usage == Usage(calls=1, prompt_tokens=10, completion_tokens=3, cost_usd=0.01)
    assert judge.requests[0].cache_tag == "t/v1" and judge.requests[0].schema_name == "yes_no"


async def test_unreadable_reply_is_re_asked_once_with_the_template_and_the_reply():
    judge = ScriptedJudge({"yes_no": [{"answer": "maybe"}, {"answer": "no"}]}, prompt_tokens=10,
                          completion_tokens=3)
    asked = await ask(judge, REQUEST, read_yes_no, reask=REASK)
    assert asked.ok and asked.value is False and asked.attempts == 2
    assert asked.usage.calls == 2 and asked.usage.prompt_tokens == 20
    second = judge.requests[1].messages
    assert second[:2] == REQUEST.messages
    assert second[2] == {"role": "assistant", "content": '{"answer": "maybe"}'}
    assert second[3] == {"role": "user", "content": "bad: answer is 'maybe', not yes/no (en)"}
    assert [len(r.messages) for r in asked.requests] == [2, 4]


async def test_still_unreadable_after_the_re_ask_is_unscored_with_the_readers_kind_and_feedback():
    judge = ScriptedJudge({"yes_no": [{"answer": "maybe"}, {"answer": "perhaps"}]})
    asked = await ask(judge, REQUEST, read_yes_no, reask=REASK)
    assert not asked.ok and asked.value is None and asked.attempts == 2 and len(judge.requests) == 2
    assert asked.unscored_kind == "parse_error" and asked.reason == "answer is 'perhaps', not yes/no"
    assert asked.feedback == "half-read" and asked.raw == '{"answer": "perhaps"}'


async def test_without_a_reask_writer_there_is_one_call():
    judge = ScriptedJudge({"yes_no": [{"answer": "maybe"}, {"answer": "yes"}]})
    asked = await ask(judge, REQUEST, read_yes_no)
    assert not asked.ok and asked.attempts == 1 and len(judge.requests) == 1


async def test_provider_error_is_not_re_asked_and_keeps_its_kind():
    judge = ScriptedJudge({"yes_no": [judge_error("HTTP 503 (after 4 attempt(s))"), {"answer": "yes"}]})
    asked = await ask(judge, REQUEST, read_yes_no, reask=REASK)
    assert asked.unscored_kind == "provider_error" and "HTTP 503" in asked.reason and len(judge.requests) == 1
    timed_out = ScriptedJudge({"yes_no": judge_error("timed out after 60s", kind="timeout")})
    assert (await ask(timed_out, REQUEST, read_yes_no)).unscored_kind == "timeout"


async def test_prompt_over_the_input_limit_is_input_too_long_without_a_call():
    judge = ScriptedJudge({"yes_no": {"answer": "yes"}})
    long_request = REQUEST.model_copy(update={"messages": [{"role": "user", "content": "退款" * 5000}]})
    asked = await ask(judge, long_request, read_yes_no, max_input_tokens=1000)
    assert asked.unscored_kind == "input_too_long" and "over the judge's input limit of 1000" in asked.reason
    assert judge.requests == [] and asked.usage == Usage()
    assert (await ask(judge, REQUEST, read_yes_no, max_input_tokens=1000)).ok


async def test_json_reader_reports_a_non_object_and_the_checks_problems():
    def check(data: dict) -> tuple[int | None, list[str]]:
        return (data["n"], []) if isinstance(data.get("n"), int) else (None, ["n is not an integer"])

    judge = ScriptedJudge({"yes_no": ["not json at all", {"n": "x"}, {"n": 3}]})
    first = await ask(judge, REQUEST, json_reader(check))
    assert first.unscored_kind == "invalid_output" and first.reason == "the reply is not a JSON object: 'not json at all'"
    second = await ask(judge, REQUEST, json_reader(check))
    assert second.problems == ["n is not an integer"]
    third = await ask(judge, REQUEST, json_reader(check))
    assert third.ok and third.value == 3


# ---------------------------------------------------------------- the drift bug: cached generation spend

def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "policy.md").write_text("# 退款\n退款在审核通过后 3 个工作日内原路退回。\n\n# 发票\n发票可以换开一次。\n",
                                    encoding="utf-8")
    return docs


async def test_generate_with_cached_replies_reports_zero_spend(tmp_path: Path):
    """A scripted judge that serves replies marked cached, carrying the tokens and cost an earlier run paid."""
    qa = JudgeResponse(text="{}", data={"question": "退款多久到账？", "answer": "3 个工作日"}, prompt_tokens=500,
                       completion_tokens=40, cost_usd=0.2, cached=True)
    item = {"feedback": "好", "score": 5}
    critique = JudgeResponse(text="{}", data={"groundedness": item, "standalone": item, "usefulness": item},
                             prompt_tokens=700, completion_tokens=90, cost_usd=0.3, cached=True)
    judge = ScriptedJudge({"qa_pair": lambda _: qa, "qa_critique": lambda _: critique})
    summary = await generate(_docs(tmp_path), tmp_path / "out.jsonl", judge=judge, n=2, progress=False)
    assert summary.kept == 2
    assert summary.usage == Usage(cache_hits=4)


async def test_a_second_generate_run_on_the_judge_cache_spends_nothing(tmp_path: Path):
    """Real client, loopback stub, persistent cache: the rerun is all cache hits, no calls, no tokens, no cost."""
    docs = _docs(tmp_path)
    with StubServer() as stub:
        config = JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(tmp_path / "cache.sqlite"),
                             timeout_s=5, max_retries=0, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
        client = JudgeClient(config)
        try:
            first = await generate(docs, tmp_path / "a.jsonl", judge=client, n=2, progress=False)
            second = await generate(docs, tmp_path / "b.jsonl", judge=client, n=2, progress=False)
        finally:
            await client.close()
        sent = stub.stats.calls["chat"]
    assert first.usage.calls == 4 == sent and first.usage.prompt_tokens > 0 and first.usage.cost_usd > 0
    assert second.usage == Usage(cache_hits=4)
    assert [o.status for o in second.outcomes] == [o.status for o in first.outcomes]
