"""Test doubles for the metric calls: a scripted judge and a deterministic embedder (no network, no model).

    judge = ScriptedJudge({
        "extract_statements": {"answer_statements": ["张伟是教研部的。"], "ground_truth_statements": [...]},
        "classify_statements": fill_schema(default=True, overrides={"answer_statements.s1.in_ground_truth": False}),
    })

A script entry is keyed by the call kind (the `schema_name` the metrics send) and is one of: a dict (the JSON
reply), a str (raw reply text), a JudgeResponse (e.g. an error), a callable(messages, json_schema) returning
one of those, or a list of them consumed one per call.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from rubriceval.judge.client import JudgeResponse
from rubriceval.judge.tokens import estimate_messages_tokens, estimate_tokens

Reply = dict | str | JudgeResponse
ScriptEntry = Reply | list | Callable[[list[dict], dict | None], Reply]


class RecordedRequest(BaseModel):
    messages: list[dict]
    json_schema: dict | None
    schema_name: str
    cache_tag: str


def fill_schema(default: bool = True, overrides: Mapping[str, bool] | None = None,
                reason: str = "ok") -> Callable[[list[dict], dict | None], dict]:
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

    def reply(messages: list[dict], json_schema: dict | None) -> dict:
        if json_schema is None:
            raise ValueError("fill_schema needs the request's JSON schema")
        return fill(json_schema, "")
    return reply


class ScriptedJudge:
    """Replies from a script; records every request; reports prompt tokens like a provider would (estimated
    with rubriceval.judge.tokens, the project's dry-run estimator)."""

    def __init__(self, script: Mapping[str, ScriptEntry], *, cost_per_call: float = 0.0):
        self.script = {k: (list(v) if isinstance(v, list) else v) for k, v in script.items()}
        self.requests: list[RecordedRequest] = []
        self.cost_per_call = cost_per_call

    async def complete(self, messages: list[dict], *, json_schema: dict | None = None, schema_name: str = "verdict",
                       cache_tag: str = "", use_cache: bool = True) -> JudgeResponse:
        self.requests.append(RecordedRequest(messages=messages, json_schema=json_schema, schema_name=schema_name,
                                             cache_tag=cache_tag))
        if schema_name not in self.script:
            raise AssertionError(f"the script has no reply for {schema_name!r}")
        entry = self.script[schema_name]
        if isinstance(entry, list):
            if not entry:
                raise AssertionError(f"the script ran out of replies for {schema_name!r}")
            entry = entry.pop(0)
        if callable(entry):
            entry = entry(messages, json_schema)
        if isinstance(entry, JudgeResponse):
            return entry
        text = entry if isinstance(entry, str) else json.dumps(entry, ensure_ascii=False)
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        return JudgeResponse(text=text, data=data if isinstance(data, dict) else None,
                             prompt_tokens=estimate_messages_tokens(messages),
                             completion_tokens=estimate_tokens(text), cost_usd=self.cost_per_call)

    def calls(self, schema_name: str | None = None) -> list[RecordedRequest]:
        return [r for r in self.requests if schema_name is None or r.schema_name == schema_name]


def judge_error(message: str, kind: str = "provider_error") -> JudgeResponse:
    return JudgeResponse(error=message, error_kind=kind)


class FakeEmbeddingResponse(BaseModel):
    vectors: list[list[float]] | None = None
    error: str | None = None
    error_kind: str | None = None
    cached: bool = False


_GRAM = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+")


class CharBigramEmbedder:
    """Deterministic bag-of-bigrams vectors (CJK characters / lower-cased words), hashed into `dims`.

    Texts sharing wording get high cosine, unrelated texts near 0 — enough to test the arithmetic end to end.
    """

    def __init__(self, dims: int = 256, fail_with: str | None = None):
        self.dims = dims
        self.fail_with = fail_with
        self.calls: list[list[str]] = []

    def vector(self, text: str) -> list[float]:
        units = _GRAM.findall(text.lower())
        grams = units + [a + b for a, b in zip(units, units[1:])]
        vec = [0.0] * self.dims
        for gram in grams:
            vec[int(hashlib.md5(gram.encode()).hexdigest(), 16) % self.dims] += 1.0
        norm = math.sqrt(sum(v * v for v in vec))
        return [v / norm for v in vec] if norm else vec

    async def embed(self, texts: list[str]) -> FakeEmbeddingResponse:
        self.calls.append(list(texts))
        if self.fail_with:
            return FakeEmbeddingResponse(error=self.fail_with, error_kind="provider_error")
        return FakeEmbeddingResponse(vectors=[self.vector(t) for t in texts])
