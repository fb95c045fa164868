"""One copy of each dataset version in the run store, shared by every run over it.

A dataset is written once, window by window as it is read (no transaction holds the whole file), under a fresh id;
its content hash (sha256 of every sample's stored JSON, in order) is computed on the way. When that content is
already stored, the new copy is dropped and the run points at the old one. A run row names its dataset
(`runs.dataset_id`); `run_samples` is a view over the two, so every reader keeps its SQL.

Duplicate sample ids are refused by the table's key, so the reader never holds every id: the error names the
file, the line of the second occurrence and the line of the first.
"""
from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any

from pydantic import BaseModel

from rubriceval.common.errors import DatasetError
from rubriceval.data.sample import Sample
from rubriceval.store.db import Database, IntegrityError
from rubriceval.store.liveness import ProcessStamp, current_process, is_gone

WINDOW = 1000       # samples per transaction while a dataset is written, and per read while a run judges it

class DatasetRef(BaseModel):
    dataset_id: str
    content_hash: str
    n_samples: int
    reused: bool = False          # the content was already stored: no second copy was kept


class _ContentHash:
    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def add(self, sample_json: str) -> None:
        self._h.update(sample_json.encode())
        self._h.update(b"\n")

    def hexdigest(self) -> str:
        return self._h.hexdigest()[:32]


def move_run_samples_to_datasets(conn: Database) -> None:
    """Migration step 2's rows (store/migrations.py makes the tables): every run's copy of its samples becomes a
    dataset version, stored once per content."""
    runs = [r[0] for r in conn.execute("SELECT run_id FROM runs ORDER BY created_at")]
    for run_id in runs:
        digest, n = _ContentHash(), 0
        for (sample_json,) in conn.execute("SELECT sample_json FROM run_samples WHERE run_id=? ORDER BY position",
                                           (run_id,)):
            digest.add(sample_json)
            n += 1
        content = digest.hexdigest()
        found = conn.execute("SELECT dataset_id FROM datasets WHERE content_hash=?", (content,)).fetchone()
        dataset_id = found[0] if found else content
        if not found:
            conn.execute("INSERT INTO datasets (dataset_id, content_hash, n_samples, source, created_at, complete) "
                         "VALUES (?,?,?,?,?,1)", (dataset_id, content, n, f"run {run_id}", time.time()))
            conn.execute("INSERT INTO dataset_samples (dataset_id, position, sample_id, line, input_hash, sample_json) "
                         "SELECT ?, position, sample_id, NULL, input_hash, sample_json FROM run_samples "
                         "WHERE run_id=? ORDER BY position", (dataset_id, run_id))
        conn.execute("UPDATE runs SET dataset_id=? WHERE run_id=?", (dataset_id, run_id))


def _windows(items: Iterable, size: int) -> Iterator[list]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _drop(conn: Database, dataset_id: str, step: int = 50 * WINDOW) -> None:
    """Delete a copy in slices, so no transaction (and no WAL) grows with the dataset."""
    while True:
        with conn:
            gone = conn.execute("DELETE FROM dataset_samples WHERE dataset_id=? AND position IN (SELECT position FROM "
                                "dataset_samples WHERE dataset_id=? ORDER BY position LIMIT ?)",
                                (dataset_id, dataset_id, step)).rowcount
        if not gone:
            break
    with conn:
        conn.execute("DELETE FROM datasets WHERE dataset_id=?", (dataset_id,))


def _drop_abandoned(conn: Database) -> None:
    """Half-written copies left by a process that died while writing them."""
    for row in conn.execute("SELECT dataset_id, pid, host, process_started FROM datasets WHERE complete=0"
                            ).fetchall():
        if row[1] is not None and is_gone(ProcessStamp(pid=row[1], host=row[2] or "", started=row[3])):
            _drop(conn, row[0])


