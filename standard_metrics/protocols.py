"""What the metrics need from a judge and an embedder — structural, so tests pass fakes.

`rubriceval.judge.client.JudgeClient` satisfies `Judge`; `rubriceval.embed.client.EmbeddingClient`
satisfies `Embedder`.
"""
from __future__ import annotations

from typing import Protocol


class JudgeReply(Protocol):
    text: str | None
    data: dict | None
    error: str | None
    error_kind: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cost_usd: float
    cached: bool


class Judge(Protocol):
    async def complete(self, messages: list[dict], *, json_schema: dict | None = None,
                       schema_name: str = "verdict", cache_tag: str = "",
                       use_cache: bool = True) -> JudgeReply: ...


class EmbeddingReply(Protocol):
    vectors: list[list[float]] | None
    error: str | None


class Embedder(Protocol):
    async def embed(self, texts: list[str]) -> EmbeddingReply: ...
