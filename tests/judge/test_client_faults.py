"""JudgeClient against a real loopback server that misbehaves on purpose (rubriceval.testing.stub_server).

Each test scripts the exact faults of the next calls, then checks what the client returned, what it counted, and
what the server actually saw (calls, timings, concurrency) — so retries, waits and cache hits are measured, not
assumed. The last section checks the stub itself (schema-valid answers, embeddings, seeded faults, CLI).
"""
from __future__ import annotations

import asyncio
import http.client
import json
import math
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Literal

import openai
import pytest
from pydantic import BaseModel, Field

from rubriceval import JudgeConfig
from rubriceval.judge.client import JudgeClient
from rubriceval.testing import (
    DEFAULT_TEXT,
    StubServer,
    fetch_stats,
    instance_for_schema,
    rough_token_count,
)

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"feedback": {"type": "string"}, "score": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["feedback", "score"],
    "additionalProperties": False,
}


def ask(question: str = "Did the agent give the reimbursement link?") -> list[dict]:
    return [{"role": "system", "content": "You are a strict customer-service judge."},
            {"role": "user", "content": question}]


@pytest.fixture
async def make_client(judge_config: JudgeConfig):
    """JudgeClient factory with a tiny backoff (tests stay fast); closes every client it made."""
    clients: list[JudgeClient] = []

    def make(*, max_backoff_s: float = 0.01, **config_changes) -> JudgeClient:
        client = JudgeClient(judge_config.model_copy(update=config_changes), max_backoff_s=max_backoff_s)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()
        if client.cache is not None:
            client.cache.close()


# --------------------------------------------------------------------------------------------------------------
# Retries, waits and timeouts
# --------------------------------------------------------------------------------------------------------------

async def test_retry_after_is_honoured(stub_server: StubServer, make_client):
    # Without the header the first backoff is 0.5 s × [0.5, 1.5) ≤ 0.75 s, so a ≥ 0.8 s gap proves it was read.
    stub_server.retry_after_s = 0.8
    stub_server.script(["429", "ok"])
    client = make_client(max_backoff_s=5.0)

    started = time.perf_counter()
    response = await client.complete(ask())
    elapsed = time.perf_counter() - started

    assert response.ok and response.attempts == 2
    rejected, served = stub_server.stats.requests
    assert (rejected.status, served.status) == (429, 200)
    assert served.started - rejected.finished >= 0.79
    assert 0.8 <= elapsed < 3.0
    assert client.stats.failures == {"429": 1}
    assert client.stats.calls == 2 and client.stats.requests == 1


async def test_retry_after_is_capped_by_max_backoff(stub_server: StubServer, make_client):
    stub_server.retry_after_s = 30
    stub_server.script(["429", "ok"])
    client = make_client(max_backoff_s=0.05)

    started = time.perf_counter()
    response = await client.complete(ask())

    assert response.ok and response.attempts == 2
    assert time.perf_counter() - started < 5.0       # not the 30 s the header asked for


async def test_server_errors_are_retried_then_succeed(stub_server: StubServer, make_client):
    stub_server.script(["500", "503", "ok"])
    client = make_client()

    response = await client.complete(ask(), json_schema=VERDICT_SCHEMA)

    assert response.ok and response.attempts == 3
    assert 1 <= response.data["score"] <= 5
    assert stub_server.stats.calls["chat"] == 3
    assert stub_server.stats.faults == {"500": 1, "503": 1}
    assert client.stats.failures == {"500": 1, "503": 1}


async def test_timeout_is_reported_after_retries(stub_server: StubServer, make_client):
    stub_server.hang_s = 10.0
    stub_server.script(["timeout"] * 3)
    client = make_client(timeout_s=0.25, max_retries=2)

    started = time.perf_counter()
    response = await client.complete(ask())
    elapsed = time.perf_counter() - started

    assert not response.ok and response.error_kind == "timeout" and response.attempts == 3
    assert stub_server.stats.calls["chat"] == 3 and stub_server.stats.faults == {"timeout": 3}
    assert client.stats.failures == {"timeout": 3}
    assert 0.7 <= elapsed < 4.0           # three 0.25 s timeouts, not the 10 s hang
    assert len(client.cache) == 0


async def test_timeout_then_success(stub_server: StubServer, make_client):
    stub_server.hang_s = 5.0
    stub_server.script(["timeout", "ok"])
    client = make_client(timeout_s=0.25)

    response = await client.complete(ask())

    assert response.ok and response.attempts == 2 and response.text == DEFAULT_TEXT


