"""Persistent SQLite cache of successful judge/embedding calls.

The key covers everything that can change an answer: model, messages, parameters, output schema and a caller tag
(the rubric's version + content hash). Errors are never cached, so a retry later can still succeed.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any


def cache_key(**parts: Any) -> str:
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CallCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
            "created REAL DEFAULT (unixepoch('subsec')))")
        self._conn.commit()

    def get(self, key: str) -> dict | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict) -> None:
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)",
                               (key, json.dumps(value, ensure_ascii=False)))
            self._conn.commit()

    def put_many(self, items: list[tuple[str, dict]]) -> None:
        """Many (key, value) pairs in one transaction (a batch's replies: one commit, not one per reply)."""
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)",
                                   [(key, json.dumps(value, ensure_ascii=False)) for key, value in items])
            self._conn.commit()

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def judge_call_key(config, messages: list[dict], json_schema: dict | None, tag: str, options=None) -> str:
    """The cache key of one judge call; shared by the client and the dry-run planner so they always agree.

    Per-call options (`CallOptions`) join the key only when given, so every call made without them keeps its key."""
    extra = {}
    if options is not None:
        extra["options"] = options.key()
        if options.choices:
            extra["choice_constraint"] = config.choice_constraint
    return cache_key(model=config.model, messages=messages, temperature=config.temperature,
                     max_tokens=config.max_tokens, seed=config.seed,
                     schema=json_schema if config.structured == "json_schema" else None,
                     structured=config.structured, tag=tag, **extra)
