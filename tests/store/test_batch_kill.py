"""kill -9 between submit and collect, and during collects: a later collect completes the run with every
judgment once, no request submitted twice, and the same verdicts as an online run."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.evaluate import evaluate
from rubriceval.store.batches import BatchStore
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_batches import batch_endpoints
from rubriceval.testing.stub_server import StubServer

RUBRICS = "policy_compliance,emotional_soothing"
METRICS = "faithfulness"            # statement extraction, then context verdicts: two rounds


def bigger_dataset(path: Path, copies: int = 12) -> int:
    rows = [json.loads(line) for line in Path("datasets/demo_cs_zh.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    with open(path, "w", encoding="utf-8") as out:
        for n in range(copies):
            for row in rows:
                out.write(json.dumps({**row, "id": f"{row['id']}-{n}", "question": f"{row['question']}（{n}）"},
                                     ensure_ascii=False) + "\n")
    return copies * len(rows)


def cli(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rubriceval.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def collect_through_kills(run: str, judge: list[str], env: dict, rng: random.Random, tries: int = 6) -> int:
    """`batch collect --wait` of `run`, killed with SIGKILL after a random 0.5–2.5 s, up to `tries` times (until one
    finishes on its own), then a last collect that must complete; how many collects were killed."""
    kills = 0
    for _ in range(tries):
        collect = cli("batch", "collect", run, "--wait", "--poll", "0.05", "--quiet", *judge, env=env)
        time.sleep(rng.uniform(0.5, 2.5))
        if collect.poll() is not None:
            break
        collect.send_signal(signal.SIGKILL)
        collect.wait(timeout=10)
        kills += 1
    final = cli("batch", "collect", run, "--wait", "--poll", "0.05", "--quiet", *judge, env=env)
    assert final.wait(timeout=300) == 0, final.stderr.read()
    return kills


def test_kill_9_between_submit_and_collect_and_during_collects(tmp_path, store_target):
    data, store_path = tmp_path / "data.jsonl", store_target
    bigger_dataset(data)
    env = {**os.environ, "RUBRICEVAL_CACHE_DIR": str(tmp_path / "cache")}
    rng = random.Random(7)
    with StubServer() as stub:
        judge = ["--judge-base-url", stub.base_url, "--judge-model", "stub", "--store", str(store_path)]
        submit = cli("run", str(data), "--rubrics", "rubrics", "--only", RUBRICS, "--metrics", METRICS,
                     "--name", "nightly", "--batch", *judge, env=env)
        assert submit.wait(timeout=120) == 0, submit.stderr.read()
        # The submitting process is gone (as after kill -9): the batches go on without it.
        assert collect_through_kills("nightly", judge, env, rng) >= 1
        batches = batch_endpoints(stub).batches()
        online = evaluate(data, rubrics=load_rubrics("rubrics", only=RUBRICS.split(",")), metrics=[METRICS],
                          judge=JudgeConfig(base_url=stub.base_url, model="stub",
                                            cache_path=str(tmp_path / "online.sqlite")),
                          store=tmp_path / "online-runs.sqlite", progress=False)

    store = RunStore(store_path)
    run_id = store.resolve("nightly")
    assert store.run_info(run_id).status == "complete"
    digests = [d for b in batches for d in b.digests]
    assert len(digests) == len(set(digests)), "a request was submitted twice"
    custom_ids = [c for b in batches for c in b.custom_ids]
    assert len(custom_ids) == len(set(custom_ids))
    counts = BatchStore(store).counts(run_id)
    assert counts.requests == len(digests) and counts.answered == len(digests) and counts.rounds == 2
    verdicts = {(v.sample_id, v.scorer): (v.score, v.unscored_reason, v.feedback) for v in store.verdicts(run_id)}
    assert verdicts == {(v.sample_id, v.scorer): (v.score, v.unscored_reason, v.feedback) for v in online.verdicts}
