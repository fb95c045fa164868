"""Batch API runs against the loopback stub: the same verdicts as online, rounds for multi-step metrics and
re-asks, expired/failed requests asked again (only those), malformed output lines unscored with the reason,
files split at the limits, offline files for `vllm run-batch`, and a crashed submit that never creates a batch twice.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import httpx
import pytest

from rubriceval.batch.files import request_line
from rubriceval.batch.rounds import BatchRun, start_batch_run
from rubriceval.batch.submit import submit_files
from rubriceval.data.io import read_dataset
from rubriceval.embed.config import EmbedderConfig
from rubriceval.judge.config import JudgeConfig
from rubriceval.local.backends import make_embedder
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.evaluate import evaluate
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_batches import batch_endpoints
from rubriceval.testing.stub_server import StubServer

DATA = "datasets/demo_cs_zh.jsonl"
RUBRICS = ["policy_compliance", "emotional_soothing"]
METRICS = ["faithfulness", "answer_correctness"]       # two rounds: statements, then context verdicts/classes


@pytest.fixture
def stub(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with StubServer() as server:
        yield server


def judge_for(stub, tmp_path, cache: str, **update) -> JudgeConfig:
    return JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(tmp_path / cache), timeout_s=5,
                       **update)


def embedder_for(stub) -> EmbedderConfig:
    return EmbedderConfig(base_url=stub.base_url, model="stub-embed")


def comparable(verdicts) -> dict:
    return {(v.sample_id, v.scorer): (v.score, v.passed, v.unscored_kind, v.unscored_reason, v.feedback,
                                      [e.model_dump() for e in v.evidence],
                                      {k: _unspent(d) for k, d in v.details.items() if k != "usage"})
            for v in verdicts}


def _unspent(detail):
    """A panel's details without each vote's usage: what was spent (at the batch or the online price) is no more part
    of the verdict than the verdict's own usage."""
    if isinstance(detail, dict) and isinstance(detail.get("judges"), list):
        return {**detail, "judges": [{k: x for k, x in vote.items() if k != "usage"} if isinstance(vote, dict)
                                     else vote for vote in detail["judges"]]}
    return detail


def collect_until_done(batch_run: BatchRun, stub: StubServer, *, rounds: int = 8, **kwargs):
    """Let the stub finish every batch, collect, repeat until the run is complete."""
    endpoints = batch_endpoints(stub)
    report = None
    for _ in range(rounds):
        endpoints.wait_idle()
        for batch in endpoints.batches():
            endpoints.advance(batch.id)
        report = asyncio.run(batch_run.collect(**kwargs))
        if report.complete:
            return report
    raise AssertionError(f"not complete after {rounds} collects: {report}")


def start(stub, tmp_path, store, config, *, samples=None, rubrics=None, metrics=METRICS, **kwargs):
    samples = samples if samples is not None else read_dataset(DATA)
    rubrics = rubrics if rubrics is not None else load_rubrics("rubrics", only=RUBRICS)
    batch_run, report = start_batch_run(samples, rubrics, metrics, store=store, judge_config=config,
                                        directory=tmp_path / "batches", **kwargs)
    batch_run.embedder = make_embedder(embedder_for(stub), announce=False)
    return batch_run, report


def online_run(stub, tmp_path, *, metrics=METRICS, config=None):
    config = config or judge_for(stub, tmp_path, "online-cache.sqlite")
    return evaluate(DATA, rubrics=load_rubrics("rubrics", only=RUBRICS), metrics=metrics, judge=config,
                    embedder=embedder_for(stub), store=tmp_path / "online.sqlite", progress=False)


def submitted_digests(stub) -> list[str]:
    return [digest for batch in batch_endpoints(stub).batches() for digest in batch.digests]


