"""A checks-and-string-metrics run judged in worker processes (rubriceval/run/pool.py, each a shard of windows)
stores the same verdicts as one judged in-process; resuming skips what is stored; a run killed with kill -9 leaves
no worker running and `--resume` completes it with no pair lost or stored twice."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.evaluate import start_run
from rubriceval.run.pool import WORKERS_ENV, default_workers
from rubriceval.run.runner import execute
from rubriceval.store.runs import RunStore

ROOT = Path(__file__).resolve().parents[2]
RUBRICS = str(ROOT / "benchmarks" / "pipeline" / "scale_rubrics")      # deterministic checks only: no judge
METRICS = ["rouge_l", "bleu", "nonllm_context_recall"]
COLUMNS = ("sample_id, scorer, kind, scorer_version, score, unscored_kind, unscored_reason, feedback, evidence_json, "
           "details_json, passed, usage_json, input_hash")


def _row(i: int) -> dict:
    promise = "我们保证一定" if i % 7 == 0 else "我们会尽快"
    greeting = ["您好，", "抱歉让您久等，", ""][i % 3]
    return {"id": f"s{i:04d}", "question": f"订单{10000000 + i}什么时候退款？",
            "answer": f"{greeting}{promise}在{i % 5 + 1}个工作日内处理订单{10000000 + i}的退款。" + "谢谢" * (i % 4),
            "ground_truth": f"退款会在{i % 5 + 1}个工作日内处理。",
            "contexts": [f"退款政策：订单在{i % 5 + 1}个工作日内退款。", "运费由商家承担。"],
            "reference_contexts": [f"退款政策：订单在{i % 5 + 1}个工作日内退款。"]}


def _samples(n: int) -> list[Sample]:
    return [Sample.model_validate(_row(i)) for i in range(n)]


def _verdicts(path: Path, run: str) -> dict[tuple[str, str], tuple]:
    conn = sqlite3.connect(path)
    run_id = conn.execute("SELECT run_id FROM runs WHERE name = ?", (run,)).fetchone()[0]
    rows = conn.execute(f"SELECT {COLUMNS} FROM verdicts WHERE run_id = ?", (run_id,)).fetchall()
    conn.close()
    return {(r[0], r[1]): r[2:] for r in rows}


def _run(path: Path, name: str, samples: list[Sample], workers: int, *, resume: bool = False):
    store = RunStore(path)
    rubrics = load_rubrics(RUBRICS)
    try:
        run_id = store.resolve(name) if resume else start_run(samples, rubrics, METRICS, store=store,
                                                               judge_config=JudgeConfig(), name=name)[0]
        return asyncio.run(execute(store, run_id, None, rubrics, METRICS, judge=None, progress=False, window=16,
                                   workers=workers))
    finally:
        store.close()


def test_workers_store_the_same_verdicts_as_one_process(tmp_path):
    samples = _samples(70)                       # 5 windows of 16: several parts in flight
    alone = _run(tmp_path / "alone.sqlite", "r", samples, workers=1)
    pooled = _run(tmp_path / "pooled.sqlite", "r", samples, workers=2)
    expected = _verdicts(tmp_path / "alone.sqlite", "r")
    assert len(expected) == 70 * 5
    assert _verdicts(tmp_path / "pooled.sqlite", "r") == expected
    assert (pooled.units_done, pooled.scored, pooled.unscored) == (alone.units_done, alone.scored, alone.unscored)


def test_a_resumed_pooled_run_judges_only_what_is_missing(tmp_path):
    samples = _samples(40)
    path = tmp_path / "runs.sqlite"
    _run(path, "r", samples, workers=1)
    full = _verdicts(path, "r")
    conn = sqlite3.connect(path)                 # as if the run had died: a third of its verdicts never written
    with conn:
        conn.execute("DELETE FROM verdicts WHERE CAST(substr(sample_id, 2) AS INTEGER) % 3 = 0")
    conn.close()
    missing = len(full) - len(_verdicts(path, "r"))
    totals = _run(path, "r", samples, workers=2, resume=True)
    assert totals.units_done == missing and totals.units_skipped == len(full) - missing
    assert _verdicts(path, "r") == {k: v for k, v in full.items()}


def test_default_workers_follow_the_setting_size_and_idle_cores(monkeypatch):
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert default_workers(10) == 3
    for bad in ("two", "0", "-1"):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(RubricEvalError, match=WORKERS_ENV):
            default_workers(10)
    monkeypatch.delenv(WORKERS_ENV)
    assert default_workers(100) == 1                         # small run: in-process
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    assert default_workers(1_000_000) == 2                   # an idle 2-core machine: both cores
    monkeypatch.setattr(os, "getloadavg", lambda: (0.7, 0.0, 0.0))
    assert default_workers(1_000_000) == 1                   # 1.3 idle cores: a second process would not get one
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.3, 0.0, 0.0))
    assert default_workers(1_000_000) == 4                   # at most MAX_WORKERS
    monkeypatch.setattr(os, "getloadavg", lambda: (5.0, 0.0, 0.0))
    assert default_workers(1_000_000) == 3


def _count(path: Path) -> int:
    try:
        conn = sqlite3.connect(path, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _workers_only(pids: list[int]) -> list[int]:
    """The pool's worker processes among a runner's children; not multiprocessing's resource tracker, which
    ends on its own once it reads the runner's end of its pipe close (a moment after the runner has exited)."""
    workers = []
    for pid in pids:
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                workers.append(pid)
        except OSError:
            pass
    return workers


