"""Test double for the metrics' embedding request: a deterministic embedder (no network, no model).

The scripted judge for the metric calls is the project's one test judge, `rubriceval.testing.scripted_judge`.
"""
from __future__ import annotations

import hashlib
import math
import re

from pydantic import BaseModel


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
