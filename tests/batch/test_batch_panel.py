"""A judge panel through the Batch API, against two loopback stubs standing for two providers: each judge endpoint
gets its own request files and batches (one model per file), custom_ids name the judge, and the collected replies go
through the online panel's scorers — so a panel batch run equals an online panel run verdict for verdict (each
judge's vote, the median, the disagreement flag). A failed or expired batch of one judge is asked again, or
finished online, for that judge only."""
from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from rubriceval.batch.rounds import BatchRun, start_batch_run
from rubriceval.data.io import read_dataset
from rubriceval.judge.config import JudgeConfig
from rubriceval.local.backends import make_embedder
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.evaluate import evaluate
from rubriceval.scoring.panel import load_panel_config
from rubriceval.scoring.panel_votes import panel_votes
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_batches import batch_endpoints
from rubriceval.testing.stub_server import StubServer
from tests.batch.test_batch import DATA, RUBRICS, body_digest, comparable, embedder_for

METRICS = ["faithfulness"]          # judged by the run's own judge: statements, then verdicts (two rounds)


@pytest.fixture
def providers(tmp_path, monkeypatch):
    """Two stubs: provider A serves judges a and c (same model, other seed) and the metrics judge; B serves b."""
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUDGE_B_KEY", "key-of-b")
    with StubServer() as a, StubServer(require_api_key="key-of-b") as b:       # b answers only b's key
        yield a, b


def panel_file(tmp_path: Path, a: StubServer, b: StubServer) -> Path:
    path = tmp_path / "panel.yaml"
    path.write_text(f"judges:\n"
                    f"  - {{name: a, base_url: '{a.base_url}', model: stub-a}}\n"
                    f"  - {{name: b, base_url: '{b.base_url}', model: stub-b, api_key_env: JUDGE_B_KEY}}\n"
                    f"  - {{name: c, base_url: '{a.base_url}', model: stub-a, seed: 7}}\n", encoding="utf-8")
    return path


def judge_config(a: StubServer, tmp_path: Path, cache: str) -> JudgeConfig:
    return JudgeConfig(base_url=a.base_url, model="stub", cache_path=str(tmp_path / cache), timeout_s=5)


def online_panel_run(a, b, tmp_path, metrics=METRICS):
    config = judge_config(a, tmp_path, "online-cache.sqlite")
    return evaluate(DATA, rubrics=load_rubrics("rubrics", only=RUBRICS), metrics=metrics, judge=config,
                    embedder=embedder_for(a), store=tmp_path / "online.sqlite", progress=False,
                    panel=load_panel_config(panel_file(tmp_path, a, b), base=config))


def start_panel(a, b, tmp_path, store, metrics=METRICS, **kwargs) -> tuple[BatchRun, object]:
    config = judge_config(a, tmp_path, "batch-cache.sqlite")
    batch_run, report = start_batch_run(read_dataset(DATA), load_rubrics("rubrics", only=RUBRICS), metrics,
                                        store=store, judge_config=config, directory=tmp_path / "batches",
                                        panel_config=load_panel_config(panel_file(tmp_path, a, b), base=config),
                                        **kwargs)
    batch_run.embedder = make_embedder(embedder_for(a), announce=False)
    return batch_run, report


def finish_batches(*stubs: StubServer) -> None:
    for stub in stubs:
        endpoints = batch_endpoints(stub)
        endpoints.wait_idle()
        for batch in endpoints.batches():
            endpoints.advance(batch.id)


def collect_until_done(batch_run: BatchRun, stubs, *, rounds: int = 12, **kwargs):
    report = None
    for _ in range(rounds):
        finish_batches(*stubs)
        report = asyncio.run(batch_run.collect(**kwargs))
        if report.complete:
            return report
    raise AssertionError(f"not complete after {rounds} collects: {report}")


def chat_digests(stub: StubServer) -> list[str]:
    return sorted(body_digest(r.body) for r in stub.stats.requests if r.endpoint == "chat")


def batch_digests(stub: StubServer, *, first: int = 0) -> list[str]:
    return [d for batch in batch_endpoints(stub).batches()[first:] for d in batch.digests]


