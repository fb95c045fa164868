"""What the metrics need from a judge and an embedder — structural, so tests pass fakes.

`rubriceval.judge.client.JudgeClient` satisfies `Judge`; `rubriceval.embed.client.EmbeddingClient`
satisfies `Embedder`.
"""
from __future__ import annotations

from typing import Protocol

from rubriceval.judge.ask import Judge
from rubriceval.judge.ask import Reply as JudgeReply

__all__ = ["Embedder", "EmbeddingReply", "Judge", "JudgeReply"]


class EmbeddingReply(Protocol):
    vectors: list[list[float]] | None
    error: str | None


class Embedder(Protocol):
    async def embed(self, texts: list[str]) -> EmbeddingReply: ...