@pytest.mark.parametrize("fault, counted_as", [
    ("malformed", "malformed"),     # 200 with cut-off JSON
    ("html", "malformed"),          # 200 with a proxy's HTML page
    ("no_choices", "malformed"),    # 200 JSON without "choices"
    ("disconnect", "connection"),   # connection closed without a reply
])
async def test_broken_replies_are_retried_then_reported(stub_server: StubServer, make_client, fault, counted_as):
    stub_server.script([fault] * 4 + ["ok"])
    client = make_client(max_retries=3)

    failed = await client.complete(ask(), json_schema=VERDICT_SCHEMA)

    assert not failed.ok and failed.error_kind == "provider_error" and failed.attempts == 4
    assert failed.data is None
    assert client.stats.failures == {counted_as: 4}
    assert stub_server.stats.calls["chat"] == 4
    # The error was not cached: asking again reaches the server, which now answers.
    recovered = await client.complete(ask(), json_schema=VERDICT_SCHEMA)
    assert recovered.ok and not recovered.cached and recovered.data is not None
    assert stub_server.stats.calls["chat"] == 5


@pytest.mark.parametrize("fault", ["garbage", "truncated"])
async def test_unparseable_content_yields_no_data_but_keeps_the_text(stub_server: StubServer, make_client, fault):
    stub_server.script([fault])
    client = make_client()

    response = await client.complete(ask(), json_schema=VERDICT_SCHEMA)
    complete = await client.complete(ask(), json_schema=VERDICT_SCHEMA, use_cache=False)

    assert response.data is None
    assert response.text                  # the raw output stays available for the audit view
    assert complete.data is not None
    if fault == "truncated":
        assert complete.text.startswith(response.text) and len(response.text) < len(complete.text)


@pytest.mark.parametrize("fault", ["garbage", "truncated"])
async def test_unparseable_structured_output_is_an_uncached_invalid_output(stub_server: StubServer, make_client,
                                                                          fault):
    stub_server.script([fault, "ok"])
    client = make_client()

    first = await client.complete(ask(), json_schema=VERDICT_SCHEMA)
    assert not first.ok and first.error_kind == "invalid_output" and first.text
    second = await client.complete(ask(), json_schema=VERDICT_SCHEMA)
    assert second.ok and not second.cached and second.data is not None


async def test_truncated_nested_reply_does_not_yield_an_inner_object(stub_server: StubServer, make_client):
    claims = [{"text": f"claim {i}", "supported": i % 2 == 0} for i in range(4)]
    stub_server.responder = lambda request: {"verdict": "有效回答", "claims": claims, "score": 4}
    stub_server.script(["truncated"])
    schema = {"type": "object", "required": ["verdict", "claims", "score"], "properties": {
        "verdict": {"type": "string"}, "claims": {"type": "array", "items": {"type": "object"}},
        "score": {"type": "integer"}}}
    client = make_client()

    response = await client.complete(ask(), json_schema=schema)

    assert '"supported": true}' in response.text          # the cut left at least one complete claim behind
    assert response.data is None


@pytest.mark.parametrize("status", ["400", "401", "403", "404", "422"])
async def test_client_errors_are_not_retried(stub_server: StubServer, make_client, status):
    stub_server.script([status, "ok"])
    client = make_client()

    response = await client.complete(ask())

    assert not response.ok and response.error_kind == "provider_error" and response.attempts == 1
    assert f"HTTP {status}" in response.error
    assert stub_server.stats.calls["chat"] == 1
    assert stub_server.pending_script() == ["ok"]


async def test_wrong_api_key_is_not_retried(stub_server: StubServer, make_client):
    stub_server.require_api_key = "sk-right"

    rejected = await make_client(api_key="sk-wrong").complete(ask())
    accepted = await make_client(api_key="sk-right").complete(ask())

    assert rejected.error_kind == "provider_error" and "HTTP 401" in rejected.error and rejected.attempts == 1
    assert accepted.ok
    assert [r.status for r in stub_server.stats.requests] == [401, 200]


# --------------------------------------------------------------------------------------------------------------
# Cache
# --------------------------------------------------------------------------------------------------------------

async def test_identical_call_is_served_from_cache(stub_server: StubServer, make_client):
    client = make_client()

    first = await client.complete(ask(), json_schema=VERDICT_SCHEMA, cache_tag="reimbursement@1")
    second = await client.complete(ask(), json_schema=VERDICT_SCHEMA, cache_tag="reimbursement@1")

    assert not first.cached and second.cached
    assert (second.text, second.data) == (first.text, first.data)
    assert stub_server.stats.calls["chat"] == 1
    assert client.stats.cache_hits == 1 and client.stats.calls == 1 and client.stats.requests == 2
    # A resumed run (a new client on the same cache file) makes no call either.
    resumed = await make_client().complete(ask(), json_schema=VERDICT_SCHEMA, cache_tag="reimbursement@1")
    assert resumed.cached and resumed.data == first.data
    assert stub_server.stats.calls["chat"] == 1 and stub_server.stats.repeated() == {}


