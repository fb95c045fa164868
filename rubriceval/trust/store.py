"""Trust records in the run store (a SQLite file or a PostgreSQL database): agreement results per rubric version, and
calibrated versions.

Why the run store: agreement only means something next to the runs and audits it was measured on, and copying
the one file (or sharing the one server) carries the whole history. Both tables are created on first use (CREATE
IF NOT EXISTS), so an older store gains them without a migration step.

- `agreement_results`: every agreement measurement, keyed by rubric id + version tag (version + content hash),
  with where the human scores came from and which judge model produced the scores. Append-only history.
- `rubric_versions`: rubric versions proposed by calibration, with status proposed → accepted | rejected, the
  full rubric (JSON and YAML text), the items used as few-shot examples and as held-out evaluation set, and the
  agreement before/after. Nothing is deleted: a rejected version stays for the record.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.stats.agreement import AgreementReport
from rubriceval.store.db import Database, IntegrityError
from rubriceval.store.location import display_location, store_target
from rubriceval.store.migrations import upgrade

_VERSION_COLUMNS = ("rubric_id", "version", "version_tag", "parent_version_tag", "status", "rubric_json", "yaml_text",
                    "yaml_path", "judge_model", "n_eval", "kappa_before", "kappa_after", "agreement_before_json",
                    "agreement_after_json", "example_keys_json", "eval_keys_json", "created_at", "decided_at",
                    "decided_by", "note")

AgreementSource = Literal["audit", "labels", "calibration_before", "calibration_after", "benchmark"]
VersionStatus = Literal["proposed", "accepted", "rejected"]


class TrustStoreError(RubricEvalError):
    """A trust record that cannot be read or changed as asked (unknown version, decided twice)."""


class StoredAgreement(BaseModel):
    result_id: int
    rubric_id: str
    version_tag: str
    source: AgreementSource
    source_detail: str = ""          # run ids, the labels file, or the calibration proposal it belongs to
    judge_model: str = ""
    n: int
    kappa: float | None
    kappa_ci_low: float | None = None
    kappa_ci_high: float | None = None
    report: dict[str, Any]
    experts: dict[str, Any] | None = None
    created_at: float


class RubricVersionRecord(BaseModel):
    rubric_id: str
    version: str
    version_tag: str
    parent_version_tag: str | None = None
    status: VersionStatus
    rubric: dict[str, Any]           # the full Rubric (model_dump), enough to rebuild it
    yaml_text: str = ""
    yaml_path: str | None = None
    judge_model: str = ""
    n_eval: int = 0
    kappa_before: float | None = None
    kappa_after: float | None = None
    agreement_before: dict[str, Any] | None = None
    agreement_after: dict[str, Any] | None = None
    example_keys: list[str] = Field(default_factory=list)
    eval_keys: list[str] = Field(default_factory=list)
    created_at: float
    decided_at: float | None = None
    decided_by: str = ""
    note: str = ""


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class TrustStore:
    """The trust tables on their own connection to the run store."""

    def __init__(self, path: str | Path, *, must_exist: bool = True):
        self.path = store_target(path)
        self.location = display_location(self.path)       # for messages: a URL without its password
        if isinstance(self.path, Path):
            if must_exist and not self.path.is_file():
                raise self._no_store()
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self.db = Database(self.path)
        if must_exist and not self.db.table_exists("runs"):       # a server database nothing was recorded in yet
            self.db.close()
            raise self._no_store()
        upgrade(self.db, path=self.location)          # the tables are declared in store/schema.py

    def _no_store(self) -> TrustStoreError:
        return TrustStoreError("no run store here", file=self.location,
                               hint="run `rubriceval run` first, or pass --store")

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> TrustStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- agreement results ------------------------------------------------------------------------------------------
    def record_agreement(self, rubric_id: str, version_tag: str, report: AgreementReport, *,
                         source: AgreementSource, source_detail: str = "", judge_model: str = "",
                         experts: dict[str, Any] | None = None) -> int:
        kappa = report.kappa_quadratic
        with self._lock:
            row = self.db.execute(
                "INSERT INTO agreement_results (rubric_id, version_tag, source, source_detail, judge_model, n, kappa,"
                " kappa_ci_low, kappa_ci_high, report_json, experts_json, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
                " RETURNING result_id",
                (rubric_id, version_tag, source, source_detail, judge_model, report.n, kappa.value, kappa.ci_low,
                 kappa.ci_high, report.model_dump_json(), _dump(experts), time.time())).fetchone()
        return int(row[0])

    def agreement_results(self, rubric_id: str | None = None, version_tag: str | None = None,
                          source: AgreementSource | None = None) -> list[StoredAgreement]:
        """Stored results, oldest first."""
        where, params = [], []
        for column, value in (("rubric_id", rubric_id), ("version_tag", version_tag), ("source", source)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        sql = "SELECT * FROM agreement_results" + (f" WHERE {' AND '.join(where)}" if where else "")
        with self._lock:
            rows = self.db.execute(sql + " ORDER BY created_at, result_id", params).fetchall()
        return [StoredAgreement(
            result_id=r["result_id"], rubric_id=r["rubric_id"], version_tag=r["version_tag"], source=r["source"],
            source_detail=r["source_detail"], judge_model=r["judge_model"], n=r["n"], kappa=r["kappa"],
            kappa_ci_low=r["kappa_ci_low"], kappa_ci_high=r["kappa_ci_high"], report=json.loads(r["report_json"]),
            experts=_load(r["experts_json"]), created_at=r["created_at"]) for r in rows]

    # -- rubric versions --------------------------------------------------------------------------------------------
    def add_version(self, record: RubricVersionRecord) -> None:
        """Insert a version; the same rubric id with the same version number or content is refused."""
        with self._lock:
            try:
                with self.db:
                    self.db.execute(
                        f"INSERT INTO rubric_versions ({', '.join(_VERSION_COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(_VERSION_COLUMNS))})",
                        (record.rubric_id, record.version, record.version_tag, record.parent_version_tag,
                         record.status, json.dumps(record.rubric, ensure_ascii=False), record.yaml_text,
                         record.yaml_path, record.judge_model, record.n_eval, record.kappa_before,
                         record.kappa_after, _dump(record.agreement_before), _dump(record.agreement_after),
                         json.dumps(record.example_keys, ensure_ascii=False),
                         json.dumps(record.eval_keys, ensure_ascii=False), record.created_at, record.decided_at,
                         record.decided_by, record.note))
            except IntegrityError:
                raise TrustStoreError(
                    f"rubric '{record.rubric_id}' already has a version {record.version} or one with the same "
                    f"content ({record.version_tag})", file=self.location) from None

    def versions(self, rubric_id: str) -> list[RubricVersionRecord]:
        """Every recorded version of a rubric, oldest first."""
        with self._lock:
            rows = self.db.execute("SELECT * FROM rubric_versions WHERE rubric_id=? ORDER BY created_at, version",
                                     (rubric_id,)).fetchall()
        return [_row_to_version(r) for r in rows]

    def version(self, rubric_id: str, version: int | str) -> RubricVersionRecord:
        """A version by its number ('3') or its tag ('v3@…')."""
        text = str(version)
        with self._lock:
            row = self.db.execute("SELECT * FROM rubric_versions WHERE rubric_id=? AND (version=? OR version_tag=?)",
                                    (rubric_id, text, text)).fetchone()
        if row is None:
            known = ", ".join(v.version for v in self.versions(rubric_id)) or "none"
            raise TrustStoreError(f"rubric '{rubric_id}' has no recorded version '{text}' (recorded: {known})",
                                  file=self.location, hint="`calibrate` records proposed versions")
        return _row_to_version(row)

    def has_version(self, rubric_id: str, version: int | str) -> bool:
        with self._lock:
            return self.db.execute("SELECT 1 FROM rubric_versions WHERE rubric_id=? AND version=?",
                                     (rubric_id, str(version))).fetchone() is not None

    def has_version_tag(self, rubric_id: str, version_tag: str) -> bool:
        with self._lock:
            return self.db.execute("SELECT 1 FROM rubric_versions WHERE rubric_id=? AND version_tag=?",
                                     (rubric_id, version_tag)).fetchone() is not None

    def decide(self, rubric_id: str, version: int | str, status: Literal["accepted", "rejected"], *,
               decided_by: str = "", note: str = "") -> RubricVersionRecord:
        """Accept or reject a proposed version; a decision is final (propose again to revisit). The check and the
        update are one write transaction, so of two leads deciding at once the second sees the first's decision."""
        with self._lock, self.db:
            current = self.version(rubric_id, version)
            if current.status != "proposed":
                raise TrustStoreError(
                    f"version {current.version} of '{rubric_id}' is already {current.status}"
                    + (f" (by {current.decided_by})" if current.decided_by else ""), file=self.location,
                    hint="only a proposed version can be accepted or rejected")
            self.db.execute("UPDATE rubric_versions SET status=?, decided_at=?, decided_by=?, note=? "
                            "WHERE rubric_id=? AND version_tag=? AND status='proposed'",
                            (status, time.time(), decided_by, note, rubric_id, current.version_tag))
            return self.version(rubric_id, current.version_tag)


def _row_to_version(r: Any) -> RubricVersionRecord:
    return RubricVersionRecord(
        rubric_id=r["rubric_id"], version=r["version"], version_tag=r["version_tag"],
        parent_version_tag=r["parent_version_tag"], status=r["status"], rubric=json.loads(r["rubric_json"]),
        yaml_text=r["yaml_text"], yaml_path=r["yaml_path"], judge_model=r["judge_model"], n_eval=r["n_eval"],
        kappa_before=r["kappa_before"], kappa_after=r["kappa_after"],
        agreement_before=_load(r["agreement_before_json"]), agreement_after=_load(r["agreement_after_json"]),
        example_keys=json.loads(r["example_keys_json"]), eval_keys=json.loads(r["eval_keys_json"]),
        created_at=r["created_at"], decided_at=r["decided_at"], decided_by=r["decided_by"], note=r["note"])