def body_digest(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def test_batch_run_equals_online_run_and_fills_the_cache(stub, tmp_path):
    online = online_run(stub, tmp_path)
    online_bodies = sorted(body_digest(r.body) for r in stub.stats.requests if r.endpoint == "chat")
    store = RunStore(tmp_path / "runs.sqlite")
    config = judge_for(stub, tmp_path, "batch-cache.sqlite")
    batch_run, first = start(stub, tmp_path, store, config)
    assert first.submitted > 0 and first.new_batches
    report = collect_until_done(batch_run, stub)
    assert report.round == 2                       # statements first, then the calls that need them
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    assert store.run_info(batch_run.run_id).status == "complete"
    # Nothing asked twice, and exactly the calls the online run made (same bodies → same digests).
    digests = submitted_digests(stub)
    assert len(digests) == len(set(digests)) == report.requests.requests
    assert sorted(digests) == online_bodies
    # Verdicts carry the batch price: the stub model costs nothing, so check the tokens were counted.
    assert sum(v.usage.prompt_tokens for v in store.verdicts(batch_run.run_id)) > 0
    # An online rerun with the batch run's cache is all cache hits.
    before = stub.stats.calls["chat"]
    rerun = online_run(stub, tmp_path, config=config)
    assert stub.stats.calls["chat"] == before
    assert comparable(rerun.verdicts) == comparable(online.verdicts)
    batch_run.close()


def test_request_bodies_are_the_online_client_bodies(stub, tmp_path):
    online_run(stub, tmp_path, metrics=[])
    posted = {json.dumps(r.body, sort_keys=True, ensure_ascii=False) for r in stub.stats.requests
              if r.endpoint == "chat"}
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, _ = start(stub, tmp_path, store, judge_for(stub, tmp_path, "b.sqlite"), metrics=[], offline=True)
    written = {json.dumps(json.loads(line)["body"], sort_keys=True, ensure_ascii=False)
               for path in sorted((tmp_path / "batches").glob("*.jsonl")) for line in path.read_text().splitlines()}
    assert written == posted
    first = json.loads((sorted((tmp_path / "batches").glob("*.jsonl"))[0]).read_text().splitlines()[0])
    assert first["method"] == "POST" and first["url"] == "/v1/chat/completions"
    assert first["custom_id"].startswith(f"{batch_run.run_id}/") and first["custom_id"].endswith("/r1")
    batch_run.close()


def test_files_split_at_the_request_and_byte_limits(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    config = judge_for(stub, tmp_path, "b.sqlite", batch_max_requests=5, batch_max_bytes=40_000)
    batch_run, report = start(stub, tmp_path, store, config, metrics=[], offline=True)
    files = batch_run.batches.files(batch_run.run_id)
    assert len(files) > 1
    ids = []
    for f in files:
        lines = Path(f.path).read_bytes().splitlines(keepends=True)
        assert 1 <= len(lines) <= 5 and sum(map(len, lines)) <= 40_000 == 40_000 and f.n_requests == len(lines)
        ids += [json.loads(line)["custom_id"] for line in lines]
    assert len(ids) == len(set(ids)) == report.submitted
    batch_run.close()


def test_expired_half_done_batch_resubmits_only_the_remainder(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    batch_endpoints(stub).script(["expire_half"])
    # Holistic (one call per judgment, so requests = judgments): emotional_soothing ships checklist_fitted; a
    # checklist's expired questions are tested in test_batch_checklist.py (all of them in the next round).
    config = judge_for(stub, tmp_path, "b.sqlite", judge_mode="holistic")
    batch_run, first = start(stub, tmp_path, store, config, metrics=[])
    endpoints = batch_endpoints(stub)
    endpoints.wait_idle()
    for batch in endpoints.batches():
        endpoints.advance(batch.id)
    report = asyncio.run(batch_run.collect())
    expired = endpoints.batches()[0]
    assert batch_run.batches.files(batch_run.run_id)[0].status == "expired"
    done_half = expired.completed
    assert 0 < done_half < first.submitted
    assert report.submitted == first.submitted - done_half          # only the remainder, in a new batch
    assert report.saved > 0                                         # the done half already became verdicts
    final = collect_until_done(batch_run, stub)
    digests = submitted_digests(stub)
    answered = set(expired.digests[:done_half])
    resubmitted = [d for b in endpoints.batches()[1:] for d in b.digests]
    assert not answered & set(resubmitted) and set(resubmitted) == set(expired.digests[done_half:])
    assert len(digests) == first.submitted + len(resubmitted)
    assert final.complete and all(v.scored for v in store.verdicts(batch_run.run_id) if v.scorer in RUBRICS)
    batch_run.close()


def test_malformed_output_lines_are_unscored_with_the_reason_and_counted(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    batch_endpoints(stub).script(["malformed_lines"])
    batch_run, first = start(stub, tmp_path, store, judge_for(stub, tmp_path, "b.sqlite"), metrics=[])
    report = collect_until_done(batch_run, stub)
    every = batch_endpoints(stub).timings.malformed_every
    cut = len(range(0, first.submitted, every))
    assert report.read.malformed == cut + 1 and report.read.unattributed == 1      # + one line of noise
    unscored = [v for v in store.verdicts(batch_run.run_id) if not v.scored]
    assert len(unscored) == cut and report.requests.answer_errors == cut
    assert all(v.unscored_kind == "provider_error" and "malformed batch output line" in v.unscored_reason
               for v in unscored)
    assert report.submitted == 0 and report.complete                # settled, not asked again
    batch_run.close()


def test_failed_requests_are_asked_again_and_client_errors_are_not(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    batch_endpoints(stub).script(["request_errors"])          # every 10th request: HTTP 500 in the error file
    batch_run, first = start(stub, tmp_path, store, judge_for(stub, tmp_path, "b.sqlite"), metrics=[])
    stub.script(["400"])                                       # the first answered request: HTTP 400
    report = collect_until_done(batch_run, stub)
    failed_500 = len(range(0, first.submitted, batch_endpoints(stub).timings.error_every))
    assert report.requests.requests == first.submitted + failed_500
    unscored = [v for v in store.verdicts(batch_run.run_id) if not v.scored]
    assert len(unscored) == 1 and "HTTP 400" in unscored[0].unscored_reason
    batch_run.close()


def test_an_unreadable_reply_is_re_asked_in_the_next_round(stub, tmp_path):
    def responder(body):       # the first reply has no score; the re-ask (reply + note appended) gets one
        return "no idea" if len(body["messages"]) <= 2 else "Feedback: fine after all [RESULT] 4"

    stub.responder = responder
    # The holistic re-ask ("[RESULT] 4"); emotional_soothing ships checklist_fitted.
    config = judge_for(stub, tmp_path, "online.sqlite", structured="text", judge_mode="holistic")
    online = online_run(stub, tmp_path, metrics=[], config=config)
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, _ = start(stub, tmp_path, store, config.model_copy(update={"cache_path": str(tmp_path / "b.sqlite")}),
                         metrics=[])
    report = collect_until_done(batch_run, stub)
    assert report.round == 2
    verdicts = store.verdicts(batch_run.run_id)
    assert comparable(verdicts) == comparable(online.verdicts)
    assert all(v.score == 4 for v in verdicts if v.scorer == "emotional_soothing")
    batch_run.close()


def test_finish_online_makes_the_missing_calls_online(stub, tmp_path):
    from rubriceval.local.backends import make_judge

    store = RunStore(tmp_path / "runs.sqlite")
    batch_endpoints(stub).script(["expire_half"])
    config = judge_for(stub, tmp_path, "b.sqlite")
    batch_run, first = start(stub, tmp_path, store, config, metrics=[])
    endpoints = batch_endpoints(stub)
    endpoints.wait_idle()
    endpoints.advance(endpoints.batches()[0].id)
    before = stub.stats.calls["chat"]

    async def finish():
        online = make_judge(config, announce=False)
        try:
            return await batch_run.collect(finish_online=online)
        finally:
            await online.close()

    report = asyncio.run(finish())
    done_half = endpoints.batches()[0].completed
    assert report.complete and report.submitted == 0 and len(endpoints.batches()) == 1
    assert stub.stats.calls["chat"] - before == first.submitted - done_half
    batch_run.close()


def test_batch_file_and_collect_from_round_trip(stub, tmp_path):
    online = online_run(stub, tmp_path)
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, first = start(stub, tmp_path, store, judge_for(stub, tmp_path, "b.sqlite"), offline=True)
    assert first.new_batches == [] and batch_endpoints(stub).batches() == []
    outputs = tmp_path / "runner-out"
    outputs.mkdir()
    report = None
    for round_no in (1, 2, 3):
        inputs = sorted((tmp_path / "batches").glob(f"*-round{round_no}-*.jsonl"))
        if not inputs:
            break
        for path in inputs:       # an offline runner: each line's body to the chat endpoint, OpenAI output lines
            with open(outputs / f"{path.stem}.out.jsonl", "w", encoding="utf-8") as out:
                for line in path.read_text(encoding="utf-8").splitlines():
                    request = json.loads(line)
                    reply = httpx.post(f"{stub.base_url}/chat/completions", json=request["body"], timeout=10)
                    out.write(json.dumps({"id": "x", "custom_id": request["custom_id"], "error": None,
                                          "response": {"status_code": reply.status_code, "body": reply.json()}},
                                         ensure_ascii=False) + "\n")
        report = asyncio.run(batch_run.collect(source=outputs))
    assert report is not None and report.complete and report.round == 2
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    batch_run.close()


def test_a_batch_created_before_a_crash_is_found_not_created_again(stub, tmp_path):
    from rubriceval.batch.provider import BatchProvider

    store = RunStore(tmp_path / "runs.sqlite")
    config = judge_for(stub, tmp_path, "b.sqlite")
    batch_run, _ = start(stub, tmp_path, store, config, metrics=[], offline=True)
    for f in batch_run.batches.files(batch_run.run_id):            # pretend they were written for a provider
        batch_run.batches.conn.execute("UPDATE batch_files SET target='provider', status='written' WHERE file_no=?",
                                       (f.file_no,))

    class CrashAfterCreate(BatchProvider):
        def create(self, *args, **kwargs):
            super().create(*args, **kwargs)
            raise KeyboardInterrupt      # killed after the provider made the batch, before its id was stored

    with pytest.raises(KeyboardInterrupt):
        submit_files(batch_run.batches, CrashAfterCreate(stub.base_url), batch_run.run_id, config)
    assert len(batch_endpoints(stub).batches()) == 1
    with BatchProvider(stub.base_url) as provider:
        created = submit_files(batch_run.batches, provider, batch_run.run_id, config)
    assert created == [batch_endpoints(stub).batches()[0].id] and len(batch_endpoints(stub).batches()) == 1
    batch_run.close()


def test_request_line_is_one_line_of_utf8_json():
    line = request_line("r/s/c/judge/s0/r1", {"model": "m", "messages": [{"role": "user", "content": "换行\u2028ok"}]})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["body"]["messages"][0]["content"] == "换行\u2028ok"


def test_costs_online_and_batch_side_by_side():
    from rubriceval.core.verdict import Usage
    from rubriceval.judge.pricing import JudgePrices, side_by_side
    from rubriceval.report.cost import RunCost
    from rubriceval.report.markdown import usage_line
    from rubriceval.run.planning import plan_cost

    usage = Usage(calls=2, prompt_tokens=1_000_000, completion_tokens=100_000)
    line = usage_line(usage, "en", RunCost(scorers={}, total=side_by_side([(JudgePrices.of(JudgeConfig(
        model="gpt-4o")), usage)])))
    assert "(online $3.5000 | batch API $1.7500)" in line
    priced = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", price_in_per_mtok=1.0, price_out_per_mtok=2.0,
                         cache=False)
    assert priced.batch_prices() == (0.5, 1.0)
    assert priced.model_copy(update={"price_in_per_mtok_batch": 0.3, "price_out_per_mtok_batch": 0.9}
                             ).batch_prices() == (0.3, 0.9)
    plan = plan_cost(read_dataset(DATA), load_rubrics("rubrics", only=RUBRICS), [], priced)
    assert plan.cost_usd > 0 and plan.batch_cost_usd == pytest.approx(plan.cost_usd / 2)
    assert f"batch API (--batch) ~${plan.batch_cost_usd:.4f}" in plan.format()


def test_cli_run_batch_then_status_and_collect(stub, tmp_path, capsys):
    from rubriceval.cli import main

    judge = ["--judge-base-url", stub.base_url, "--judge-model", "stub", "--store", str(tmp_path / "runs.sqlite")]
    assert main(["run", DATA, "--rubrics", "rubrics", "--only", ",".join(RUBRICS), "--name", "n1", "--batch",
                 *judge]) == 0
    assert "round 1" in capsys.readouterr().out
    assert main(["batch", "status", "n1", *judge]) == 0
    status = capsys.readouterr().out
    assert "batch_stub" in status and "round 1 · requests" in status and "at batch price" in status
    batch_endpoints(stub).wait_idle()
    for batch in batch_endpoints(stub).batches():
        batch_endpoints(stub).advance(batch.id)
    assert main(["batch", "collect", "n1", "--wait", "--poll", "0.05", *judge]) == 0
    captured = capsys.readouterr()
    assert "judgments 18/18" in captured.err and "Business score" in captured.out
    assert RunStore(tmp_path / "runs.sqlite").run_info("n1").status == "complete"


def test_a_request_failing_every_round_is_unscored_after_max_retries(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    endpoints = batch_endpoints(stub)
    endpoints.timings.error_every = 1                          # every request: HTTP 500
    endpoints.script(["request_errors", "request_errors"])
    # Holistic, as in the expired-batch test (one request per judgment).
    config = judge_for(stub, tmp_path, "b.sqlite", max_retries=1, judge_mode="holistic")
    batch_run, first = start(stub, tmp_path, store, config, metrics=[])
    report = collect_until_done(batch_run, stub)
    assert len(endpoints.batches()) == 2 and report.requests.requests == 2 * first.submitted
    assert report.gave_up == first.submitted
    verdicts = store.verdicts(batch_run.run_id)
    judged = [v for v in verdicts if v.unscored_kind is not None]
    assert judged and all(v.unscored_kind == "provider_error" and "HTTP 500" in v.unscored_reason
                          and "asked 2 times" in v.unscored_reason for v in judged)
    batch_run.close()


def test_verdicts_made_in_two_processes_equal_the_online_ones(stub, tmp_path, monkeypatch):
    import rubriceval.batch.parallel as parallel

    monkeypatch.setattr(parallel, "MIN_JUDGMENTS", 0)
    online = online_run(stub, tmp_path)
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, _ = start(stub, tmp_path, store, judge_for(stub, tmp_path, "b.sqlite"))
    batch_run.workers, batch_run.embedder_config, batch_run.window = 2, embedder_for(stub), 4    # 4 windows
    report = collect_until_done(batch_run, stub)
    assert report.round == 2 and report.saved > 0
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    digests = submitted_digests(stub)
    assert len(digests) == len(set(digests))
    batch_run.close()


def test_self_consistency_through_batches_equals_online(stub, tmp_path):
    config = judge_for(stub, tmp_path, "online.sqlite", self_consistency=3)
    online = online_run(stub, tmp_path, metrics=[], config=config)
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, first = start(stub, tmp_path, store, config.model_copy(update={"cache_path": str(tmp_path / "b.sqlite")}),
                             metrics=[])
    seeds = {json.loads(line)["body"]["seed"] for path in (tmp_path / "batches").glob("*.jsonl")
             for line in path.read_text(encoding="utf-8").splitlines()}
    assert seeds == {1, 2, 3}                                  # each call with its own seed, as online
    report = collect_until_done(batch_run, stub)
    assert report.round == 1 and report.requests.requests == first.submitted
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    batch_run.close()


def test_conversation_rubrics_through_batches_equal_online(stub, tmp_path):
    """Conversation scopes (whole conversation; assistant_turn: one structured call, re-ask, per-turn fallback)
    take as many rounds as their steps, with the online bodies and verdicts."""
    data = "datasets/demo_conversations_zh.jsonl"
    only = ["identity_verification", "emotional_soothing_multiturn", "handover_timing", "closing"]
    online = evaluate(data, rubrics=load_rubrics("rubrics", only=only), judge=judge_for(stub, tmp_path, "o.sqlite"),
                      store=tmp_path / "online.sqlite", progress=False)
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, _ = start(stub, tmp_path, store, judge_for(stub, tmp_path, "b.sqlite"), samples=read_dataset(data),
                         rubrics=load_rubrics("rubrics", only=only), metrics=[])
    report = collect_until_done(batch_run, stub)
    assert report.round >= 2                     # the stub's turn lists need re-asks, then per-turn calls
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(online.verdicts)
    batch_run.close()


def test_runs_lists_a_batch_run_with_the_collect_hint(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, _ = start(stub, tmp_path, store, judge_for(stub, tmp_path, "b.sqlite"), metrics=[])
    info = store.run_info(batch_run.run_id)
    assert info.status == "batch" and f"rubriceval batch collect {info.name}" in info.hint
    collect_until_done(batch_run, stub)
    assert store.run_info(batch_run.run_id).hint is None
    batch_run.close()
