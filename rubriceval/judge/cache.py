"""Persistent SQLite cache of successful judge/embedding calls.

The key covers everything that can change an answer: the endpoint, model, messages, parameters, output schema and a
caller tag (the rubric's version + content hash). Errors are never cached, so a retry later can still succeed. Each
row records when it was written (`created`, Unix seconds), so old replies can be pruned.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


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
        # `created` is written by put(): the old column default, unixepoch('subsec'), is NULL before SQLite 3.42.
        self._conn.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)")
        self._conn.commit()

    def get(self, key: str) -> dict | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: list[tuple[str, dict]]) -> None:
        """Many (key, value) pairs in one transaction (a batch's replies: one commit, not one per reply)."""
        now = time.time()
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO calls (key, value, created) VALUES (?, ?, ?)",
                                   [(key, json.dumps(value, ensure_ascii=False), now) for key, value in items])
            self._conn.commit()

    def prune(self, older_than_s: float) -> int:
        """Delete replies written more than `older_than_s` seconds ago, and those with no time (written before
        times were recorded); returns how many."""
        with self._lock:
            deleted = self._conn.execute("DELETE FROM calls WHERE created IS NULL OR created < ?",
                                         (time.time() - older_than_s,)).rowcount
            self._conn.commit()
        return deleted

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


@lru_cache(maxsize=64)     # asked for every call's key
def endpoint_identity(base_url: str | None) -> str:
    """Which server answers, as the cache key names it: an external judge's base URL normalised (scheme, host, port,
    path; no trailing slash, query or credentials), or the embedded judge by its model file (its port changes every
    start). Without it a test stub and a real judge serving the same model name would share cached replies."""
    if base_url is None:
        from rubriceval.judge.embedded_model import embedded_judge_identity

        return embedded_judge_identity()
    parts = urlsplit(base_url.strip())
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme.lower()}://{host}{port}{parts.path.rstrip('/')}"


def judge_call_key(config, messages: list[dict], json_schema: dict | None, tag: str, options=None,
                   endpoint: str | None = None) -> str:
    """The cache key of one judge call; shared by the client and the dry-run planner so they always agree.

    `endpoint`: the `endpoint_identity` of the server called (default: the config's). Per-call options
    (`CallOptions`) join the key only when given, so every call made without them keeps its key."""
    extra = {}
    if options is not None:
        extra["options"] = options.key()
        if options.choices:
            extra["choice_constraint"] = config.choice_constraint
    return cache_key(endpoint=endpoint or endpoint_identity(config.base_url), model=config.model, messages=messages,
                     temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed,
                     schema=json_schema if config.structured == "json_schema" else None,
                     structured=config.structured, tag=tag, **extra)
