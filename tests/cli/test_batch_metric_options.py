"""A Batch API run scores the standard metrics with the run's metric options (`--metric-option`, stored with the
run and read back by every BatchRun), exactly as the online run with the same options does."""
from __future__ import annotations

import pytest

from rubriceval.cli import main
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_server import StubServer

NL2SQL = "datasets/demo_nl2sql_zh.jsonl"


@pytest.fixture
def stub(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with StubServer() as server:
        yield server


def _run(stub, tmp_path, capsys, name: str, *extra: str) -> dict:
    store = tmp_path / "runs.sqlite"
    code = main(["run", NL2SQL, "--metrics", "datacompy_score", "--name", name, "--quiet", "--store", str(store),
                 "--judge-base-url", stub.base_url, "--judge-model", "stub", *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    runs = RunStore(store)
    run_id = runs.resolve(name)
    assert runs.run_info(run_id).status == "complete"
    return {(v.sample_id, v.scorer): (v.score, v.scorer_version, v.details.get("mode")) for v in runs.verdicts(run_id)}


def test_batch_run_with_a_metric_option_equals_the_online_run(stub, tmp_path, capsys):
    online = _run(stub, tmp_path, capsys, "online-columns", "--metric-option", "sql.mode=columns")
    batch = _run(stub, tmp_path, capsys, "batch-columns", "--metric-option", "sql.mode=columns", "--batch")
    default = _run(stub, tmp_path, capsys, "batch-rows", "--batch")
    assert online and batch == online
    assert {mode for _, _, mode in batch.values() if mode} == {"columns"}
    assert batch != default                      # the option changes scores: a batch run ignoring it would differ