def test_panel_batch_run_equals_the_online_panel_run(providers, tmp_path):
    a, b = providers
    online = online_panel_run(a, b, tmp_path)
    online_a, online_b = chat_digests(a), chat_digests(b)
    assert online_a and online_b
    assert any(v.details.get("panel", {}).get("disagreement") for v in online.verdicts), \
        "the judges never disagree: the comparison would not see a vote mixed up"
    a.reset(), b.reset()

    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, first = start_panel(a, b, tmp_path, store)
    assert first.submitted > 0 and first.new_batches
    report = collect_until_done(batch_run, (a, b))
    verdicts = store.verdicts(batch_run.run_id)
    assert comparable(verdicts) == comparable(online.verdicts)       # votes, median, disagreement, feedback
    votes = [panel_votes(v) for v in verdicts if v.scorer in RUBRICS and panel_votes(v)]
    assert votes and all([x.judge for x in vote] == ["a", "b", "c"] for vote in votes)
    assert store.run_info(batch_run.run_id).status == "complete"

    # Each provider got exactly its judges' calls (the same bodies the online run posted there), once.
    assert sorted(batch_digests(a)) == online_a and sorted(batch_digests(b)) == online_b
    assert report.requests.requests == len(online_a) + len(online_b)
    # One model per request file; files and batches per endpoint; custom_ids name the panel judge.
    files = batch_run.batches.files(batch_run.run_id)
    by_endpoint: dict[str, set[str]] = {}
    judges_seen = Counter()
    for f in files:
        lines = [json.loads(line) for line in Path(f.path).read_text(encoding="utf-8").splitlines()]
        models = {line["body"]["model"] for line in lines}
        assert len(models) == 1, f"file {f.path} mixes models {models}"
        by_endpoint.setdefault(f.endpoint, set()).update(models)
        for line in lines:
            parts = line["custom_id"].split("/")
            judge = parts[4][1:] if len(parts) == 7 else ""
            judges_seen[judge] += 1
            assert (judge == "") == (line["body"]["model"] == "stub")
    assert by_endpoint == {"a+c": {"stub-a"}, "b": {"stub-b"}, "judge": {"stub"}}
    assert set(judges_seen) == {"1-a", "2-b", "3-c", ""}          # j<place in the panel>-<name>
    batch_run.close()


def test_one_judges_expired_batch_is_resubmitted_for_that_judge_only(providers, tmp_path):
    a, b = providers
    online = online_panel_run(a, b, tmp_path, metrics=[])
    a.reset(), b.reset()
    batch_endpoints(b).script(["expire_half"])
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, first = start_panel(a, b, tmp_path, store, metrics=[])
    finish_batches(a, b)
    report = asyncio.run(batch_run.collect())
    expired = batch_endpoints(b).batches()[0]
    files = batch_run.batches.files(batch_run.run_id)
    assert [(f.round, f.status) for f in files if f.endpoint == "b"][0] == (1, "expired")
    assert all(f.round == 1 and f.status == "completed" for f in files if f.endpoint == "a+c")
    done_half = expired.completed
    assert 0 < done_half < expired.total and report.submitted > 0
    # Only b's remainder is asked again, at b; nothing of a/c (their batch completed) is asked twice.
    final = collect_until_done(batch_run, (a, b))
    resubmitted_b = batch_digests(b, first=1)
    assert set(resubmitted_b) == set(expired.digests[done_half:]) and len(resubmitted_b) == len(set(resubmitted_b))
    all_a = batch_digests(a)
    assert len(all_a) == len(set(all_a)) == len(batch_endpoints(a).batches()[0].digests)
    assert final.complete
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    batch_run.close()


