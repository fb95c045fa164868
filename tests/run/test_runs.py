"""Runs end to end against a loopback OpenAI-compatible stub: stored verdicts, cache, dry-run, faults, kill -9 + resume.
The store tests run twice (`store_factory`): on a SQLite file and on a real PostgreSQL server."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rubriceval import JudgeConfig, RunStore, evaluate, load_rubrics, plan_cost, read_dataset
from rubriceval.run.runner import plan_units
from rubriceval.store.db import Database
from rubriceval.testing.stub_server import StubServer

DATA = "datasets/demo_cs_zh.jsonl"
RUBRICS = "rubrics"


def config(stub, tmp_path, **kw):
    return JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(tmp_path / "cache.sqlite"),
                       timeout_s=kw.pop("timeout_s", 2), max_retries=kw.pop("max_retries", 2), **kw)


def expected_units():
    return plan_units(read_dataset(DATA), load_rubrics(RUBRICS), [])


def test_run_stores_every_verdict_and_a_warm_rerun_makes_no_calls(tmp_path, store_target):
    with StubServer() as stub:
        cfg = config(stub, tmp_path)
        first = evaluate(DATA, rubrics=RUBRICS, judge=cfg, store=store_target, progress=False)
        units = expected_units()
        assert len(first.verdicts) == len(units)
        assert {(v.sample_id, v.scorer) for v in first.verdicts} == {(s.id, r) for s, r, _ in units}
        calls_first = stub.stats.calls["chat"]
        assert calls_first == first.totals["judge"]["calls"] > 0
        second = evaluate(DATA, rubrics=RUBRICS, judge=cfg, store=store_target, progress=False)
        assert stub.stats.calls["chat"] == calls_first            # warm cache: zero judge calls
        assert second.totals["judge"]["cache_hits"] == first.totals["judge"]["requests"]
        assert [v.score for v in second.verdicts] == [v.score for v in first.verdicts]
        # Verdict usage is what this run spent: cached answers are hits with no tokens or cost.
        spent = [v.usage for v in second.verdicts]
        assert sum(u.prompt_tokens + u.completion_tokens for u in spent) == 0 == sum(u.calls for u in spent)
        assert sum(u.cache_hits for u in spent) == first.totals["judge"]["requests"]
    frame = first.to_pandas()
    assert {"sample_id", "scorer", "score", "unscored_reason", "feedback", "usage_prompt_tokens"} <= set(frame.columns)


def test_dry_run_counts_equal_the_calls_a_run_makes(tmp_path):
    samples, rubrics = read_dataset(DATA), load_rubrics(RUBRICS)
    with StubServer() as stub:
        cfg = config(stub, tmp_path)
        plan = plan_cost(samples, rubrics, [], cfg)
        assert plan.cached == 0
        result = evaluate(samples, rubrics=rubrics, judge=cfg, store=tmp_path / "runs.sqlite", progress=False)
        assert plan.calls == stub.stats.calls["chat"] == result.totals["judge"]["calls"]
        assert plan_cost(samples, rubrics, [], cfg).cached == plan.calls


def _edited(rubric):
    """An edit of what the judge reads in the rubric's mode: the criterion of a holistic judgment, the questions of
    a checklist (whose prompts show each question, not the rubric's criterion)."""
    if rubric.judge_mode == "holistic":
        return rubric.model_copy(update={"criterion": rubric.criterion + "\n语气必须礼貌。"})
    item = rubric.checklist_items[0]
    asked = item.model_copy(update={"questions": [q.model_copy(update={"ask": q.ask + "（语气必须礼貌）"})
                                                  for q in item.questions]})
    return rubric.model_copy(update={"items": [asked if i is item else i for i in rubric.items]})


@pytest.mark.parametrize("mode", ["holistic", None])       # None: as it ships (checklist_fitted → the rule here)
def test_edited_rubric_is_never_served_a_stale_verdict(tmp_path, mode):
    from rubriceval.scoring.judge_mode import with_judge_mode

    samples = read_dataset(DATA)
    with StubServer() as stub:
        cfg = config(stub, tmp_path)
        rubrics, _ = with_judge_mode(load_rubrics(RUBRICS, only=["emotional_soothing"]), mode,
                                     judge_models=[cfg.model])
        evaluate(samples, rubrics=rubrics, judge=cfg, store=tmp_path / "r.sqlite", progress=False)
        before = stub.stats.calls["chat"]
        assert before > 0
        evaluate(samples, rubrics=[_edited(rubrics[0])], judge=cfg, store=tmp_path / "r.sqlite", progress=False)
        assert stub.stats.calls["chat"] == 2 * before


def test_twenty_percent_faults_lose_nothing_and_count_each_failure(tmp_path, store_target):
    rates = {"429": 0.05, "500": 0.05, "timeout": 0.04, "garbage": 0.03, "malformed": 0.03}
    with StubServer(fault_rates=rates, seed=7, retry_after_s=0.01, hang_s=1.0) as stub:
        cfg = config(stub, tmp_path, timeout_s=0.5, max_retries=1, concurrency=8)
        result = evaluate(DATA, rubrics=RUBRICS, judge=cfg, store=store_target, progress=False)
        faults = stub.stats.faults
    units = expected_units()
    keys = [(v.sample_id, v.scorer) for v in result.verdicts]
    assert len(keys) == len(set(keys)) == len(units)                 # none lost, none duplicated
    for v in result.verdicts:
        assert (v.score is not None) != bool(v.unscored_reason)     # scored xor unscored-with-reason
    failures = result.totals["judge"]["failures"]
    assert sum(faults.values()) > 0 and failures                     # the run summary counts failure kinds
    assert failures.get("429", 0) == faults.get("429", 0)
    assert failures.get("500", 0) == faults.get("500", 0)


def _verdict_keys(db: Path | str) -> set[tuple[str, str]]:
    conn = Database(db)
    try:
        return {(r[0], r[1]) for r in conn.execute("SELECT sample_id, scorer FROM verdicts").fetchall()}
    finally:
        conn.close()


def _count_verdicts(db: Path | str) -> int:
    try:
        conn = Database(db)
    except Exception:                      # not created yet
        return 0
    try:
        return conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] if conn.table_exists("verdicts") else 0
    finally:
        conn.close()


