"""The resumable collection loop shared by questions and conversations, and its output file.

One JSON object per line, appended and fsynced one row at a time as each finishes (success or failure), so a
crash or Ctrl-C loses at most the rows in flight. On start the existing output is read back (the last line per id
wins; a torn last line — the process died mid-write — is ignored; a bad line elsewhere means the file is not a
collect result): rows the caller calls done are skipped, the others are collected again and replace the old
row. At the end, also after an interruption, the file is rewritten atomically in input order, one line per id,
followed by rows whose id is not in the input (kept, never thrown away).
"""
from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, Field, ValidationError
from tqdm import tqdm

from rubriceval.collect.targets import TargetRunner
from rubriceval.common.errors import DatasetError


class Row(Protocol):
    id: str
    metadata: dict[str, Any]       # metadata["error"]: None on success, else why the row failed


R = TypeVar("R", bound=Row)


class RowError(BaseModel):
    id: str
    error: str


class CollectSummary(BaseModel):
    out_path: str
    target: str
    total: int                     # rows (questions or conversations) in the input
    skipped: int                   # already collected successfully by an earlier run
    attempted: int                 # asked in this run
    succeeded: int                 # of attempted
    failed: int                    # of attempted; recorded in the output with metadata.error
    foreign_rows: int = 0          # rows in the output whose id is not in the input: kept, not touched
    elapsed_s: float
    errors: list[RowError] = Field(default_factory=list)
    unit: str = "rows"

    @property
    def rows_per_minute(self) -> float:
        return 60.0 * self.attempted / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def describe(self) -> str:
        text = (f"{self.succeeded}/{self.attempted} {self.unit} collected from {self.target} "
                f"({self.failed} failed, {self.skipped} already done, {self.total} total) in {self.elapsed_s:.1f}s "
                f"({self.rows_per_minute:.1f} {self.unit}/min) → {self.out_path}")
        for item in self.errors[:10]:
            text += f"\n  failed {item.id}: {item.error}"
        if len(self.errors) > 10:
            text += f"\n  … and {len(self.errors) - 10} more (metadata.error in the output)"
        return text


def read_partial(path: Path, parse: Callable[[dict[str, Any]], R]) -> tuple[dict[str, R], list[str]]:
    """Rows of an earlier (possibly interrupted) run by id, with the ids in first-seen order."""
    rows: dict[str, R] = {}
    order: list[str] = []
    if not path.exists():
        return rows, order
    lines = path.read_text(encoding="utf-8").split("\n")     # not splitlines(): U+2028/U+0085 may sit inside a row
    if lines and not lines[-1]:
        lines.pop()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = parse(json.loads(line))
        except (json.JSONDecodeError, ValidationError, ValueError, TypeError) as exc:
            if lineno == len(lines):
                break
            raise DatasetError(f"cannot resume: the existing output is not a collect result ({exc})",
                               file=str(path), line=lineno,
                               hint="choose another output file or delete this one") from None
        if row.id not in rows:
            order.append(row.id)
        rows[row.id] = row
    return rows, order


def append_record(handle: IO[str], record: dict[str, Any]) -> None:
    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    handle.flush()
    os.fsync(handle.fileno())


def rewrite_atomically(path: Path, records: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


@dataclass(frozen=True)
class Collection(Generic[R]):
    """What to collect: the input `items` (each with an `id`), how one is collected (`work`), how a row is
    written (`record`) and read back (`parse`), and which earlier rows count as done."""

    out: Path
    items: list[Any]
    parse: Callable[[dict[str, Any]], R]                 # a line of the output → a row
    is_done: Callable[[R | None, Any], bool]             # (earlier row or None, item) → skip the item
    work: Callable[[Any], Awaitable[R]]                  # item → row (never raises for the bot's failures)
    record: Callable[[R], dict[str, Any]]                # row → the line written
    unit: str = "rows"


async def collect_resumably(job: Collection[R], runner: TargetRunner, *, owns_runner: bool, concurrency: int,
                            progress: bool) -> CollectSummary:
    out = job.out
    try:
        previous, previous_order = read_partial(out, job.parse)
    except BaseException:
        if owns_runner:
            await runner.aclose()
        raise
    pending = [item for item in job.items if not job.is_done(previous.get(item.id), item)]
    input_ids = {item.id for item in job.items}
    foreign_ids = [i for i in previous_order if i not in input_ids]
    results = {item.id: previous[item.id] for item in job.items if job.is_done(previous.get(item.id), item)}
    errors: list[RowError] = []
    succeeded = 0
    started = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    queue: asyncio.Queue = asyncio.Queue()
    for item in pending:
        queue.put_nowait(item)
    bar = tqdm(total=len(job.items), initial=len(job.items) - len(pending), desc="collect", unit=job.unit,
               disable=not progress)

    async def worker(handle: IO[str]) -> None:
        nonlocal succeeded
        while not queue.empty():
            row = await job.work(queue.get_nowait())
            append_record(handle, job.record(row))    # no await before the fsync: rows are written whole
            results[row.id] = row
            if row.metadata.get("error"):
                errors.append(RowError(id=row.id, error=row.metadata["error"]))
            else:
                succeeded += 1
            bar.set_postfix(errors=len(errors), refresh=False)
            bar.update(1)

    completed = False
    try:
        with out.open("a", encoding="utf-8") as handle:
            tasks = [asyncio.ensure_future(worker(handle)) for _ in range(max(1, min(concurrency, len(pending))))]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
        completed = True
    finally:
        bar.close()
        if owns_runner:
            await runner.aclose()
        # An item not collected again keeps its earlier row, so nothing recorded is lost.
        final = [results.get(i.id) or previous[i.id] for i in job.items if i.id in results or i.id in previous]
        rewrite_atomically(out, [job.record(r) for r in final + [previous[i] for i in foreign_ids]])
        if not completed:
            tqdm.write(f"collection interrupted: {len(final)} of {len(job.items)} {job.unit} saved in {out}; "
                       "run the same command again to resume")
    return CollectSummary(
        out_path=str(out), target=runner.description, total=len(job.items), skipped=len(job.items) - len(pending),
        attempted=succeeded + len(errors), succeeded=succeeded, failed=len(errors), foreign_rows=len(foreign_ids),
        elapsed_s=time.perf_counter() - started, errors=errors, unit=job.unit)
