"""The one scripted judge for tests: `JudgeClient`'s `complete` interface, replies from a script, no network.

    ScriptedJudge(['{"feedback": "ok", "score": 4}', "no score here"])       # replies in call order
    ScriptedJudge(lambda request: reply_for(request[-1]["content"]))         # computed per request
    ScriptedJudge({"extract_statements": {...}, "judge_contexts": fill_schema(True)})   # by schema_name

A script is a list (one entry per call, in order), a callable, or a mapping from the call's `schema_name` to an
entry. An entry is a reply — a dict (sent as JSON text), a str (raw reply text), a `JudgeResponse` (e.g.
`judge_error(...)` or a cached reply) — or a callable(request) returning one, or (in a mapping) a list of them
consumed one per call. A callable gets the `RecordedRequest`, which reads like the messages list
(`request[-1]["content"]`) and has `.messages`, `.json_schema`, `.schema_name`, `.cache_tag`.

Like the real client, `data` is decoded only when the call asked for a JSON schema. Token counts are fixed when
given (`prompt_tokens=100`), else estimated with `rubriceval.judge.tokens` (the dry-run estimator).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rubriceval.judge.client import CallStats, ErrorKind, JudgeResponse
from rubriceval.judge.config import JudgeConfig
from rubriceval.judge.tokens import estimate_messages_tokens, estimate_tokens

__all__ = ["RecordedRequest", "ScriptedJudge", "fill_schema", "judge_error", "yes_no_reply"]

Reply = dict | str | JudgeResponse
Entry = Reply | Callable[["RecordedRequest"], Reply]


@dataclass(frozen=True)
class RecordedRequest(Sequence):
    """One call as the judge received it; indexes and iterates like its messages list."""

    messages: list[dict]
    json_schema: dict | None
    schema_name: str
    cache_tag: str
    options: Any = None          # the call's CallOptions (checklist questions), when it had any

    def __getitem__(self, index):
        return self.messages[index]

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[dict]:
        return iter(self.messages)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return self.messages == other
        if isinstance(other, RecordedRequest):
            return (self.messages, self.json_schema, self.schema_name, self.cache_tag) == (
                other.messages, other.json_schema, other.schema_name, other.cache_tag)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal by value, so unhashable (the data model's rule for __eq__)


class ScriptedJudge:
    """Replies from a script; records every request; counts calls in `stats` like `JudgeClient`."""

    def __init__(self, script: Sequence[Entry] | Mapping[str, Entry | list[Entry]] | Callable[..., Reply], *,
                 structured: Literal["json_schema", "text"] = "json_schema", prompt_tokens: int | None = None,
                 completion_tokens: int | None = None, cost_per_call: float = 0.0, **config: Any):
        self.config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="scripted", structured=structured,
                                  cache=False, **config)
        self.stats = CallStats()
        self.script = script
        self.requests: list[RecordedRequest] = []
        self.prompt_tokens, self.completion_tokens = prompt_tokens, completion_tokens
        self.cost_per_call = cost_per_call
        self._queues: dict[str, list[Entry]] = {}

    def _entry(self, request: RecordedRequest) -> Entry:
        script = self.script
        if isinstance(script, Mapping):
            if request.schema_name not in script:
                raise AssertionError(f"the script has no reply for {request.schema_name!r}")
            entry = script[request.schema_name]
            if not isinstance(entry, list):
                return entry
            queue = self._queues.setdefault(request.schema_name, list(entry))
            if not queue:
                raise AssertionError(f"the script ran out of replies for {request.schema_name!r}")
            return queue.pop(0)
        if callable(script):
            return script
        if len(self.requests) > len(script):
            raise AssertionError(f"the script has {len(script)} replies; call {len(self.requests)} has none")
        return script[len(self.requests) - 1]

    async def complete(self, messages: list[dict], *, json_schema: dict | None = None, schema_name: str = "verdict",
                       cache_tag: str = "", use_cache: bool = True, options: Any = None) -> JudgeResponse:
        request = RecordedRequest(messages=messages, json_schema=json_schema, schema_name=schema_name,
                                  cache_tag=cache_tag, options=options)
        self.requests.append(request)
        self.stats.requests += 1
        entry = self._entry(request)
        reply = entry(request) if callable(entry) else entry
        if isinstance(reply, JudgeResponse):
            self.stats.cache_hits += reply.cached
            self.stats.calls += not reply.cached
            return reply
        self.stats.calls += 1
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        response = JudgeResponse(text=text, data=_json_object(text) if json_schema is not None else None,
                                 prompt_tokens=self._count(self.prompt_tokens, estimate_messages_tokens(messages)),
                                 completion_tokens=self._count(self.completion_tokens, estimate_tokens(text)),
                                 cost_usd=self.cost_per_call)
        self.stats.prompt_tokens += response.prompt_tokens
        self.stats.completion_tokens += response.completion_tokens
        self.stats.cost_usd += response.cost_usd
        return response

    @staticmethod
    def _count(fixed: int | None, estimated: int) -> int:
        return estimated if fixed is None else fixed

    def calls(self, schema_name: str | None = None) -> list[RecordedRequest]:
        return [r for r in self.requests if schema_name is None or r.schema_name == schema_name]

    async def close(self) -> None:
        pass


def _json_object(text: str) -> dict | None:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def judge_error(message: str, kind: ErrorKind = "provider_error") -> JudgeResponse:
    return JudgeResponse(error=message, error_kind=kind)


def yes_no_reply(p_yes: float | None, label: str | None = None) -> JudgeResponse:
    """A yes/no answer as a logprobs-returning server sends it: the label (default: the likelier one) and, unless
    `p_yes` is None (a server without logprobs), top logprobs at the answer token with P(yes) : P(no) = p : 1−p."""
    import math

    from rubriceval.judge.options import TokenLogprob

    label = label or ("yes" if (p_yes or 0) >= 0.5 else "no")
    logprobs = None
    if p_yes is not None:
        top = {"yes": math.log(max(p_yes, 1e-9) * 0.9), "no": math.log(max(1 - p_yes, 1e-9) * 0.9), "是": -6.0}
        logprobs = [TokenLogprob(token=label, logprob=top[label], top=top)]
    return JudgeResponse(text=label, logprobs=logprobs, prompt_tokens=50, completion_tokens=1)


def fill_schema(default: bool = True, overrides: Mapping[str, bool] | None = None,
                reason: str = "ok") -> Callable[[RecordedRequest], dict]:
    """A reply that satisfies any verdict schema: every boolean is `default` unless its dotted path (e.g.
    "contexts.c2.relevant") is in `overrides`; every string is `reason`; arrays are empty."""
    overrides = dict(overrides or {})

    def fill(schema: dict, path: str) -> Any:
        kind = schema.get("type")
        if kind == "object":
            return {k: fill(sub, f"{path}.{k}" if path else k) for k, sub in schema.get("properties", {}).items()}
        if kind == "boolean":
            return overrides.get(path, default)
        if kind == "array":
            return []
        if kind == "string":
            return schema["enum"][0] if "enum" in schema else reason
        raise ValueError(f"cannot fill schema type {kind!r} at {path}")

    def reply(request: RecordedRequest) -> dict:
        if request.json_schema is None:
            raise ValueError("fill_schema needs the request's JSON schema")
        return fill(request.json_schema, "")
    return reply
