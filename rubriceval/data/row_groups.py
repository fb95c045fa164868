"""Rows grouped by a key in bounded memory, for exports whose rows of one group are scattered through the file (a
chat-log export in time order interleaves every open conversation): held in memory up to SPILL_ROWS rows, then
spilled to a private temporary SQLite database (deleted when closed) and read back group by group. Groups come out
in order of first appearance, each group's rows in file order; a row is (line, JSON-able record).
"""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

Row = tuple[int, dict[str, Any]]
SPILL_ROWS = 50_000
INSERT_BATCH = 5_000


class RowGroups:
    def __init__(self, spill_rows: int | None = None) -> None:
        """spill_rows: rows held in memory before spilling (default SPILL_ROWS; readers of large rows pass fewer)."""
        self.spill_rows = SPILL_ROWS if spill_rows is None else spill_rows
        self.order: dict[str, int] = {}             # key → place of first appearance
        self._memory: dict[str, list[Row]] = {}
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[int, int, str]] = []
        self.rows = 0

    def add(self, key: str, line: int, record: dict[str, Any]) -> None:
        place = self.order.setdefault(key, len(self.order))
        self.rows += 1
        if self._db is None:
            self._memory.setdefault(key, []).append((line, record))
            if self.rows > self.spill_rows:
                self._spill()
            return
        self._pending.append((place, line, json.dumps(record, ensure_ascii=False)))
        if len(self._pending) >= INSERT_BATCH:
            self._flush()

    def groups(self) -> Iterator[tuple[str, list[Row]]]:
        """(key, rows) in order of first appearance; closes the temporary database when done."""
        if self._db is None:
            yield from self._memory.items()
            return
        self._flush()
        keys = list(self.order)
        try:
            self._db.execute("CREATE INDEX by_group ON rows (place, seq)")
            cursor = self._db.execute("SELECT place, line, record FROM rows ORDER BY place, seq")
            current: int | None = None
            rows: list[tuple[int, Any]] = []
            for place, line, record in cursor:
                if current is not None and place != current and rows:
                    yield keys[current], rows
                    rows = []
                current = place
                rows.append((line, json.loads(record)))
            if current is not None and rows:
                yield keys[current], rows
        finally:
            self.close()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _spill(self) -> None:
        # "" = a private temporary database on disk, removed on close; its page cache stays small.
        self._db = sqlite3.connect("")
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE rows (seq INTEGER PRIMARY KEY, place INTEGER, line INTEGER, record TEXT)")
        for key, rows in self._memory.items():
            place = self.order[key]
            self._pending.extend((place, line, json.dumps(record, ensure_ascii=False)) for line, record in rows)
        self._memory = {}
        self._flush()

    def _flush(self) -> None:
        if self._pending and self._db is not None:
            with self._db:
                self._db.executemany("INSERT INTO rows (place, line, record) VALUES (?,?,?)", self._pending)
            self._pending = []
