"""`benchmark-judge … --self-consistency N` judges each item as a run would with that setting
(`runner.judge_rubric`): N sampled calls per holistic judgment (the median kept: tests/trust/test_trust_self_consistency.py),
not one call with the flag silently ignored. Loopback stub judge, no model."""
from __future__ import annotations

import asyncio

from benchmarks.judge.cs_zh import run_cs_benchmark_async


def _score_by_seed(body: dict) -> dict:
    """Each sampled call's score follows from its seed, so the n calls of one item differ."""
    return {"feedback": f"seed {body.get('seed')}", "score": 1 + int(body.get("seed") or 0) % 5}


def test_cs_benchmark_judges_each_row_n_times_with_self_consistency(stub_server, judge_config):
    stub_server.responder = _score_by_seed
    once = asyncio.run(run_cs_benchmark_async(judge_config.model_copy(update={"cache": False}), "holistic", n=6,
                                              n_boot=0, progress=False))
    calls_once = stub_server.stats.calls["chat"]
    stub_server.reset()
    three = asyncio.run(run_cs_benchmark_async(
        judge_config.model_copy(update={"cache": False, "self_consistency": 3}), "holistic", n=6, n_boot=0,
        progress=False))
    calls_three = stub_server.stats.calls["chat"]
    assert calls_once == 6 and calls_three == 3 * 6
    seeds = {r.body.get("seed") for r in stub_server.stats.requests}
    assert len(seeds) == 3 and all(r.body.get("temperature", 0) > 0 for r in stub_server.stats.requests)
    assert three.usage.calls == 18 and once.usage.calls == 6
    assert [row.usage.calls for row in three.rows] == [3] * 6 and all(r.judge_score for r in three.rows)