async def test_changed_cache_tag_misses_the_cache(stub_server: StubServer, make_client):
    client = make_client()

    await client.complete(ask(), json_schema=VERDICT_SCHEMA, cache_tag="reimbursement@1#a1")
    changed = await client.complete(ask(), json_schema=VERDICT_SCHEMA, cache_tag="reimbursement@2#b2")

    assert not changed.cached
    assert stub_server.stats.calls["chat"] == 2 and client.stats.cache_hits == 0


async def test_errors_are_not_cached(stub_server: StubServer, make_client):
    stub_server.script(["500"] * 4)
    client = make_client(max_retries=3)

    failed = await client.complete(ask())
    assert not failed.ok and len(client.cache) == 0
    retried = await client.complete(ask())
    again = await client.complete(ask())

    assert retried.ok and not retried.cached
    assert again.cached
    assert stub_server.stats.calls["chat"] == 5


# --------------------------------------------------------------------------------------------------------------
# Concurrency, tokens, cost
# --------------------------------------------------------------------------------------------------------------

async def test_concurrency_bound_is_respected(stub_server: StubServer, make_client):
    stub_server.latency_s = 0.05
    client = make_client(concurrency=3)

    responses = await asyncio.gather(*(client.complete(ask(f"question {i}")) for i in range(12)))

    assert all(r.ok for r in responses)
    # Counted by the server from request read to reply: 3 proves the calls overlapped and the bound held.
    assert stub_server.stats.max_in_flight == 3


async def test_token_usage_and_cost_are_counted(stub_server: StubServer, make_client):
    client = make_client(price_in_per_mtok=1000.0, price_out_per_mtok=4000.0)
    prompts = [ask("How do I get a refund for order 123?"), ask("我的订单什么时候到？请尽快处理退款。"),
               ask("Explain the escalation policy.")]
    stub_server.script(["500"])                        # a failed attempt must not add tokens or cost

    responses = [await client.complete(p, json_schema=VERDICT_SCHEMA) for p in prompts]
    cached = await client.complete(prompts[0], json_schema=VERDICT_SCHEMA)

    served = [r for r in stub_server.stats.requests if r.status == 200]
    assert [r.prompt_tokens for r in responses] == [s.prompt_tokens for s in served]
    assert [r.completion_tokens for r in responses] == [s.completion_tokens for s in served]
    assert all(r.prompt_tokens > 0 and r.completion_tokens > 0 for r in responses)
    for r in responses:
        assert r.cost_usd == pytest.approx((r.prompt_tokens * 1000 + r.completion_tokens * 4000) / 1e6)
    assert cached.cached
    assert client.stats.prompt_tokens == sum(r.prompt_tokens for r in responses)
    assert client.stats.completion_tokens == sum(r.completion_tokens for r in responses)
    assert client.stats.cost_usd == pytest.approx(sum(r.cost_usd for r in responses))


# --------------------------------------------------------------------------------------------------------------
# The stub itself
# --------------------------------------------------------------------------------------------------------------

class _Claim(BaseModel):
    text: str = Field(min_length=3, max_length=40)
    supported: bool
    confidence: float = Field(ge=0.0, le=1.0)


class _Extraction(BaseModel):
    verdict: Literal["有效回答", "无效回答"]
    score: int = Field(ge=1, le=5)
    claims: list[_Claim] = Field(min_length=1, max_length=4)
    tags: list[str] = Field(default_factory=list, max_length=2)
    note: str | None
    weight: float = Field(gt=0, lt=2)


def test_schema_instances_validate_against_the_model_that_made_the_schema():
    schema = _Extraction.model_json_schema()          # $defs/$ref, anyOf with null, enum, bounds
    scores = set()
    for seed in range(30):
        value = instance_for_schema(schema, random.Random(seed), language="zh")
        parsed = _Extraction.model_validate(value)
        assert parsed.note is not None                  # Optional fields get a real value
        scores.add(parsed.score)
    assert len(scores) >= 3                             # scores vary with the seed, within 1–5