def test_finish_online_for_one_judge_only(providers, tmp_path):
    a, b = providers
    online = online_panel_run(a, b, tmp_path, metrics=[])
    a.reset(), b.reset()
    batch_endpoints(b).script(["fail"])                 # b's batch fails validation: nothing of b answered
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, first = start_panel(a, b, tmp_path, store, metrics=[])
    b_batches = len(batch_endpoints(b).batches())

    async def collect_finishing_b_online():
        clients = batch_run.online_judges(["b"])          # as `batch collect --finish-online-judge b` does
        assert list(clients) == ["b"]
        try:
            return await batch_run.collect(finish_online=clients)
        finally:
            for client in clients.values():
                await client.close()

    report = None
    for _ in range(12):                                  # a's checklist questions may take rounds of their own
        finish_batches(a, b)
        report = asyncio.run(collect_finishing_b_online())
        if report.complete:
            break
    assert report is not None and report.complete
    assert len(batch_endpoints(b).batches()) == b_batches, "b's calls were finished online, not resubmitted"
    # The stub answers a batch's requests through its chat endpoint too: a's chat calls are its batches' only.
    assert a.stats.calls["chat"] == len(batch_digests(a)), "judge a's calls went online"
    assert b.stats.calls["chat"] > 0 and all(batch.completed == 0 for batch in batch_endpoints(b).batches())
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    with pytest.raises(Exception, match="no panel judge named 'z'"):
        batch_run.online_judges(["z"])
    batch_run.close()


def test_kill_9_between_submit_and_collect_with_a_panel(tmp_path, monkeypatch, store_target):
    """The CLI end to end (`run --panel FILE --batch`, `batch collect --wait` killed with SIGKILL, `batch status`):
    complete, nothing submitted twice at either provider, the online panel run's verdicts; SQLite and PostgreSQL."""
    import os
    import random
    import subprocess

    from rubriceval.store.batches import BatchStore
    from tests.store.test_batch_kill import bigger_dataset, cli, collect_through_kills

    data, store_path = tmp_path / "data.jsonl", store_target
    bigger_dataset(data, copies=10)
    env = {**os.environ, "RUBRICEVAL_CACHE_DIR": str(tmp_path / "cache"), "JUDGE_B_KEY": "key-of-b"}
    rng = random.Random(11)
    with StubServer() as a, StubServer(require_api_key="key-of-b") as b:
        panel = panel_file(tmp_path, a, b)
        judge = ["--judge-base-url", a.base_url, "--judge-model", "stub", "--store", str(store_path)]
        submit = cli("run", str(data), "--rubrics", "rubrics", "--only", ",".join(RUBRICS), "--metrics",
                     ",".join(METRICS), "--panel", str(panel), "--name", "nightly", "--batch", *judge, env=env)
        out, err = submit.communicate(timeout=120)
        assert submit.returncode == 0, err
        assert "judges a, c" in out and "judges b" in out           # which files go where
        assert collect_through_kills("nightly", judge, env, rng) >= 1
        status = subprocess.run([*cli_prefix(), "batch", "status", "nightly", *judge], env=env, capture_output=True,
                                text=True, timeout=120)
        assert status.returncode == 0, status.stderr
        assert "a+c (stub-a at" in status.stdout and "b (stub-b at" in status.stdout
        batches = {"a": batch_endpoints(a).batches(), "b": batch_endpoints(b).batches()}
        monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "online-cache"))
        monkeypatch.setenv("JUDGE_B_KEY", "key-of-b")
        config = judge_config(a, tmp_path, "online.sqlite")
        online = evaluate(data, rubrics=load_rubrics("rubrics", only=RUBRICS), metrics=METRICS, judge=config,
                          store=tmp_path / "online-runs.sqlite", progress=False,
                          embedder=embedder_for(a), panel=load_panel_config(panel, base=config))

    store = RunStore(store_path)
    run_id = store.resolve("nightly")
    assert store.run_info(run_id).status == "complete"
    total = 0
    for provider, provider_batches in batches.items():
        digests = [d for batch in provider_batches for d in batch.digests]
        assert len(digests) == len(set(digests)), f"a request was submitted twice at provider {provider}"
        total += len(digests)
    counts = BatchStore(store).counts(run_id)
    assert counts.requests == total and counts.answered == total
    assert comparable(store.verdicts(run_id)) == comparable(online.verdicts)


def cli_prefix() -> list[str]:
    import sys

    return [sys.executable, "-m", "rubriceval.cli"]