def _duplicate(conn: Database, dataset_id: str, rows: list[tuple], source: str) -> DatasetError:
    """The first sample of a window whose id is already taken, as the error a reader gives."""
    first_line: dict[str, int | None] = {}
    for row in conn.execute("SELECT sample_id, line FROM dataset_samples WHERE dataset_id=? AND sample_id IN "
                            f"({','.join('?' * len(rows))})", [dataset_id, *(r[2] for r in rows)]):
        first_line[row[0]] = row[1]
    for row in rows:
        sample_id, line = row[2], row[3]
        if sample_id in first_line:
            where = f"line {first_line[sample_id]}" if first_line[sample_id] is not None else "an earlier row"
            return DatasetError(f"duplicate id '{sample_id}' (first at {where})", file=source or None, line=line,
                                field="id")
        first_line[sample_id] = line
    return DatasetError("duplicate sample id", file=source or None, field="id")


def store_dataset(conn: Database, samples: Iterable[Sample | tuple[int | None, Sample]], *,
                  source: str = "", observe: Callable[[Sample, str], None] | None = None,
                  lock: AbstractContextManager[Any] | None = None, window: int = WINDOW) -> DatasetRef:
    """Write a dataset version (samples, or (line, sample) pairs) once; `observe(sample, input_hash)` sees every
    sample as it passes (e.g. to note which rubrics apply), so the caller needs no second reading."""
    import contextlib

    guard = lock if lock is not None else contextlib.nullcontext()
    dataset_id = uuid.uuid4().hex
    me = current_process()
    with guard:
        _drop_abandoned(conn)
        with conn:
            conn.execute("INSERT INTO datasets (dataset_id, source, created_at, complete, pid, host, process_started) "
                         "VALUES (?,?,?,0,?,?,?)", (dataset_id, source, time.time(), me.pid, me.host, me.started))
    digest, position = _ContentHash(), 0
    try:
        for chunk in _windows(samples, window):
            rows = []
            for item in chunk:
                line, sample = item if isinstance(item, tuple) else (None, item)
                input_hash = sample.input_hash()
                if observe is not None:
                    observe(sample, input_hash)
                sample_json = sample.model_dump_json()
                digest.add(sample_json)
                rows.append((dataset_id, position, sample.id, line, input_hash, sample_json))
                position += 1
            with guard:
                try:
                    with conn:
                        conn.executemany("INSERT INTO dataset_samples VALUES (?,?,?,?,?,?)", rows)
                except IntegrityError:
                    raise _duplicate(conn, dataset_id, rows, source) from None
        if position == 0:
            raise DatasetError("the dataset has no rows", file=source or None)
        content = digest.hexdigest()
        with guard:
            try:
                with conn:
                    conn.execute("UPDATE datasets SET content_hash=?, n_samples=?, complete=1 WHERE dataset_id=?",
                                 (content, position, dataset_id))
            except IntegrityError:      # this content is stored already (earlier, or by another process)
                found = conn.execute("SELECT dataset_id FROM datasets WHERE content_hash=?", (content,)).fetchone()
                _drop(conn, dataset_id)
                return DatasetRef(dataset_id=found[0], content_hash=content, n_samples=position, reused=True)
        return DatasetRef(dataset_id=dataset_id, content_hash=content, n_samples=position)
    except BaseException:
        with guard:
            _drop(conn, dataset_id)
        raise


def sample_windows(conn: Database, dataset_id: str, window: int = WINDOW,
                   lock: AbstractContextManager[Any] | None = None) -> Iterator[list[tuple[Sample, str]]]:
    """(sample, input hash) in dataset order, `window` at a time (keyset paging: each read is one index range)."""
    import contextlib

    guard = lock if lock is not None else contextlib.nullcontext()
    last = -1
    while True:
        with guard:
            rows = conn.execute("SELECT position, sample_json, input_hash FROM dataset_samples WHERE dataset_id=? "
                                "AND position > ? ORDER BY position LIMIT ?", (dataset_id, last, window)).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        yield [(Sample.model_validate_json(r[1]), r[2]) for r in rows]