async def test_answers_follow_the_requested_schema_and_the_responder(stub_server: StubServer, make_client):
    client = make_client()
    structured = await client.complete(ask("回答是否有效？"), json_schema=_Extraction.model_json_schema())
    assert _Extraction.model_validate(structured.data)
    assert "桩服务器" in structured.data["claims"][0]["text"]   # Chinese prompt → Chinese filler

    stub_server.responder = lambda request: {"feedback": "缺少报销链接", "score": 2}
    scripted = await client.complete(ask("other question"), json_schema=VERDICT_SCHEMA)
    assert scripted.data == {"feedback": "缺少报销链接", "score": 2}

    stub_server.responder = lambda request: "Feedback: fine [RESULT] 4"
    text = await client.complete(ask("a third question"))
    assert text.text == "Feedback: fine [RESULT] 4"


async def test_unsatisfiable_schema_is_a_400(make_client):
    client = make_client()
    impossible = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 5, "maximum": 1}},
                  "required": ["score"]}

    response = await client.complete(ask(), json_schema=impossible)

    assert response.error_kind == "provider_error" and "HTTP 400" in response.error and response.attempts == 1


def test_token_counts_are_rough_but_deterministic():
    assert rough_token_count("hello world!") == 3
    assert rough_token_count("我的订单") == 3            # 4 CJK characters / 1.5, rounded up
    assert rough_token_count("") == 0


# Unless told otherwise the SDK asks for base64 and decodes it; "float" asks for plain JSON numbers.
@pytest.mark.parametrize("encoding_format", [None, "float"])
async def test_embeddings_are_deterministic_unit_vectors(stub_server: StubServer, encoding_format):
    client = openai.AsyncOpenAI(base_url=stub_server.base_url, api_key="x", max_retries=0)
    texts = ["退款需要二级经理审批", "退款需要二级经理审批", "退款需要经理审批", "The weather is sunny today"]
    extra = {"encoding_format": encoding_format} if encoding_format else {}
    try:
        result = await client.embeddings.create(model="stub", input=texts, **extra)
    finally:
        await client.close()

    vectors = [d.embedding for d in result.data]
    assert all(len(v) == 64 for v in vectors)
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-5) for v in vectors)
    assert vectors[0] == vectors[1]

    def cosine(a, b):
        return sum(x * y for x, y in zip(a, b))

    assert cosine(vectors[0], vectors[2]) > cosine(vectors[0], vectors[3]) + 0.3
    assert result.usage.prompt_tokens > 0 and stub_server.stats.calls["embeddings"] == 1
    assert stub_server.stats.requests[0].body["encoding_format"] == (encoding_format or "base64")


def _post_chat(base_url: str, question: str) -> int:
    body = json.dumps({"model": "stub", "messages": [{"role": "user", "content": question}]}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_random_faults_are_seeded_and_follow_the_rates():
    def fault_sequence(seed: int) -> list[str]:
        with StubServer(fault_rates={"500": 0.3, "429": 0.1}, seed=seed) as stub:
            connection = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)   # keep-alive: fast
            for i in range(200):
                body = json.dumps({"model": "stub", "messages": [{"role": "user", "content": f"q{i}"}]})
                connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
                connection.getresponse().read()
            connection.close()
            return [r.fault for r in stub.stats.requests]

    first, same, other = fault_sequence(7), fault_sequence(7), fault_sequence(8)
    assert first == same and first != other
    assert 0.2 < first.count("500") / 200 < 0.4
    assert 0.03 < first.count("429") / 200 < 0.18


def test_unknown_fault_names_are_rejected():
    with pytest.raises(ValueError, match="unknown fault"):
        StubServer(fault_rates={"timout": 0.1})
    with pytest.raises(ValueError, match="sum to"):
        StubServer(fault_rates={"500": 0.7, "429": 0.6})


def test_cli_serves_until_terminated(tmp_path: Path):
    log_file = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "rubriceval.testing.stub_server", "--port", "0", "--log-file", str(log_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        line = process.stdout.readline()
        assert line.startswith("stub server listening on http://127.0.0.1:"), process.stderr.read()
        base_url = line.split()[-1]
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
            assert json.load(response)["data"][0]["id"] == "stub"
        urllib.request.urlopen(urllib.request.Request(
            base_url.removesuffix("/v1") + "/_stub/script", data=json.dumps({"faults": ["500"]}).encode(),
            headers={"Content-Type": "application/json"}), timeout=5).close()
        assert [_post_chat(base_url, "q"), _post_chat(base_url, "q")] == [500, 200]

        stats = fetch_stats(base_url)
        assert stats.calls["chat"] == 2 and stats.faults == {"500": 1} and len(stats.repeated()) == 0
        logged = [json.loads(line) for line in log_file.read_text(encoding="utf-8").splitlines()]
        assert [r["status"] for r in logged if r["endpoint"] == "chat"] == [500, 200]
    finally:
        process.terminate()
        assert process.wait(timeout=5) == 0
