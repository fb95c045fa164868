"""The judge cache key names the endpoint: a stub and a real judge serving the same model name never share replies;
the embedded judge's identity is its model file, stable across restarts (a new port each time). Rows record when
they were written, and `rubriceval cache prune` drops old ones."""
from __future__ import annotations

import sqlite3
import time

from rubriceval import JudgeConfig
from rubriceval.cli import main
from rubriceval.judge.cache import CallCache, endpoint_identity, judge_call_key
from rubriceval.judge.client import JudgeClient
from rubriceval.local.model_files import MODEL_FILENAME, embedded_judge_identity
from rubriceval.testing.stub_server import StubServer

MESSAGES = [{"role": "user", "content": "judge this answer"}]


async def test_same_model_on_two_endpoints_does_not_share_replies(tmp_path):
    cache_path = str(tmp_path / "cache.sqlite")
    with StubServer(default_text="Feedback: first [RESULT] 2") as first, \
            StubServer(default_text="Feedback: second [RESULT] 5") as second:
        clients = [JudgeClient(JudgeConfig(base_url=stub.base_url, model="qwen-max", cache_path=cache_path,
                                           structured="text", max_retries=0)) for stub in (first, second)]
        replies = [await client.complete(MESSAGES) for client in clients]
        assert [r.cached for r in replies] == [False, False]
        assert "first" in replies[0].text and "second" in replies[1].text
        assert first.stats.calls["chat"] == second.stats.calls["chat"] == 1
        again = [await client.complete(MESSAGES) for client in clients]      # each endpoint's own entry
        assert [r.cached for r in again] == [True, True] and "second" in again[1].text
        for client in clients:
            await client.close()


def test_base_url_is_normalised():
    assert endpoint_identity("HTTP://Judge.Example:8000/v1/") == "http://judge.example:8000/v1"
    assert endpoint_identity("http://judge.example:8000/v1?x=1") == "http://judge.example:8000/v1"
    assert endpoint_identity("http://judge.example:8001/v1") != endpoint_identity("http://judge.example:8000/v1")
    assert endpoint_identity("http://judge.example/v2") != endpoint_identity("http://judge.example/v1")


def test_embedded_judge_key_is_stable_across_restarts(tmp_path):
    identity = embedded_judge_identity()
    assert identity.startswith(f"embedded:{MODEL_FILENAME}@") and identity == endpoint_identity(None)
    config = JudgeConfig(cache_path=str(tmp_path / "c.sqlite"))          # no base_url: the embedded judge
    # Two starts of the embedded judge listen on different ports; the starter is not called to compute a key.
    keys = {JudgeClient(config, base_url=lambda port=port: f"http://127.0.0.1:{port}/v1").key_for(MESSAGES, None, "t")
            for port in (40001, 40002)}
    assert keys == {judge_call_key(config, MESSAGES, None, "t")}          # and the dry-run planner's key agrees
    external = judge_call_key(config.model_copy(update={"base_url": "http://127.0.0.1:40001/v1"}), MESSAGES, None,
                              "t")
    assert external not in keys


def test_rows_record_when_they_were_written_and_prune_drops_old_ones(tmp_path, capsys):
    path = tmp_path / "judge_cache.sqlite"
    cache = CallCache(path)
    before = time.time()
    cache.put("new", {"text": "a"})
    cache.put_many([("old", {"text": "b"}), ("older", {"text": "c"})])
    created = dict(sqlite3.connect(path).execute("SELECT key, created FROM calls").fetchall())
    assert all(value is not None and before <= value <= time.time() for value in created.values())
    with sqlite3.connect(path) as conn:          # age two rows: ten days, and one written with no time
        conn.execute("UPDATE calls SET created = ? WHERE key = 'old'", (time.time() - 10 * 86400,))
        conn.execute("UPDATE calls SET created = NULL WHERE key = 'older'")
    cache.close()
    assert main(["cache", "prune", "--older-than", "7", "--cache-file", str(path)]) == 0
    assert "2 replies deleted, 1 kept" in capsys.readouterr().out
    assert [row[0] for row in sqlite3.connect(path).execute("SELECT key FROM calls")] == ["new"]