def test_dry_run_prices_each_panel_judge_at_its_own_online_and_batch_price(tmp_path, monkeypatch):
    from rubriceval.run.planning import plan_cost

    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "panel.yaml"
    path.write_text("judges:\n"
                    "  - {name: a, base_url: 'http://127.0.0.1:9/v1', model: free-a}\n"
                    "  - {name: b, base_url: 'http://127.0.0.1:8/v1', model: paid-b, price_in_per_mtok: 2.0,\n"
                    "     price_out_per_mtok: 8.0}\n", encoding="utf-8")
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="free", cache=False)
    samples, rubrics = read_dataset(DATA), load_rubrics("rubrics", only=RUBRICS)
    plan = plan_cost(samples, rubrics, [], config, panel=load_panel_config(path, base=config))
    # Only b costs anything: the panel's cost is exactly what b alone would cost, online and at half price.
    alone = plan_cost(samples, rubrics, [], JudgeConfig(base_url="http://127.0.0.1:8/v1", model="paid-b", cache=False,
                                                        price_in_per_mtok=2.0, price_out_per_mtok=8.0))
    assert alone.cost_usd > 0
    assert plan.cost_usd == pytest.approx(alone.cost_usd) and plan.batch_cost_usd == pytest.approx(alone.cost_usd / 2)
    assert plan.calls == 2 * alone.calls
    text = plan.format()
    assert f"cost: online ~${alone.cost_usd:.4f} | batch API (--batch) ~${alone.cost_usd / 2:.4f}" in text
    assert "judge a (free-a)" in text and "judge b (paid-b)" in text and "for the metrics" not in text   # none


def test_offline_files_per_judge_endpoint_and_collect_from_a_directory(providers, tmp_path):
    """--batch-file DIR with a panel: one set of request files per endpoint (each runnable by a `vllm run-batch`
    serving that one model); the runner's outputs, all in one directory, are read back and each reply priced at
    its own judge's batch price."""
    import httpx

    from rubriceval.batch.progress import by_endpoint

    a, b = providers
    online = online_panel_run(a, b, tmp_path, metrics=METRICS)
    store = RunStore(tmp_path / "runs.sqlite")
    path = panel_file(tmp_path, a, b)
    path.write_text(path.read_text(encoding="utf-8").replace(
        "api_key_env: JUDGE_B_KEY}", "api_key_env: JUDGE_B_KEY, price_in_per_mtok_batch: 1.0, "
                                     "price_out_per_mtok_batch: 4.0}"), encoding="utf-8")
    config = judge_config(a, tmp_path, "batch-cache.sqlite")
    batch_run, _ = start_batch_run(read_dataset(DATA), load_rubrics("rubrics", only=RUBRICS), METRICS, store=store,
                                   judge_config=config, directory=tmp_path / "batches", offline=True,
                                   panel_config=load_panel_config(path, base=config))
    served = {"stub-a": (a, None), "stub-b": (b, "key-of-b"), "stub": (a, None)}
    done: set[str] = set()
    report = None
    for _ in range(12):
        for request_file in sorted((tmp_path / "batches").glob("*-round*.jsonl")):
            if request_file.name in done or request_file.name.startswith("out-"):
                continue
            done.add(request_file.name)
            lines = [json.loads(line) for line in request_file.read_text(encoding="utf-8").splitlines()]
            assert len({line["body"]["model"] for line in lines}) == 1          # one model: one runner
            stub, key = served[lines[0]["body"]["model"]]
            with httpx.Client(headers={"Authorization": f"Bearer {key or 'x'}"}, timeout=10) as http:
                with open(tmp_path / "batches" / f"out-{request_file.stem}.jsonl", "w", encoding="utf-8") as out:
                    for line in lines:
                        reply = http.post(f"{stub.base_url}/chat/completions", json=line["body"])
                        out.write(json.dumps({"id": "x", "custom_id": line["custom_id"], "response": {
                            "status_code": reply.status_code, "body": reply.json()}}) + "\n")
        report = asyncio.run(batch_run.collect(source=tmp_path / "batches"))
        if report.complete:
            break
    assert report is not None and report.complete
    assert {f.endpoint for f in batch_run.batches.files(batch_run.run_id)} == {"a+c", "b", "judge"}
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    costs = {label.split(" ")[0]: counts for label, counts, _ in by_endpoint(batch_run.batches, batch_run.run_id,
                                                                           batch_run.judges)}
    b_counts = costs["b"]
    assert b_counts.prompt_tokens > 0
    assert b_counts.cost_usd == pytest.approx((b_counts.prompt_tokens * 1.0 + b_counts.completion_tokens * 4.0) / 1e6)
    assert costs["a+c"].cost_usd == 0 and costs["judge"].cost_usd == 0
    batch_run.close()