def _gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.time() + seconds
    while _alive(pids) and time.time() < deadline:
        time.sleep(0.05)
    return not _alive(pids)


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                alive.append(pid)
        except OSError:
            pass
    return alive


CLI = [sys.executable, "-m", "rubriceval.cli", "run"]


def _default_sigint() -> None:
    """The CLI under test gets Ctrl-C's default disposition, as from a terminal: a suite started as a background job
    of a non-interactive shell (`make test &`, nohup) runs with SIGINT ignored, which its children inherit, and a
    Python started with SIGINT ignored never raises KeyboardInterrupt (the run would finish, exit 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _pooled_cli_run(tmp_path: Path, rows: int, stop_at: int, sig: int, workers: int = 2
                    ) -> tuple[Path, dict, list[int], list[int], int]:
    """A CLI run of `rows` rows in `workers` processes, sent `sig` once `stop_at` verdicts are stored: (store, env,
    the runner's worker processes when it was signalled, those of them still running when it had exited, its exit
    code). Its other children (multiprocessing's resource tracker) may take a moment longer to end."""
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(_row(i), ensure_ascii=False) + "\n" for i in range(rows)), encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    env = {**os.environ, WORKERS_ENV: str(workers), "RUBRICEVAL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([*CLI, str(data), "--rubrics", RUBRICS, "--metrics", ",".join(METRICS), "--store",
                             str(store), "--name", "big", "--quiet"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_default_sigint)
    deadline = time.time() + 120
    while _count(store) < stop_at and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    children = _children(proc.pid)
    worker_pids = _workers_only(children)
    proc.send_signal(sig)
    code = proc.wait(timeout=60)
    alive_at_exit = _alive(worker_pids)
    assert _gone_within(children, 30)          # nothing the runner started outlives it for long
    return store, env, worker_pids, alive_at_exit, code


def _resume_and_count(store: Path, env: dict) -> tuple[int, int, str]:
    """--resume the run; then its verdicts, distinct (sample, scorer) pairs and status."""
    resumed = subprocess.run([*CLI, "--resume", "big", "--store", str(store), "--quiet"], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    conn = sqlite3.connect(store)
    total, distinct = conn.execute("SELECT COUNT(*), COUNT(DISTINCT sample_id || '/' || scorer) FROM verdicts"
                                   ).fetchone()
    status = conn.execute("SELECT status FROM runs WHERE name = 'big'").fetchone()[0]
    conn.close()
    return total, distinct, status


@pytest.mark.skipif(not Path("/proc").exists(), reason="reads worker pids from /proc")
def test_kill_9_of_a_pooled_run_then_resume_completes_it_exactly_once(tmp_path):
    store, env, workers, _, _ = _pooled_cli_run(tmp_path, 1200, stop_at=1000, sig=signal.SIGKILL)
    deadline = time.time() + 30                      # the workers see their runner gone and exit
    while _alive(workers) and time.time() < deadline:
        time.sleep(0.05)
    assert not _alive(workers) and len(workers) >= 2
    at_kill = _count(store)
    time.sleep(1)
    assert _count(store) == at_kill and 0 < at_kill < 6000      # nothing written after they are gone
    assert _resume_and_count(store, env) == (1200 * 5, 1200 * 5, "complete")


@pytest.mark.skipif(not Path("/proc").exists(), reason="reads worker pids from /proc")
@pytest.mark.parametrize("n_workers", [2, 1])
def test_ctrl_c_stops_a_run_within_a_window_and_resume_finishes_it(tmp_path, n_workers):
    """SIGINT to the runner: its workers stop after the window they are writing (they ignore SIGINT themselves),
    or the runner itself does (in-process: before, no await ever yielded, so one Ctrl-C was never seen and the run
    went on to the end); the run is left interrupted, and --resume completes it."""
    store, env, workers, alive_at_exit, code = _pooled_cli_run(tmp_path, 6000, stop_at=100, sig=signal.SIGINT,
                                                               workers=n_workers)
    assert code != 0 and len(workers) == (n_workers if n_workers > 1 else 0) and not alive_at_exit
    conn = sqlite3.connect(store)
    stored, status = conn.execute("SELECT (SELECT COUNT(*) FROM verdicts), status FROM runs WHERE name = 'big'"
                                  ).fetchone()
    conn.close()
    assert status == "interrupted" and 0 < stored < 6000 * 5
    assert _resume_and_count(store, env) == (6000 * 5, 6000 * 5, "complete")
