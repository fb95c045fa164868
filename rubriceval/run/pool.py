"""Judging a stored run in worker processes, one per idle core, when nothing waits on the network.

A checks-and-string-metrics run (no judge, panel or embedder) is pure CPU: ~1.3 ms a sample, a third of it writing
the verdicts, one core busy. Here each worker process runs the runner's own window loop (`runner.execute`) over
every n-th window of the run's samples, reading them from the store and writing their verdicts itself, as
`batch collect --workers` does (rubriceval/batch/parallel.py). Windows are disjoint, so each (sample, scorer) pair
is judged and written by one process only; the store's guarantees are the in-process run's: verdicts written in
batches (SQLite: one writer at a time, WAL; PostgreSQL: concurrent transactions), a resumed run skipping the pairs
already stored, a killed run losing at most what was not written yet. A worker ends with the runner's process,
however that ends (kill -9 included), so no worker writes to a run its runner has left.

Why the workers write (and not the runner's process): writing is ~0.45 ms of a sample's 1.3 ms (a verdict's JSON,
the insert); done by one parent process, plus each verdict's trip through a pipe, the same run took 70 % more CPU
in all and the parent became the bottleneck.
"""
from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from rubriceval.common.errors import RubricEvalError
from rubriceval.core.totals import RunTotals
from rubriceval.rubric.schema import Rubric

if TYPE_CHECKING:
    from rubriceval.store.runs import RunStore

# The runner's window loop (run/runner.execute), handed in so this module does not import the runner.
WindowLoop = Callable[..., Coroutine[Any, Any, RunTotals]]   # an async def: asyncio.run takes it

MIN_SAMPLES = 5_000         # below this, starting the processes (~2 s of imports each) costs more than it saves
MAX_WORKERS = 4
WORKERS_ENV = "RUBRICEVAL_RUN_WORKERS"     # a number of worker processes for such runs; 1: judge in-process


def default_workers(n_samples: int | None) -> int:
    """$RUBRICEVAL_RUN_WORKERS if set; else, for a run of MIN_SAMPLES or more, one worker per idle core (cores
    minus the 1-minute load average, rounded; at most MAX_WORKERS), and 1 (in-process) when that is under 2: an
    idle 2-core machine (load 0.2) gets 2 workers, a busy one judges in-process.

    Why idle cores: on a busy machine (Linux groups a session's processes for CPU shares) two processes get about
    the time one would, and each imports the scorers again."""
    setting = os.environ.get(WORKERS_ENV, "").strip()
    if setting:
        if not setting.isdigit() or int(setting) < 1:
            raise RubricEvalError(f"{WORKERS_ENV}={setting!r} is not a number of processes",
                                  hint=f"set {WORKERS_ENV} to 1 (in-process), 2, …, or unset it for one per idle core")
        return int(setting)
    if n_samples is None or n_samples < MIN_SAMPLES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    idle = int(cores - os.getloadavg()[0] + 0.5) if hasattr(os, "getloadavg") else cores
    return min(idle, cores, MAX_WORKERS) if idle >= 2 else 1


def _exit_with_parent() -> None:
    """End this worker when the runner's process ends, however it ends (kill -9 included)."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)


class _Worker:
    done_samples: Any = None      # where a worker says how many samples each window had (the progress bar)
    stop: Any = None              # set by the runner (Ctrl-C, another worker's error): end after this window


class _Stopped(Exception):
    """A worker asked to stop ends its shard after the window it was writing."""


def _start_worker(done_samples: Any, stop: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # Ctrl-C is the runner's to handle: it sets `stop`
    threading.Thread(target=_exit_with_parent, daemon=True, name="exit-with-parent").start()
    _Worker.done_samples, _Worker.stop = done_samples, stop


def _window_written(samples: int) -> None:
    _Worker.done_samples.put(samples)
    if _Worker.stop.is_set():
        raise _Stopped()


def _judge_shard(execute: WindowLoop, store_target: Any, run_id: str, rubrics: list[Rubric], metrics: list[str],
                 metric_options: Any, window: int, shard: tuple[int, int]) -> dict:
    """One worker: the runner's window loop over its shard of windows, in this process; its totals back."""
    from rubriceval.store.runs import RunStore

    store = RunStore(store_target)
    try:
        totals = asyncio.run(execute(store, run_id, None, rubrics, metrics, judge=None, progress=False,
                                     window=window, metric_options=metric_options, shard=shard,
                                     on_window=_window_written))
    finally:
        store.close()
    return totals.as_dict()


async def run_in_processes(execute: WindowLoop, store: RunStore, run_id: str, rubrics: list[Rubric],
                           metrics: list[str], *,
                           metric_options: Any, window: int, workers: int, progress: bool, total: int | None
                           ) -> RunTotals:
    """The run judged by `workers` processes, each taking every n-th window with the runner's window loop
    `execute` (a module-level function, so it pickles by name); their totals summed. Waits on the
    event loop, so Ctrl-C (asyncio.run cancels the task) reaches it: the workers then stop after their window."""
    context = multiprocessing.get_context("spawn")     # no inherited store connection or event loop
    started = time.perf_counter()
    done_samples, stop = context.SimpleQueue(), context.Event()
    bar = tqdm(total=total, unit="sample", disable=not progress, dynamic_ncols=True,
               desc=f"evaluating ({workers} processes)")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker,
                               initargs=(done_samples, stop))
    try:
        futures = [pool.submit(_judge_shard, execute, store.path, run_id, rubrics, metrics, metric_options, window,
                               (shard, workers)) for shard in range(workers)]
        pending = set(futures)
        while pending:
            await asyncio.sleep(0.25)
            finished, pending = wait(pending, timeout=0, return_when=FIRST_EXCEPTION)
            for future in finished:
                future.result()                # a worker's error: raised now, the others stopped
            while not done_samples.empty():
                bar.update(done_samples.get())
        results = [RunTotals(**future.result()) for future in futures]      # a worker's error is raised here
    except BaseException:
        stop.set()                     # Ctrl-C or a worker's error: the others end after their current window
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    return _summed(results, wall_s=time.perf_counter() - started)


def _summed(parts: list[RunTotals], wall_s: float) -> RunTotals:
    totals = RunTotals(wall_s=wall_s, judge=parts[0].judge if parts else {})
    for part in parts:
        for name in ("units_total", "units_done", "units_skipped", "scored", "unscored", "embedding_calls"):
            setattr(totals, name, getattr(totals, name) + getattr(part, name))
        for kind, n in part.unscored_by_kind.items():
            totals.unscored_by_kind[kind] = totals.unscored_by_kind.get(kind, 0) + n
    return totals
