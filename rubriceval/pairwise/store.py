"""Pairwise comparisons in the run store (a SQLite file or a PostgreSQL database): which versions were compared with
which rubrics and judge, and every pairwise verdict (both orders' readings kept).

Why the run store: a comparison of two runs belongs next to them (`rubriceval compare` and `gate` read both), and
copying the one file (or sharing the one server) carries everything. The tables are created on first use (CREATE IF
NOT EXISTS), like the audit and trust tables, so an older store gains them without a migration step. Each verdict is
committed as soon as it exists and keyed (comparison, sample, scorer, pair), so an interrupted comparison resumes
without repeating a call.
"""
from __future__ import annotations

import builtins
import json
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.core.verdict import Usage
from rubriceval.pairwise.models import OrderReading, PairwiseVerdict, Version
from rubriceval.store.db import Database, IntegrityError
from rubriceval.store.location import display_location, store_target
from rubriceval.store.migrations import upgrade

_VERDICT_COLUMNS = ("comparison_id", "sample_id", "scorer", "version_a", "version_b", "scorer_version", "outcome",
                    "consistent", "unscored_kind", "unscored_reason", "orders_json", "usage_json", "created_at")
# A verdict judged again (a resumed comparison) replaces the stored one: one row per key.
SAVE_PAIRWISE_VERDICT = (
    f"INSERT INTO pairwise_verdicts ({', '.join(_VERDICT_COLUMNS)}) VALUES ({', '.join('?' * len(_VERDICT_COLUMNS))}) "
    "ON CONFLICT (comparison_id, sample_id, scorer, version_a, version_b) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _VERDICT_COLUMNS[5:]))


class PairwiseConfig(BaseModel):
    rubrics: dict[str, str] = Field(default_factory=dict)   # id → version tag
    rubric_definitions: list[dict[str, Any]] = Field(default_factory=list)   # the exact rubrics (for --resume)
    judge: dict[str, Any] = Field(default_factory=dict)     # public judge config (no key)
    rubrics_path: str = ""


class ComparisonInfo(BaseModel):
    comparison_id: str
    name: str
    created_at: float
    finished_at: float | None = None
    status: str
    versions: list[Version]
    config: PairwiseConfig
    stats: dict[str, Any] = Field(default_factory=dict)
    n_verdicts: int = 0

    @property
    def labels(self) -> list[str]:
        return [v.label for v in self.versions]

    def version(self, label: str) -> Version:
        return next(v for v in self.versions if v.label == label)


class PairwiseStore:
    """The pairwise tables on their own connection to the run store."""

    def __init__(self, path: str | Path):
        self.path = store_target(path)
        self.location = display_location(self.path)       # for messages: a URL without its password
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self.db = Database(self.path)
        upgrade(self.db, path=self.location)          # the tables are declared in store/schema.py

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> PairwiseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- comparisons ------------------------------------------------------------------------------------------------
    def create(self, versions: list[Version], config: PairwiseConfig, name: str | None = None) -> str:
        comparison_id = uuid.uuid4().hex[:12]
        name = name or time.strftime("pairwise-%Y%m%d-%H%M%S-") + comparison_id[:4]
        with self._lock:
            try:
                self.db.execute("INSERT INTO pairwise_comparisons (comparison_id, name, created_at, finished_at, "
                                "status, versions_json, config_json, stats_json) VALUES (?,?,?,?,?,?,?,?)",
                                (comparison_id, name, time.time(), None, "running",
                                 json.dumps([v.model_dump() for v in versions], ensure_ascii=False),
                                 config.model_dump_json(), "{}"))
            except IntegrityError:
                raise RubricEvalError(f"a pairwise comparison named '{name}' already exists", file=self.location,
                                      hint="choose another --name, or --resume it") from None
        return comparison_id

    def set_status(self, comparison_id: str, status: str, stats: dict | None = None) -> None:
        with self._lock:
            self.db.execute("UPDATE pairwise_comparisons SET status=?, finished_at=?, "
                            "stats_json=COALESCE(?, stats_json) WHERE comparison_id=?",
                            (status, time.time() if status != "running" else None,
                             json.dumps(stats, ensure_ascii=False) if stats is not None else None, comparison_id))

    def find(self, ref: str) -> str | None:
        """A comparison id or name, or 'latest' → its id; None when there is none."""
        with self._lock:
            if ref == "latest":
                row = self.db.execute("SELECT comparison_id FROM pairwise_comparisons "
                                      "ORDER BY created_at DESC LIMIT 1").fetchone()
            else:
                row = self.db.execute("SELECT comparison_id FROM pairwise_comparisons WHERE comparison_id=? "
                                      "OR name=?", (ref, ref)).fetchone()
        return row[0] if row else None

    def resolve(self, ref: str) -> str:
        found = self.find(ref)
        if found is None:
            raise RubricEvalError(f"no pairwise comparison '{ref}' in this store", file=self.location,
                                  hint="run `rubriceval pairwise A B --rubrics DIR` first")
        return found

    def info(self, ref: str) -> ComparisonInfo:
        comparison_id = self.resolve(ref)
        with self._lock, self.db.reading():
            row = self.db.execute("SELECT * FROM pairwise_comparisons WHERE comparison_id=?",
                                  (comparison_id,)).fetchone()
            n = self.db.execute("SELECT COUNT(*) FROM pairwise_verdicts WHERE comparison_id=?",
                                (comparison_id,)).fetchone()[0]
        return ComparisonInfo(comparison_id=row["comparison_id"], name=row["name"], created_at=row["created_at"],
                              finished_at=row["finished_at"], status=row["status"],
                              versions=[Version.model_validate(v) for v in json.loads(row["versions_json"])],
                              config=PairwiseConfig.model_validate_json(row["config_json"]),
                              stats=json.loads(row["stats_json"]), n_verdicts=n)

    def list(self) -> list[ComparisonInfo]:
        with self._lock:
            ids = [r[0] for r in self.db.execute("SELECT comparison_id FROM pairwise_comparisons "
                                                 "ORDER BY created_at").fetchall()]
        return [self.info(i) for i in ids]

    def latest_with_runs(self, run_ids: Iterable[str]) -> ComparisonInfo | None:
        """The newest comparison whose versions include every one of these runs."""
        wanted = set(run_ids)
        for info in reversed(self.list()):
            if wanted <= {v.run_id for v in info.versions if v.run_id}:
                return info
        return None

    # -- verdicts ---------------------------------------------------------------------------------------------------
    def save(self, comparison_id: str, verdict: PairwiseVerdict) -> None:
        with self._lock:
            self.db.execute(SAVE_PAIRWISE_VERDICT, (
                comparison_id, verdict.sample_id, verdict.scorer, verdict.version_a, verdict.version_b,
                verdict.scorer_version, verdict.outcome,
                None if verdict.consistent is None else int(verdict.consistent), verdict.unscored_kind,
                verdict.unscored_reason, json.dumps([o.model_dump() for o in verdict.orders], ensure_ascii=False),
                verdict.usage.model_dump_json(), time.time()))

    def done_keys(self, comparison_id: str) -> set[tuple[str, str, str, str]]:
        with self._lock:
            rows = self.db.execute("SELECT sample_id, scorer, version_a, version_b FROM pairwise_verdicts "
                                   "WHERE comparison_id=?", (comparison_id,)).fetchall()
        return {tuple(r) for r in rows}

    def verdicts(self, ref: str) -> builtins.list[PairwiseVerdict]:   # `list` here is the method above
        """A comparison's verdicts by scorer, pair and sample id, sorted here rather than in SQL: a PostgreSQL server's
        collation (en_US…) orders text unlike SQLite, and the bootstrap over these rows must not depend on it."""
        comparison_id = self.resolve(ref)
        with self._lock:
            rows = self.db.execute("SELECT * FROM pairwise_verdicts WHERE comparison_id=?",
                                   (comparison_id,)).fetchall()
        rows.sort(key=lambda r: (r["scorer"], r["version_a"], r["version_b"], r["sample_id"]))
        return [PairwiseVerdict(sample_id=r["sample_id"], scorer=r["scorer"], scorer_version=r["scorer_version"],
                                version_a=r["version_a"], version_b=r["version_b"], outcome=r["outcome"],
                                consistent=None if r["consistent"] is None else bool(r["consistent"]),
                                unscored_kind=r["unscored_kind"], unscored_reason=r["unscored_reason"],
                                orders=[OrderReading.model_validate(o) for o in json.loads(r["orders_json"])],
                                usage=Usage.model_validate_json(r["usage_json"])) for r in rows]
