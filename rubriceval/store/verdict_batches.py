"""Verdicts reach the run store in batches: one transaction (executemany) per batch instead of one per verdict.

A batch is written when it holds `size` verdicts, when `every_s` seconds have passed since the last write, and
whenever the caller flushes (the runner does at the end of every window). So a run killed with kill -9 loses at most
the last fraction of a second of verdicts; the judge cache keeps every answered call, so resuming repeats no paid
call either.
"""
from __future__ import annotations

import time

from rubriceval.core.verdict import Verdict
from rubriceval.store.runs import RunStore

BATCH_SIZE = 1000
BATCH_EVERY_S = 0.25


class VerdictBatches:
    def __init__(self, store: RunStore, run_id: str, *, size: int = BATCH_SIZE, every_s: float = BATCH_EVERY_S):
        self.store, self.run_id, self.size, self.every_s = store, run_id, size, every_s
        self._pending: list[tuple[Verdict, str]] = []
        self._last = time.monotonic()

    def add(self, verdict: Verdict, input_hash: str) -> None:
        self._pending.append((verdict, input_hash))
        if len(self._pending) >= self.size or time.monotonic() - self._last >= self.every_s:
            self.flush()

    def flush(self) -> None:
        self._last = time.monotonic()
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        self.store.save_verdicts(self.run_id, batch)
