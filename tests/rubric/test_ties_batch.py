"""Holistic judgments with score logprobs through the Batch API (loopback stub): the planner writes the request the
scorer sends (logprobs included), so a batch run finishes in one round with the online verdicts, P(level) and all."""
from __future__ import annotations

import pytest

from rubriceval.data.io import read_dataset
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.evaluate import evaluate
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_server import StubServer
from tests.batch.test_batch import collect_until_done, comparable, judge_for, start

DATA, ONLY = "datasets/demo_cs_zh.jsonl", ["policy_compliance", "process_compliance"]


@pytest.fixture
def stub(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with StubServer() as server:
        yield server


def test_score_logprobs_batch_run_equals_online(stub, tmp_path):
    rubrics = load_rubrics("rubrics", only=ONLY)
    online = evaluate(DATA, rubrics=rubrics, judge=judge_for(stub, tmp_path, "o.sqlite", score_logprobs=True),
                      store=tmp_path / "online.sqlite", progress=False)
    asked = [r for r in stub.stats.requests if r.endpoint == "chat"]
    assert asked and all(r.body.get("logprobs") and r.body.get("top_logprobs") == 10 for r in asked)
    judged = [v for v in online.verdicts if v.usage.calls]
    assert judged and all(v.details["score_probs"]["judge"]["written"] == v.details["item_scores"]["judge"]
                          for v in judged)
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, first = start(stub, tmp_path, store, judge_for(stub, tmp_path, "b.sqlite", score_logprobs=True),
                             samples=read_dataset(DATA), rubrics=rubrics, metrics=[])
    assert first.submitted == len(asked)
    report = collect_until_done(batch_run, stub)
    assert report.round == 1
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    batch_run.close()