def test_kill_9_mid_run_then_resume_matches_an_uninterrupted_run(tmp_path, store_factory):
    """A subprocess run against a slow stub is SIGKILLed mid-way; --resume finishes it without repeating work."""
    stub_proc = subprocess.Popen([sys.executable, "-m", "rubriceval.testing.stub_server", "--port", "0",
                                  "--latency", "0.15"], stdout=subprocess.PIPE, text=True)
    try:
        line = stub_proc.stdout.readline()
        base_url = line.strip().split()[-1]
        env = {**os.environ, "RUBRICEVAL_CACHE_DIR": str(tmp_path / "cache_a"), "RUBRICEVAL_JUDGE_BASE_URL": base_url,
               "RUBRICEVAL_JUDGE_MODEL": "stub"}
        db = store_factory("killed")
        cmd = [sys.executable, "-m", "rubriceval.cli", "run", DATA, "--rubrics", RUBRICS, "--store", str(db),
               "--name", "r1", "--concurrency", "2", "--quiet"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        total = len(expected_units())
        deadline = time.time() + 60
        while _count_verdicts(db) < total // 3 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        kill_time = time.time()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done_at_kill = _count_verdicts(db)
        assert 0 < done_at_kill < total
        # The judge calls the units not stored at the kill make (a checklist unit asks one call per question).
        from rubriceval.run.planning import planned_judge_calls

        done_keys = _verdict_keys(db)
        left_calls = sum(1 for c in planned_judge_calls(read_dataset(DATA), load_rubrics(RUBRICS), [],
                                                        JudgeConfig(base_url=base_url, model="stub"))
                         if (c.sample_id, c.scorer) not in done_keys)
        from rubriceval.testing import fetch_stats
        calls_before = fetch_stats(base_url).calls["chat"]
        resumed = subprocess.run([sys.executable, "-m", "rubriceval.cli", "run", "--resume", "r1", "--store", str(db),
                                  "--quiet"], env=env, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        stats = fetch_stats(base_url)
        # A call the server answered just as the client died was never received: repeating it is right. Any call
        # the client had received (answered well before the kill) must not be made again.
        first_finish = {}
        for r in stats.requests:
            if r.endpoint == "chat" and r.status == 200:
                first_finish.setdefault(r.digest, r.finished)
        repeated = stats.repeated("chat")
        received_then_repeated = [d for d in repeated if first_finish[d] < kill_time - 0.1]
        assert not received_then_repeated, "a completed judge call was made twice"
        assert len(repeated) <= 2                                    # at most the calls in flight (concurrency 2)
        resumed_calls = stats.calls["chat"] - calls_before
        # Uninterrupted reference run with its own cache, same stub.
        env_b = {**env, "RUBRICEVAL_CACHE_DIR": str(tmp_path / "cache_b")}
        ref_db = store_factory("ref")
        ref = subprocess.run(cmd[:7] + ["--store", str(ref_db), "--name", "ref", "--concurrency", "4", "--quiet"],
                             env=env_b, capture_output=True, text=True, timeout=120)
        assert ref.returncode == 0, ref.stderr
    finally:
        stub_proc.kill()
    store_a, store_b = RunStore(db), RunStore(ref_db)
    a = {(v.sample_id, v.scorer): (v.score, v.unscored_reason) for v in store_a.verdicts("r1")}
    b = {(v.sample_id, v.scorer): (v.score, v.unscored_reason) for v in store_b.verdicts("ref")}
    assert len(a) == total and a == b
    assert store_a.run_info("r1").status == "complete"
    assert resumed_calls <= left_calls


def test_rescore_changed_judges_only_corrected_rows(tmp_path, store_target):
    import asyncio

    from rubriceval import AuditStore
    from rubriceval.run.evaluate import rescore_changed

    db = store_target
    with StubServer() as stub:
        cfg = config(stub, tmp_path)
        first = evaluate(DATA, rubrics=RUBRICS, judge=cfg, store=db, progress=False, name="base")
        calls_before = stub.stats.calls["chat"]
        with AuditStore(db) as audit:
            item = audit.item("base", "pts-invalid", "resolution_completeness")
            audit.edit_ground_truth("base", "pts-invalid", editor="王专家",
                                    expected_sample_version=item.versions.sample,
                                    ground_truth="积分有效期为 12 个月，到期自动清零。")
        store = RunStore(db)
        new_id, totals, n_changed = asyncio.run(rescore_changed(store, "base", judge_config=cfg, progress=False))
        assert n_changed == 1
        new_calls = stub.stats.calls["chat"] - calls_before
        # Only pts-invalid's judge items were re-asked (2 rubrics apply to it and judge it).
        assert 0 < new_calls <= 2
    new = {(v.sample_id, v.scorer) for v in store.verdicts(new_id)}
    assert new == {(v.sample_id, v.scorer) for v in first.verdicts}
    sample = {s.id: s for s in store.samples(new_id)}["pts-invalid"]
    assert sample.ground_truth.startswith("积分有效期为 12 个月，到期")
