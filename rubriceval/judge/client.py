"""Async judge client over any OpenAI-compatible chat endpoint (DashScope, OpenAI, vLLM, Ollama, llama.cpp).

One code path for hosted and embedded judges. It adds what the SDK alone does not give us: a bounded number of
concurrent calls, retries with exponential backoff that honour Retry-After, a per-call timeout, a persistent cache,
and counters for calls, tokens, cost and failures.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import openai
from pydantic import BaseModel

from rubriceval.judge.cache import CallCache, endpoint_identity, judge_call_key
from rubriceval.judge.config import JudgeConfig, default_cache_dir
from rubriceval.judge.options import CallOptions, TokenLogprob, cached_prompt_tokens, choices_grammar, read_logprobs
from rubriceval.judge.pricing import usd

ErrorKind = Literal["provider_error", "timeout", "invalid_output", "error"]


class JudgeResponse(BaseModel):
    text: str | None = None
    data: dict | None = None          # parsed JSON when a schema was requested and the output is valid JSON
    error: str | None = None
    error_kind: ErrorKind | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    cached: bool = False
    attempts: int = 0
    logprobs: list[TokenLogprob] | None = None     # when the call asked for them and the server returned them
    cached_prompt_tokens: int = 0                  # prompt tokens the server reused from its prefix cache

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class CallStats:
    """Live counters, read by the progress bar and stored with each run."""

    calls: int = 0                 # calls actually sent (including retries)
    requests: int = 0              # logical requests (a retried request counts once)
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    failures: Counter = field(default_factory=Counter)   # by kind: 429, 500, timeout, garbage…
    cached_prompt_tokens: int = 0  # of prompt_tokens, reused from the server's prefix cache (not processed)

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "requests": self.requests, "cache_hits": self.cache_hits,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cached_prompt_tokens": self.cached_prompt_tokens,
                "cost_usd": round(self.cost_usd, 6), "failures": dict(self.failures)}


def _retry_after_seconds(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


@dataclass
class _Connection:
    start_server: Callable[[], str] | None
    client: openai.AsyncOpenAI | None
    base_url: str | None
    starting: asyncio.Lock = field(default_factory=asyncio.Lock)
    start_error: Exception | None = None


class JudgeClient:
    """`await client.complete(messages, json_schema=…)` → JudgeResponse (never raises for provider trouble)."""

    def __init__(self, config: JudgeConfig, *, base_url: str | Callable[[], str] | None = None,
                 cache: CallCache | None = None, stats: CallStats | None = None, max_backoff_s: float = 30.0):
        """base_url may be a function that starts the server and returns its URL: it is called (once, in a
        thread) before the first call that is not served from the cache, so a fully cached run starts nothing."""
        self.config = config
        url = base_url or config.base_url
        if url is None:
            raise ValueError("JudgeClient needs a base_url; use rubriceval.local.backends.make_judge(), which starts the embedded judge")
        # One connection state, shared by shallow copies of this client (self-consistency's sampling variants).
        self._conn = _Connection(start_server=url if callable(url) else None,
                                 client=None if callable(url) else self._make_client(url),
                                 base_url=None if callable(url) else url)
        # The cache key's endpoint: the URL called when one is given, else the config's (a starter function stands
        # for the embedded judge or the configured server, whose port may change between starts).
        self.endpoint = endpoint_identity(url if isinstance(url, str) else config.base_url)
        self._semaphore = asyncio.Semaphore(config.concurrency)
        self.cache = cache if cache is not None else (
            CallCache(config.cache_path or default_cache_dir() / "judge_cache.sqlite") if config.cache else None)
        self.stats = stats or CallStats()
        self.max_backoff_s = max_backoff_s
        self._price_in, self._price_out = config.prices()

    def _make_client(self, url: str) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=url, api_key=self.config.api_key or "not-needed",
                                  timeout=self.config.timeout_s, max_retries=0)

    @property
    def base_url(self) -> str | None:
        return self._conn.base_url

    async def _connected(self) -> openai.AsyncOpenAI:
        conn = self._conn
        if conn.client is None:
            async with conn.starting:
                if conn.start_error is not None:
                    raise conn.start_error        # a server that failed to start fails the run once, not per call
                if conn.client is None:
                    # no client yet means __init__ got a starter function (a URL makes the client there)
                    assert conn.start_server is not None
                    try:
                        base_url = await asyncio.to_thread(conn.start_server)
                    except Exception as exc:
                        conn.start_error = exc
                        raise
                    conn.base_url = base_url
                    conn.client = self._make_client(base_url)
        return conn.client

    def key_for(self, messages: list[dict], json_schema: dict | None, cache_tag: str,
                options: CallOptions | None = None) -> str:
        return judge_call_key(self.config, messages, json_schema, cache_tag, options, endpoint=self.endpoint)

    async def complete(self, messages: list[dict], *, json_schema: dict | None = None, schema_name: str = "verdict",
                       cache_tag: str = "", use_cache: bool = True,
                       options: CallOptions | None = None) -> JudgeResponse:
        self.stats.requests += 1
        key = self.key_for(messages, json_schema, cache_tag, options)
        if self.cache is not None and use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return JudgeResponse(**hit, cached=True, attempts=0)
        response = await self._call_with_retries(messages, json_schema, schema_name, options)
        # Tokens were spent whenever the provider answered, even when the answer is unusable.
        self.stats.cached_prompt_tokens += response.cached_prompt_tokens
        self.stats.prompt_tokens += response.prompt_tokens
        self.stats.completion_tokens += response.completion_tokens
        self.stats.cost_usd += response.cost_usd
        if response.ok and self.cache is not None:
            self.cache.put(key, response.model_dump(exclude={"cached", "attempts"}))
        return response

    async def _call_with_retries(self, messages, json_schema, schema_name, options=None) -> JudgeResponse:
        attempts = 0
        last_error = ""
        last_kind: ErrorKind = "error"
        while attempts <= self.config.max_retries:
            attempts += 1
            async with self._semaphore:
                self.stats.calls += 1
                started = time.perf_counter()
                try:
                    result = await self._call_once(messages, json_schema, schema_name, options)
                    result.latency_s = time.perf_counter() - started
                    result.attempts = attempts
                    return result
                except openai.APITimeoutError:
                    last_error, last_kind, wait = f"timed out after {self.config.timeout_s:g}s", "timeout", None
                    self.stats.failures["timeout"] += 1
                except openai.APIStatusError as exc:
                    status = exc.status_code
                    last_error = f"HTTP {status}: {str(exc)[:200]}"
                    last_kind, wait = "provider_error", _retry_after_seconds(exc)
                    self.stats.failures[str(status)] += 1
                    if status in (400, 401, 403, 404, 422):   # retrying will not help
                        break
                except openai.APIConnectionError as exc:
                    last_error, last_kind, wait = f"connection error: {exc}", "provider_error", None
                    self.stats.failures["connection"] += 1
                except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
                    # A 200 with a body that is not a chat completion.
                    last_error, last_kind, wait = f"malformed response: {exc}", "provider_error", None
                    self.stats.failures["malformed"] += 1
            if attempts > self.config.max_retries:
                break
            backoff = min(self.max_backoff_s, 0.5 * 2 ** (attempts - 1)) * (0.5 + random.random())
            await asyncio.sleep(min(self.max_backoff_s, wait) if wait is not None else backoff)
        return JudgeResponse(error=f"{last_error} (after {attempts} attempt(s))", error_kind=last_kind,
                             attempts=attempts)

    async def _call_once(self, messages, json_schema, schema_name, options: CallOptions | None = None
                         ) -> JudgeResponse:
        body, json_schema = chat_body(self.config, messages, json_schema, schema_name, options)
        # A raw POST: the SDK still raises its status/timeout/connection errors, but skips walking the messages and
        # the JSON schema through its request transform and building typed response objects (~2.8 ms CPU per call,
        # the largest cost of ours at high concurrency; see docs/benchmarks.md). A non-JSON or non-completion body
        # raises ValueError/KeyError/IndexError/TypeError, reported as "malformed response".
        client = await self._connected()
        raw = await client.post("/chat/completions", body=body, cast_to=bytes)
        response = read_completion(self.config, json.loads(raw), json_schema, options,
                                   (self._price_in, self._price_out))
        if response.error_kind == "invalid_output":
            self.stats.failures["invalid_output"] += 1
        return response

    async def close(self) -> None:
        if self._conn.client is not None:
            await self._conn.client.close()


def chat_body(config: JudgeConfig, messages: list[dict], json_schema: dict | None, schema_name: str,
              options: CallOptions | None = None) -> tuple[dict[str, Any], dict | None]:
    """The chat-completions request body of one call, and the JSON schema its reply is read against (None when a
    grammar or nothing constrains the answer). The online call posts this body; a batch file line carries it as is."""
    body: dict[str, Any] = dict(model=config.model, messages=messages, temperature=config.temperature,
                                max_tokens=config.max_tokens)
    if config.seed is not None:
        body["seed"] = config.seed
    if options is not None:
        json_schema = _apply_options(body, options, json_schema, config.choice_constraint)
    if json_schema is not None and config.structured == "json_schema":
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": schema_name, "schema": json_schema, "strict": True}}
    return body, json_schema


def read_completion(config: JudgeConfig, completion: dict, json_schema: dict | None, options: CallOptions | None,
                    prices: tuple[float, float]) -> JudgeResponse:
    """A chat completion (the online reply, or a batch output line's body) → JudgeResponse, priced at `prices`
    (USD per 1M tokens in/out). A body that is not a chat completion raises ValueError/KeyError/IndexError/
    TypeError; structured output that is not a JSON object is an `invalid_output` error (never cached)."""
    choice = completion["choices"][0]
    text = choice["message"].get("content") or ""
    if not isinstance(text, str):
        raise TypeError(f"message content is {type(text).__name__}, not text")
    usage = completion.get("usage") or {}
    prompt_tokens = int(usage.get("prompt_tokens") or 0)
    completion_tokens = int(usage.get("completion_tokens") or 0)
    data = None
    if json_schema is not None:
        data = _loads_json_object(text, required=json_schema.get("required", ()))
    cost = usd(prompt_tokens, completion_tokens, prices)
    logprobs = read_logprobs(choice) if options is not None and options.logprobs else None
    cached = cached_prompt_tokens(completion)
    if data is None and json_schema is not None and config.structured == "json_schema":
        # Reported (the verdict becomes unscored, not guessed) and, being an error, never cached.
        return JudgeResponse(text=text, error="structured output is not a JSON object "
                             f"(finish_reason={choice.get('finish_reason')})", error_kind="invalid_output",
                             prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost_usd=cost,
                             logprobs=logprobs, cached_prompt_tokens=cached)
    return JudgeResponse(text=text, data=data, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                         cost_usd=cost, logprobs=logprobs, cached_prompt_tokens=cached)


def _apply_options(kwargs: dict[str, Any], options: CallOptions, json_schema: dict | None,
                   constraint: str) -> dict | None:
    """Put per-call options in the request body; returns the JSON schema still to send (None when a grammar
    constrains the answer instead: the reply is then the bare choice, not JSON)."""
    if options.max_tokens is not None:
        kwargs["max_tokens"] = options.max_tokens
    if options.logprobs:
        kwargs["logprobs"] = True
        if options.top_logprobs is not None:
            kwargs["top_logprobs"] = options.top_logprobs
    if options.choices and constraint == "grammar":
        kwargs["grammar"] = choices_grammar(options.choices)
        return None
    if options.choices and constraint == "none":
        return None
    return json_schema


def _loads_json_object(text: str, required: Iterable[str] = ()) -> dict | None:
    """The JSON object in a reply, tolerating code fences and text around it; None when there is none.

    Objects lacking a `required` key are skipped: in a truncated reply they are nested fragments, not the answer.
    """
    required = set(required)
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`")
        if stripped.lower().startswith("json"):
            stripped = stripped[4:]
    try:
        value = json.loads(stripped)
        return value if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    start = stripped.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(stripped[start:])
            if isinstance(value, dict) and required <= value.keys():
                return value
        except json.JSONDecodeError:
            pass
        start = stripped.find("{", start + 1)
    return None
