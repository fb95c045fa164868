"""Judging a run's samples in worker processes, one per core, when nothing waits on the network.

A checks-and-string-metrics run (no judge, panel or embedder) is pure CPU: ~1 ms a sample, one core busy. Here the
runner's process reads each window from the store, sends its samples in parts to worker processes, and writes the
verdicts they send back — the only process that touches the store, so the store's guarantees are the in-process
run's: verdicts written in batches by one writer, resume skipping the pairs already stored, a killed run losing at
most what was not written yet (its workers see it gone and exit, having written nothing).
"""
from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import Rubric
from rubriceval.verdict import Verdict

MIN_SAMPLES = 5_000         # below this, starting the processes (~2 s of imports each) costs more than it saves
MAX_WORKERS = 4

# (sample, [(scorer, kind) wanted]) — the unit of work a worker judges.
Work = tuple[Sample, list[tuple[str, str]]]


WORKERS_ENV = "RUBRICEVAL_RUN_WORKERS"     # a number of worker processes for such runs; 1: judge in-process


def default_workers(n_samples: int | None) -> int:
    """$RUBRICEVAL_RUN_WORKERS if set; else, for a run of MIN_SAMPLES or more, one worker per idle core (cores
    minus the 1-minute load average, at most MAX_WORKERS), and 1 (in-process) when fewer than 2 cores are idle.

    Why idle cores: the workers cost ~40 % more CPU in all (each imports the scorers; samples and verdicts cross
    a pipe), which pays only when they get cores of their own. On a busy machine (Linux groups a session's
    processes for CPU shares) three processes get about the time one would, and the run is slower."""
    if os.environ.get(WORKERS_ENV, "").strip():
        return max(1, int(os.environ[WORKERS_ENV]))
    if n_samples is None or n_samples < MIN_SAMPLES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    idle = int(cores - os.getloadavg()[0]) if hasattr(os, "getloadavg") else cores
    return min(max(idle, 1), MAX_WORKERS) if idle >= 2 else 1


class _Worker:
    """A worker process's state: the run's rubrics, metrics and metric options, and one event loop."""

    rubrics: dict[str, Rubric] = {}
    metric_options: Any = None
    loop: asyncio.AbstractEventLoop | None = None


def _exit_with_parent() -> None:
    """End this worker when the runner's process ends, however it ends (kill -9 included): a worker holds both
    ends of its task pipe, so it would otherwise wait for work forever."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)


def _start_worker(rubrics: list[Rubric], metric_options: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # Ctrl-C is the runner's to handle; it stops the pool
    threading.Thread(target=_exit_with_parent, daemon=True, name="exit-with-parent").start()
    _Worker.rubrics = {r.id: r for r in rubrics}
    _Worker.metric_options = metric_options
    _Worker.loop = asyncio.new_event_loop()


def _judge_part(part: list[Work]) -> list[list[Verdict]]:
    from rubriceval.runner import sample_verdicts

    async def judge_all() -> list[list[Verdict]]:
        return [[v async for v in sample_verdicts(sample, wanted, _Worker.rubrics, judge=None, panel=None,
                                                  embedder=None, metric_options=_Worker.metric_options)]
                for sample, wanted in part]

    return _Worker.loop.run_until_complete(judge_all())


class WorkerPool:
    """`workers` processes judging parts of windows; `judge(work)` gives a window's verdicts, sample by sample."""

    def __init__(self, workers: int, rubrics: list[Rubric], metric_options: Any):
        self.workers = workers
        context = multiprocessing.get_context("spawn")     # no inherited store connection or event loop
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker,
                                        initargs=(rubrics, metric_options))

    def submit(self, work: list[Work]) -> list[Future]:
        """Send a window's work in one part per worker; the futures in the same order."""
        part = max(1, -(-len(work) // self.workers))
        return [self.pool.submit(_judge_part, work[i:i + part]) for i in range(0, len(work), part)]

    @staticmethod
    def results(futures: list[Future]) -> Iterator[list[Verdict]]:
        """Each sample's verdicts, in the order the window's work was submitted (a worker's error is raised)."""
        for future in futures:
            yield from future.result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
