"""Run a question set through a live chatbot and save answers + retrieved contexts, resumably.

Every finished row — success or failure — is appended to the output JSONL and fsynced before the next one is
written, so a crash or Ctrl-C loses at most the calls in flight. On start the existing output is read back: rows
that succeeded for the same id and question are skipped; failed rows are asked again and their new result
replaces the old one. At the end (also after an interruption) the file is rewritten atomically in question order,
one line per id. A failed row keeps answer "" and says why in metadata.error; it is never dropped.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from tqdm import tqdm

from rubriceval.collect.targets import (AnyTarget, TargetContractError, TargetRunner, TransientTargetError,
                                        open_target)
from rubriceval.data.io import read_dataset
from rubriceval.data.sample import Sample
from rubriceval.errors import DatasetError

# Metadata keys this module owns; stale values from an earlier run are replaced, never merged.
_COLLECT_KEYS = ("latency_s", "error", "target", "attempts")


class RowError(BaseModel):
    id: str
    error: str


class CollectSummary(BaseModel):
    out_path: str
    target: str
    total: int                     # questions in the input
    skipped: int                   # already collected successfully by an earlier run
    attempted: int                 # asked in this run
    succeeded: int                 # of attempted
    failed: int                    # of attempted; recorded in the output with metadata.error
    foreign_rows: int = 0          # rows in the output whose id is not in the input: kept, not touched
    elapsed_s: float
    errors: list[RowError] = Field(default_factory=list)

    @property
    def rows_per_minute(self) -> float:
        return 60.0 * self.attempted / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def describe(self) -> str:
        text = (f"{self.succeeded}/{self.attempted} rows collected from {self.target} "
                f"({self.failed} failed, {self.skipped} already done, {self.total} total) in {self.elapsed_s:.1f}s "
                f"({self.rows_per_minute:.1f} rows/min) → {self.out_path}")
        for item in self.errors[:10]:
            text += f"\n  failed {item.id}: {item.error}"
        if len(self.errors) > 10:
            text += f"\n  … and {len(self.errors) - 10} more (metadata.error in the output)"
        return text


def read_partial_output(path: Path) -> tuple[dict[str, Sample], list[str]]:
    """Rows of an earlier (possibly interrupted) run: the last line per id wins, in first-seen id order.

    A torn last line (the process died mid-write) is ignored; a bad line elsewhere means the file is not ours.
    """
    rows: dict[str, Sample] = {}
    order: list[str] = []
    if not path.exists():
        return rows, order
    lines = path.read_text(encoding="utf-8").splitlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            sample = Sample.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            if lineno == len(lines):
                break
            raise DatasetError(f"cannot resume: the existing output is not a collect result ({exc})",
                               file=str(path), line=lineno,
                               hint="choose another output file or delete this one") from None
        if sample.id not in rows:
            order.append(sample.id)
        rows[sample.id] = sample
    return rows, order


def _is_done(previous: Sample | None, question: Sample) -> bool:
    return (previous is not None and previous.question == question.question
            and not previous.metadata.get("error"))


def _append_row(handle, sample: Sample) -> None:
    handle.write(json.dumps(sample.model_dump(), ensure_ascii=False) + "\n")
    handle.flush()
    os.fsync(handle.fileno())


def _rewrite_atomically(path: Path, samples: list[Sample]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for sample in samples:
            handle.write(json.dumps(sample.model_dump(), ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _result_row(question: Sample, *, answer: str, contexts: list[str], latency_s: float, error: str | None,
                target: str, attempts: int) -> Sample:
    metadata: dict[str, Any] = {k: v for k, v in question.metadata.items() if k not in _COLLECT_KEYS}
    metadata.update(latency_s=round(latency_s, 3), error=error, target=target, attempts=attempts)
    return question.model_copy(update={"answer": answer, "contexts": contexts, "metadata": metadata})


async def _ask_with_retries(runner: TargetRunner, question: Sample, *, timeout_s: float, retries: int,
                            backoff_s: float) -> Sample:
    started = time.perf_counter()
    error = ""
    attempts = 0
    while attempts <= retries:
        attempts += 1
        try:
            reply = await asyncio.wait_for(runner.ask(question.question, question.id), timeout=timeout_s)
            return _result_row(question, answer=reply.answer, contexts=reply.contexts,
                               latency_s=time.perf_counter() - started, error=None, target=runner.description,
                               attempts=attempts)
        except asyncio.TimeoutError:
            error = f"timed out after {timeout_s:g}s"
        except TargetContractError as exc:
            error = str(exc)
            break                      # the same input will break the same way again
        except TransientTargetError as exc:
            error = str(exc)
        except Exception as exc:       # noqa: BLE001 — the target is user code; any failure is recorded per row
            error = f"{type(exc).__name__}: {exc}"
        if attempts <= retries:
            await asyncio.sleep(backoff_s * 2 ** (attempts - 1) * (0.5 + random.random()))
    return _result_row(question, answer="", contexts=[], latency_s=time.perf_counter() - started,
                       error=f"{error} (after {attempts} attempt(s))", target=runner.description,
                       attempts=attempts)


async def collect(questions_path: str | Path, target: AnyTarget,
                  out_path: str | Path, *, concurrency: int = 4, timeout_s: float = 60.0, retries: int = 2,
                  progress: bool = True, backoff_s: float = 0.5) -> CollectSummary:
    """Ask every question in `questions_path` of `target` and write the answers to `out_path` (JSONL).

    The input needs a `question` column; id, ground_truth, reference_contexts, tags, intent and metadata are kept.
    Each output row adds answer, contexts and metadata.latency_s / error (None on success) / target / attempts.
    `target` is a config from rubriceval.collect.targets, a CLI string for parse_target, a TargetRunner or a
    Python function (see targets.py for what it may return). Each call is limited to
    `timeout_s`; failures are retried `retries` times with exponential backoff from `backoff_s` (contract
    errors — a reply of the wrong shape, HTTP 4xx — are not retried). Re-running with the same output resumes.
    """
    out = Path(out_path)
    if out.suffix.lower() not in (".jsonl", ".ndjson"):
        raise DatasetError("collect writes JSONL so it can save after every row", file=str(out),
                           hint="use a .jsonl output; convert it afterwards if you need CSV or Excel")
    questions = read_dataset(questions_path, require=("question",))
    previous, previous_order = read_partial_output(out)
    pending = [q for q in questions if not _is_done(previous.get(q.id), q)]
    input_ids = {q.id for q in questions}
    foreign_ids = [i for i in previous_order if i not in input_ids]

    runner = open_target(target)
    owns_runner = not isinstance(target, TargetRunner)   # a runner handed in is the caller's to close
    results: dict[str, Sample] = {q.id: previous[q.id] for q in questions if _is_done(previous.get(q.id), q)}
    errors: list[RowError] = []
    succeeded = 0
    started = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    queue: asyncio.Queue[Sample] = asyncio.Queue()
    for question in pending:
        queue.put_nowait(question)
    bar = tqdm(total=len(questions), initial=len(questions) - len(pending), desc="collect", unit="row",
               disable=not progress)

    async def worker(handle) -> None:
        nonlocal succeeded
        while True:
            try:
                question = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            row = await _ask_with_retries(runner, question, timeout_s=timeout_s, retries=retries,
                                          backoff_s=backoff_s)
            # No await between here and the fsync: rows are written whole, one at a time.
            _append_row(handle, row)
            results[row.id] = row
            if row.metadata["error"]:
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
        # Compact: one line per id in input order, then rows whose id is not in the input (never thrown away).
        # A question not asked again keeps its earlier row, so nothing recorded is lost.
        final = [results.get(q.id) or previous[q.id] for q in questions if q.id in results or q.id in previous]
        _rewrite_atomically(out, final + [previous[i] for i in foreign_ids])
        if not completed:
            tqdm.write(f"collection interrupted: {len(final)} of {len(questions)} rows saved in {out}; "
                       "run the same command again to resume")
    return CollectSummary(
        out_path=str(out), target=runner.description, total=len(questions), skipped=len(questions) - len(pending),
        attempted=succeeded + len(errors), succeeded=succeeded, failed=len(errors), foreign_rows=len(foreign_ids),
        elapsed_s=time.perf_counter() - started, errors=errors)
