"""What the store remembers of a growing source between increments: the watermark (each conversation id's content
hash and the run that judged it), each file's read position and the conversations left waiting in it, and one row per
increment (its run and period) for trends and reports.

Tables of their own (declared in store/schema.py, as every table of the store); written in one transaction per
increment, before its run judges anything, so a killed increment is resumed by the next one, never judged twice.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from rubriceval.store.db import Database

LOOKUP = 500          # ids per watermark query


class FileState(BaseModel):
    """Where the last increment left a file: its size and mtime then, how far it was read (JSONL: a byte offset at
    a line end), a hash of its head (a rewritten file starts again from 0), and the offsets (JSONL) or line numbers
    of conversations that were still open."""

    path: str
    size: int = 0
    mtime_ns: int = 0
    read_to: int = 0
    read_lines: int = 0             # lines before read_to (error messages name file:line)
    head_hash: str = ""
    pending: list[tuple[int, int]] = Field(default_factory=list)    # (offset or position, line) still open


class Increment(BaseModel):
    run_id: str
    source: str
    label: str
    period_start: str | None
    period_end: str
    n_new: int
    n_changed: int
    n_waiting: int
    n_unchanged: int


class SourceState:
    def __init__(self, db: Database, source: str):
        self.db, self.source = db, source

    def hashes(self, ids: Sequence[str]) -> dict[str, str]:
        """conversation id → content hash last judged, for the ids that have one."""
        out: dict[str, str] = {}
        for start in range(0, len(ids), LOOKUP):
            part = ids[start:start + LOOKUP]
            rows = self.db.execute(f"SELECT conversation_id, content_hash FROM watermarks WHERE source = ? AND "
                                   f"conversation_id IN ({','.join('?' * len(part))})", (self.source, *part))
            out.update({r[0]: r[1] for r in rows})
        return out

    def files(self) -> dict[str, FileState]:
        rows = self.db.execute("SELECT path, size, mtime_ns, read_to, read_lines, head_hash, pending_json "
                               "FROM source_files WHERE source = ?", (self.source,)).fetchall()
        return {r[0]: FileState(path=r[0], size=r[1], mtime_ns=r[2], read_to=r[3], read_lines=r[4], head_hash=r[5],
                                pending=[tuple(p) for p in json.loads(r[6])]) for r in rows}

    def increments(self) -> list[Increment]:
        rows = self.db.execute("SELECT run_id, source, label, period_start, period_end, n_new, n_changed, n_waiting, "
                               "n_unchanged FROM increments WHERE source = ? ORDER BY created_at",
                               (self.source,)).fetchall()
        return [Increment(**dict(zip(Increment.model_fields, r))) for r in rows]

    def record(self, increment: Increment | None, judged: Iterable[tuple[str, str]], files: Iterable[FileState]) -> None:
        """One increment in one transaction: its row, the watermark of what it judges, the files' new positions."""
        now = time.time()
        with self.db:
            if increment is not None:
                self.db.execute("INSERT INTO increments VALUES (?,?,?,?,?,?,?,?,?,?)",
                                (increment.run_id, self.source, increment.label, increment.period_start,
                                 increment.period_end, increment.n_new, increment.n_changed, increment.n_waiting,
                                 increment.n_unchanged, now))
                self.db.executemany(
                    "INSERT INTO watermarks VALUES (?,?,?,?,?) ON CONFLICT (source, conversation_id) DO UPDATE SET "
                    "content_hash = excluded.content_hash, run_id = excluded.run_id, judged_at = excluded.judged_at",
                    [(self.source, cid, digest, increment.run_id, now) for cid, digest in judged])
            self.db.executemany(
                "INSERT INTO source_files VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (source, path) DO UPDATE SET "
                "size = excluded.size, mtime_ns = excluded.mtime_ns, read_to = excluded.read_to, "
                "read_lines = excluded.read_lines, head_hash = excluded.head_hash, pending_json = excluded.pending_json",
                [(self.source, f.path, f.size, f.mtime_ns, f.read_to, f.read_lines, f.head_hash,
                  json.dumps(f.pending)) for f in files])
