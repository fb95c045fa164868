"""Batch API bookkeeping in the run store: every file of requests and every request's custom_id and reply.

A run judged through a Batch API (`rubriceval run --batch`) keeps, beside its verdicts:

* `batch_files`: one row per JSONL file of requests: its round, local path, size, the provider's input file id,
  batch id, status, output and error file ids, and whether its results were read (`collected`). A file goes
  written → uploaded → submitted → (the provider's states) → collected; each step is committed before the next,
  so a process killed anywhere resumes from the last committed step without creating a batch twice.
* `batch_file_endpoints`: for a judge panel's run, the judge endpoint (rubriceval/batch/endpoints.py) a file is
  uploaded to; a file without a row goes to the run's one judge.
* `batch_requests`: one row per request sent: its custom_id (run/sample/scorer/item/seed/round), the judge-cache
  key of the call (the same key the online call has), and its state: `queued` (in a file not yet submitted),
  `submitted`, `answered` (the reply, or a final error, is stored), `failed` / `expired` (no reply: asked again in
  a later round, or online). A reply is stored at most once per custom_id (the first wins), so reading the same
  output file twice changes nothing.

The tables live in the run store (SQLite file or PostgreSQL database) and use its connection and lock
(`BatchStore(run_store)`).
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterable

from pydantic import BaseModel

from rubriceval.store.runs import RunStore

OPEN_STATES = ("queued", "submitted")          # asked and not yet answered: never asked again meanwhile
RETRY_STATES = ("failed", "expired")           # no reply: may be asked again (new round, or online)
# The provider's batch states after which nothing more will come.
TERMINAL = ("completed", "failed", "expired", "cancelled")


class BatchFile(BaseModel):
    run_id: str
    file_no: int
    round: int
    path: str
    n_requests: int
    n_bytes: int
    target: str                         # "provider" (uploaded to /v1/files + /v1/batches) or "offline" (a directory)
    input_file_id: str | None = None
    batch_id: str | None = None
    status: str                         # written | uploaded | submitted | validating | in_progress | … | completed
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict = {}
    collected: bool = False
    endpoint: str = ""                  # a panel's run: the judge endpoint it goes to (rubriceval/batch/endpoints.py)


class RequestRow(BaseModel):
    """One request as it is written into a batch file."""

    custom_id: str
    key: str
    sample_id: str
    scorer: str
    item: str
    seed: int | None = None


class Answer(BaseModel):
    """One result line read back: the reply (a JudgeResponse dump, possibly a final error), or a retryable failure."""

    custom_id: str
    reply: dict | None = None           # None: failed, may be asked again
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class RequestCounts(BaseModel):
    rounds: int = 0
    requests: int = 0
    open: int = 0
    answered: int = 0
    answer_errors: int = 0              # answered with a final error (unscored with its reason)
    failed: int = 0                     # failed or expired, not asked again yet
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class BatchStore:
    """The batch tables of one run store (same store, connection and lock)."""

    def __init__(self, runs: RunStore):
        self.runs = runs
        self.conn = runs.conn
        self._lock = runs._lock

    # -- files ----------------------------------------------------------------------------------------------------
    def next_file_no(self, run_id: str) -> int:
        with self._lock:
            row = self.conn.execute("SELECT MAX(file_no) FROM batch_files WHERE run_id=?", (run_id,)).fetchone()
        return (row[0] or 0) + 1

    def current_round(self, run_id: str) -> int:
        with self._lock:
            row = self.conn.execute("SELECT MAX(round) FROM batch_files WHERE run_id=?", (run_id,)).fetchone()
        return row[0] or 0

    def add_file(self, run_id: str, file_no: int, round_no: int, path: str, requests: list[RequestRow],
                 n_bytes: int, target: str, endpoint: str = "") -> None:
        """The file, its endpoint (a panel's run) and its requests (state `queued`), in one transaction: a file is
        known with all its requests or not at all."""
        now = time.time()
        with self._lock, self.conn:
            self.conn.execute("INSERT INTO batch_files (run_id, file_no, round, path, n_requests, n_bytes, target, "
                              "status, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                              (run_id, file_no, round_no, path, len(requests), n_bytes, target, "written", now, now))
            self.conn.executemany(
                "INSERT INTO batch_requests (run_id, custom_id, key, round, file_no, sample_id, scorer, item, seed, "
                "state, updated_at) VALUES (?,?,?,?,?,?,?,?,?,'queued',?)",
                [(run_id, r.custom_id, r.key, round_no, file_no, r.sample_id, r.scorer, r.item, r.seed, now)
                 for r in requests])
            if endpoint:
                self.conn.execute("INSERT INTO batch_file_endpoints (run_id, file_no, endpoint) VALUES (?,?,?)",
                                  (run_id, file_no, endpoint))

    def update_file(self, run_id: str, file_no: int, **fields) -> None:
        if "counts" in fields:
            fields["counts_json"] = json.dumps(fields.pop("counts"))
        if "collected" in fields:
            fields["collected"] = int(fields["collected"])
        columns = ", ".join(f"{name}=?" for name in fields)
        with self._lock, self.conn:
            self.conn.execute(f"UPDATE batch_files SET {columns}, updated_at=? WHERE run_id=? AND file_no=?",
                              (*fields.values(), time.time(), run_id, file_no))
            if fields.get("status") == "submitted":
                self.conn.execute("UPDATE batch_requests SET state='submitted', updated_at=? "
                                  "WHERE run_id=? AND file_no=? AND state='queued'", (time.time(), run_id, file_no))

    def files(self, run_id: str) -> list[BatchFile]:
        with self._lock:
            rows = self.conn.execute("SELECT f.*, e.endpoint FROM batch_files f LEFT JOIN batch_file_endpoints e ON "
                                     "e.run_id=f.run_id AND e.file_no=f.file_no WHERE f.run_id=? ORDER BY f.file_no",
                                     (run_id,)).fetchall()
        return [BatchFile(**{k: r[k] for k in r.keys() if k not in ("counts_json", "created_at", "updated_at",
                                                                     "endpoint")},
                          counts=json.loads(r["counts_json"]), endpoint=r["endpoint"] or "") for r in rows]

    # -- requests -------------------------------------------------------------------------------------------------
    def save_answers(self, run_id: str, answers: Iterable[Answer]) -> int:
        """Store replies by custom_id (one transaction); a request already answered keeps its first reply.
        Returns how many requests got their reply now."""
        now = time.time()
        answered = [(json.dumps(a.reply, ensure_ascii=False), a.error, a.prompt_tokens, a.completion_tokens,
                     a.cost_usd, now, run_id, a.custom_id) for a in answers if a.reply is not None]
        failed = [(a.error, now, run_id, a.custom_id) for a in answers if a.reply is None]
        with self._lock, self.conn:
            changed = self.conn.executemany(
                "UPDATE batch_requests SET state='answered', reply_json=?, error=?, prompt_tokens=?, "
                "completion_tokens=?, cost_usd=?, updated_at=? WHERE run_id=? AND custom_id=? AND state!='answered'",
                answered).rowcount if answered else 0
            self.conn.executemany("UPDATE batch_requests SET state='failed', error=?, updated_at=? "
                                  "WHERE run_id=? AND custom_id=? AND state IN ('queued', 'submitted')", failed)
        return changed

    def close_file(self, run_id: str, file_no: int, state: str, error: str) -> int:
        """Requests of a finished file that got no line at all become `state` (failed/expired); returns how many."""
        with self._lock, self.conn:
            cursor = self.conn.execute("UPDATE batch_requests SET state=?, error=?, updated_at=? WHERE run_id=? AND "
                                       "file_no=? AND state IN ('queued', 'submitted')",
                                       (state, error, time.time(), run_id, file_no))
        return cursor.rowcount

    def settled(self, run_id: str, file_no: int) -> bool:
        """Whether any request of the file got a result line (answered or failed)."""
        with self._lock:
            row = self.conn.execute("SELECT 1 FROM batch_requests WHERE run_id=? AND file_no=? AND state NOT IN "
                                    "('queued', 'submitted') LIMIT 1", (run_id, file_no)).fetchone()
        return row is not None

    def in_flight(self, run_id: str, key: str) -> bool:
        with self._lock:
            row = self.conn.execute("SELECT 1 FROM batch_requests WHERE run_id=? AND key=? AND state IN "
                                    "('queued', 'submitted') LIMIT 1", (run_id, key)).fetchone()
        return row is not None

    def reply_for(self, run_id: str, key: str) -> dict | None:
        with self._lock:
            row = self.conn.execute("SELECT reply_json FROM batch_requests WHERE run_id=? AND key=? AND "
                                    "state='answered' LIMIT 1", (run_id, key)).fetchone()
        return None if row is None else json.loads(row[0])

    def key_states(self, run_id: str, keys: Iterable[str]) -> dict[str, list[tuple[str, str | None]]]:
        """key → [(state, error), …] for the keys already asked in this run."""
        found: dict[str, list[tuple[str, str | None]]] = {}
        keys = list(keys)
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                rows = self.conn.execute(f"SELECT key, state, error FROM batch_requests WHERE run_id=? AND key IN "
                                         f"({','.join('?' * len(chunk))})", (run_id, *chunk)).fetchall()
                for key, state, error in rows:
                    found.setdefault(key, []).append((state, error))
        return found

    def retire(self, run_id: str, keys: Iterable[str], state: str = "retried") -> None:
        """Failed/expired rows of these keys are settled (asked again, or finished online)."""
        with self._lock, self.conn:
            self.conn.executemany("UPDATE batch_requests SET state=?, updated_at=? WHERE run_id=? AND key=? AND "
                                  "state IN ('failed', 'expired')", [(state, time.time(), run_id, k) for k in keys])

    def give_up(self, run_id: str, key: str, error: str) -> None:
        """Asked too often without a reply: the call's last row becomes its final error (unscored with the reason)."""
        reply = json.dumps({"error": error, "error_kind": "provider_error"})
        with self._lock, self.conn:
            self.conn.execute("UPDATE batch_requests SET state='answered', reply_json=?, error=?, updated_at=? WHERE "
                              "run_id=? AND custom_id=(SELECT custom_id FROM batch_requests WHERE run_id=? AND key=? AND state "
                              "IN ('failed', 'expired') ORDER BY round DESC LIMIT 1)",
                              (reply, error, time.time(), run_id, run_id, key))
            self.conn.execute("UPDATE batch_requests SET state='retried', updated_at=? WHERE run_id=? AND key=? AND "
                              "state IN ('failed', 'expired')", (time.time(), run_id, key))

    def verdict_counts(self, run_id: str) -> dict[str | None, int]:
        """The run's stored verdicts by unscored kind (None: scored), counted in SQL."""
        with self._lock:
            rows = self.conn.execute("SELECT CASE WHEN score IS NULL THEN COALESCE(unscored_kind, 'error') END, "
                                     "COUNT(*) FROM verdicts WHERE run_id=? GROUP BY 1", (run_id,)).fetchall()
        return {kind: n for kind, n in rows}

    def counts(self, run_id: str, file_nos: Iterable[int] | None = None) -> RequestCounts:
        """The run's requests by state, tokens and cost; `file_nos`: only the requests of these files."""
        only, params = "", list[str | int]([run_id])
        if file_nos is not None:
            params += list(file_nos)
            only = f" AND file_no IN ({','.join('?' * (len(params) - 1)) or 'NULL'})"
        with self._lock:
            rows = self.conn.execute(
                "SELECT state, COUNT(*), SUM(CASE WHEN error IS NOT NULL THEN 1 ELSE 0 END), SUM(prompt_tokens), SUM(completion_tokens), "
                f"SUM(cost_usd), MAX(round) FROM batch_requests WHERE run_id=?{only} GROUP BY state", params).fetchall()
        counts = RequestCounts()
        for state, n, errors, p_tok, c_tok, cost, last_round in rows:
            counts.requests += n
            counts.rounds = max(counts.rounds, last_round or 0)
            counts.prompt_tokens += p_tok or 0
            counts.completion_tokens += c_tok or 0
            counts.cost_usd += cost or 0.0
            if state in OPEN_STATES:
                counts.open += n
            elif state == "answered":
                counts.answered += n
                counts.answer_errors += errors or 0
            elif state in RETRY_STATES:
                counts.failed += n
        return counts