def test_a_panel_run_replayed_in_worker_processes(providers, tmp_path, monkeypatch):
    """collect splits a big replay over processes (batch/parallel.py); each rebuilds the panel from the run store."""
    import rubriceval.batch.parallel as parallel

    a, b = providers
    online = online_panel_run(a, b, tmp_path, metrics=[])
    monkeypatch.setattr(parallel, "MIN_JUDGMENTS", 0)
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, _ = start_panel(a, b, tmp_path, store, metrics=[])
    batch_run.embedder, batch_run.workers, batch_run.window = None, 2, 4
    assert batch_run._parallel()
    collect_until_done(batch_run, (a, b))
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    batch_run.close()


def test_a_panel_judge_without_a_batch_api_is_refused_before_the_run_starts(tmp_path, monkeypatch):
    from rubriceval.common.errors import RubricEvalError

    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "panel.yaml"
    path.write_text("judges:\n  - {name: remote, base_url: 'http://127.0.0.1:9/v1', model: m}\n"
                    "  - {name: local-one, base_url: null, model: local}\n", encoding="utf-8")
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", cache=False)
    store = RunStore(tmp_path / "runs.sqlite")
    with pytest.raises(RubricEvalError, match="panel judge 'local-one' has no provider"):
        start_batch_run(read_dataset(DATA), load_rubrics("rubrics", only=RUBRICS), [], store=store,
                        judge_config=config, directory=tmp_path / "b",
                        panel_config=load_panel_config(path, base=config))
    assert store.list_runs() == []


def test_finish_online_judge_needs_a_panel_run(tmp_path, monkeypatch):
    """`batch collect --finish-online-judge` on a run with one judge: a clear error, nothing collected."""
    import os
    import subprocess

    with StubServer() as stub:
        env = {**os.environ, "RUBRICEVAL_CACHE_DIR": str(tmp_path / "cache")}
        judge = ["--judge-base-url", stub.base_url, "--judge-model", "stub", "--store", str(tmp_path / "r.sqlite")]
        started = subprocess.run([*cli_prefix(), "run", DATA, "--rubrics", "rubrics", "--only", RUBRICS[0],
                                  "--name", "one", "--batch", *judge], env=env, capture_output=True, text=True,
                                 timeout=120)
        assert started.returncode == 0, started.stderr
        collect = subprocess.run([*cli_prefix(), "batch", "collect", "one", "--finish-online-judge", "b", *judge],
                                 env=env, capture_output=True, text=True, timeout=120)
    assert collect.returncode != 0 and "--finish-online-judge names a judge of a panel" in collect.stderr


def test_judges_share_an_endpoint_only_with_the_same_provider_model_and_key(tmp_path):
    from rubriceval.batch.endpoints import RunJudges

    path = tmp_path / "panel.yaml"
    path.write_text("judges:\n"
                    "  - {name: a, base_url: 'http://127.0.0.1:9/v1', model: m}\n"
                    "  - {name: a-7, base_url: 'http://127.0.0.1:9/v1', model: m, seed: 7}\n"
                    "  - {name: other-key, base_url: 'http://127.0.0.1:9/v1', model: m, seed: 8, api_key_env: K2}\n"
                    "  - {name: other-model, base_url: 'http://127.0.0.1:9/v1', model: n}\n"
                    "  - {name: 'x+y', base_url: 'http://127.0.0.1:8/v1', model: m, seed: 9}\n"
                    "  - {name: x_y, base_url: 'http://127.0.0.1:7/v1', model: m, seed: 10}\n", encoding="utf-8")
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", cache=False)
    panel = load_panel_config(path, base=config)
    with_metrics = RunJudges(config, panel, needs_run_judge=True)
    assert [(e.name, e.judges) for e in with_metrics.endpoints] == [
        ("a+a-7+judge", ["a", "a-7", ""]), ("other-key", ["other-key"]), ("other-model", ["other-model"]),
        ("x_y", ["x+y"]), ("x_y-2", ["x_y"])]
    without = RunJudges(config, panel, needs_run_judge=False)
    assert without.endpoint_of("a") == "a+a-7" and "" not in without.configs
    assert RunJudges(config).endpoints[0].name == ""                    # a run without panel: one, unnamed
