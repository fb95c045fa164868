"""The run store: every run's config, samples and verdicts, in one SQLite file (WAL) or one PostgreSQL database
(`--store postgresql://…`, a team's shared store); store/db.py says what differs between the two, once.

Each verdict is committed as soon as it exists, so a run killed at any moment (even kill -9) loses nothing already
judged, and `--resume` redoes only the missing (sample, scorer) pairs. The primary key makes duplicates impossible.
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.core.verdict import Evidence, Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.store.datasets import WINDOW, DatasetRef, sample_windows, store_dataset
from rubriceval.store.db import Database, IntegrityError
from rubriceval.store.liveness import ProcessStamp, current_process, is_gone
from rubriceval.store.location import display_location, store_target
from rubriceval.store.migrations import upgrade

if TYPE_CHECKING:     # only verdict_frame makes a frame: a run does not load pandas
    import pandas as pd

VERDICT_COLUMNS = ("run_id, sample_id, scorer, kind, scorer_version, score, unscored_kind, unscored_reason, feedback, "
                   "evidence_json, details_json, passed, usage_json, input_hash, created_at")
# A verdict saved again (a resumed or re-judged pair) replaces the stored one: one row per (run, sample, scorer).
REPLACE_VERDICT = ("ON CONFLICT (run_id, sample_id, scorer) DO UPDATE SET "
                   + ", ".join(f"{c} = excluded.{c}" for c in VERDICT_COLUMNS.split(", ")[3:]))
SAVE_VERDICT = f"INSERT INTO verdicts ({VERDICT_COLUMNS}) VALUES ({', '.join('?' * 15)}) {REPLACE_VERDICT}"


class RunConfig(BaseModel):
    dataset_path: str = ""
    dataset_hash: str = ""
    rubrics: dict[str, str] = Field(default_factory=dict)   # id → version tag
    metrics: list[str] = Field(default_factory=list)
    judge: dict[str, Any] = Field(default_factory=dict)     # model, base_url (no key), parameters
    panel: dict[str, Any] = Field(default_factory=dict)     # the judge panel that judged the rubrics (no keys), if any
    embedder: dict[str, Any] = Field(default_factory=dict)
    rubrics_path: str = ""
    metric_options: dict[str, Any] = Field(default_factory=dict)   # those differing from the defaults (resume alike)


class RunInfo(BaseModel):
    run_id: str
    name: str
    created_at: float
    finished_at: float | None
    status: str
    config: RunConfig
    stats: dict[str, Any]
    n_samples: int = 0
    n_verdicts: int = 0
    hint: str | None = None       # what to do about the run's status (an interrupted run: how to finish it)


def default_store_path() -> Path:
    return Path("out") / "runs.sqlite"


def connect(target: str | Path) -> Database:
    """A connection to the store as every table family of the store opens it (runs, pairwise comparisons)."""
    return Database(target)


class RunStore:
    def __init__(self, path: str | Path | None = None):
        self.path: str | Path = store_target(path) if path else default_store_path()
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.location = display_location(self.path)       # for messages: a URL without its password
        self._lock = threading.RLock()
        self.conn = connect(self.path)
        upgrade(self.conn, path=self.location)       # a new store is created, an older one migrated (once)

    @property
    def lock(self) -> threading.RLock:
        """The lock every use of `conn` holds: modules reading or writing this store's tables themselves
        (scorecards, official scores) take it around their statements too."""
        return self._lock

    # -- runs -------------------------------------------------------------------------------------------------------
    def create_run(self, config: RunConfig, samples: Iterable[Sample] | DatasetRef,
                   scorers: Iterable[tuple[str, str, str, dict]], name: str | None = None) -> str:
        """samples: the run's samples (stored once per dataset version), or a dataset already stored
        (`store_dataset`). scorers: (scorer id, kind, version tag, definition) tuples."""
        run_id = uuid.uuid4().hex[:12]
        name = name or time.strftime("run-%Y%m%d-%H%M%S-") + run_id[:4]
        self.check_name_free(name)
        dataset = samples if isinstance(samples, DatasetRef) else self.store_dataset(samples)
        with self._lock, self.conn:
            try:
                self.conn.execute("INSERT INTO runs (run_id, name, created_at, finished_at, status, config_json, "
                                  "stats_json, dataset_id) VALUES (?,?,?,?,?,?,?,?)",
                                  (run_id, name, time.time(), None, "running", config.model_dump_json(), "{}",
                                   dataset.dataset_id))
            except IntegrityError:
                raise self._name_taken(name) from None
            self.conn.executemany("INSERT INTO run_scorers VALUES (?,?,?,?,?)",
                                  [(run_id, sid, kind, ver, json.dumps(defn, ensure_ascii=False))
                                   for sid, kind, ver, defn in scorers])
        return run_id

    def _name_taken(self, name: str) -> RubricEvalError:
        return RubricEvalError(f"a run named '{name}' already exists", file=self.location,
                               hint="choose another --name, or --resume it")

    def check_name_free(self, name: str | None) -> None:
        """Refuse a taken run name before a dataset is read, not after."""
        with self._lock:
            if name and self.conn.execute("SELECT 1 FROM runs WHERE name=?", (name,)).fetchone():
                raise self._name_taken(name)

    def store_dataset(self, samples: Iterable[Sample | tuple[int | None, Sample]], *, source: str = "",
                      observe: Callable[[Sample, str], None] | None = None) -> DatasetRef:
        """Store a dataset version once (see store/datasets.py); `observe` sees each sample on the way."""
        dataset = store_dataset(self.conn, samples, source=source, observe=observe, lock=self._lock)
        self.conn.refresh_statistics("datasets", "dataset_samples")      # a run reads it next (store/db.py)
        return dataset

    def sample_windows(self, run: str, window: int = WINDOW) -> Iterator[list[tuple[Sample, str]]]:
        """A run's (sample, input hash) pairs in dataset order, `window` at a time: flat memory at any size."""
        return sample_windows(self.conn, self.dataset_id(run), window, lock=self._lock)

    def dataset_id(self, run: str) -> str:
        run_id = self.resolve(run)
        with self._lock:
            return self.conn.execute("SELECT dataset_id FROM runs WHERE run_id=?", (run_id,)).fetchone()[0]

    def resolve(self, run: str) -> str:
        """A run id, a name, or 'latest' → run id."""
        with self._lock:
            if run == "latest":
                row = self.conn.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 1").fetchone()
            else:
                row = self.conn.execute("SELECT run_id FROM runs WHERE run_id = ? OR name = ?", (run, run)).fetchone()
        if row is None:
            raise RubricEvalError(f"no run '{run}' in this store", file=self.location,
                                  hint="`rubriceval runs` lists the stored runs")
        return row["run_id"]

    def run_info(self, run: str) -> RunInfo:
        run_id = self.resolve(run)
        with self._lock:
            row = self.conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            n_samples = self.conn.execute("SELECT COUNT(*) FROM run_samples WHERE run_id=?", (run_id,)).fetchone()[0]
            n_verdicts = self.conn.execute("SELECT COUNT(*) FROM verdicts WHERE run_id=?", (run_id,)).fetchone()[0]
        status, hint = row["status"], None
        if status == "running" and row["pid"] is not None and is_gone(
                ProcessStamp(pid=row["pid"], host=row["host"] or "", started=row["process_started"])):
            status = "interrupted"       # killed without a word (kill -9, power loss): its process is gone
        if status == "interrupted":
            hint = f"finish it with `rubriceval run --resume {row['name']}`"
        elif status == "batch":          # judged through a Batch API (rubriceval/batch/): results come later
            hint = f"collect it with `rubriceval batch collect {row['name']} --wait`"
        return RunInfo(run_id=row["run_id"], name=row["name"], created_at=row["created_at"],
                       finished_at=row["finished_at"], status=status,
                       config=RunConfig.model_validate_json(row["config_json"]), stats=json.loads(row["stats_json"]),
                       n_samples=n_samples, n_verdicts=n_verdicts, hint=hint)

    def list_runs(self) -> list[RunInfo]:
        with self._lock:
            ids = [r[0] for r in self.conn.execute("SELECT run_id FROM runs ORDER BY created_at")]
        return [self.run_info(i) for i in ids]

    def set_status(self, run_id: str, status: str, stats: dict | None = None) -> None:
        """A run set `running` records this process (pid, host, start time), so readers can tell when it is gone."""
        with self._lock, self.conn:
            self.conn.execute("UPDATE runs SET status=?, finished_at=?, stats_json=COALESCE(?, stats_json) "
                              "WHERE run_id=?", (status, time.time() if status != "running" else None,
                                                  json.dumps(stats, ensure_ascii=False) if stats is not None else None,
                                                  run_id))
            if status == "running":
                me = current_process()
                self.conn.execute("UPDATE runs SET pid=?, host=?, process_started=? WHERE run_id=?",
                                  (me.pid, me.host, me.started, run_id))
        if status != "running":          # a report, compare or audit queue reads the new verdicts next
            self.conn.refresh_statistics("runs", "verdicts")

    # -- samples and scorers ------------------------------------------------------------------------------------------
    def samples(self, run: str) -> list[Sample]:
        run_id = self.resolve(run)
        with self._lock:
            rows = self.conn.execute("SELECT sample_json FROM run_samples WHERE run_id=? ORDER BY position",
                                     (run_id,)).fetchall()
        return [Sample.model_validate_json(r[0]) for r in rows]

    def scorers(self, run: str) -> list[dict[str, Any]]:
        run_id = self.resolve(run)
        with self._lock:
            rows = self.conn.execute("SELECT * FROM run_scorers WHERE run_id=? ORDER BY kind DESC, scorer",
                                     (run_id,)).fetchall()
        return [{"scorer": r["scorer"], "kind": r["kind"], "version": r["version"],
                 "definition": json.loads(r["definition_json"])} for r in rows]

    # -- verdicts -------------------------------------------------------------------------------------------------
    def save_verdict(self, run_id: str, verdict: Verdict, input_hash: str = "") -> None:
        with self._lock, self.conn:
            self.conn.execute(SAVE_VERDICT, verdict_row(run_id, verdict, input_hash, time.time()))

    def save_verdicts(self, run_id: str, batch: Sequence[tuple[Verdict, str]]) -> None:
        """(verdict, input hash) pairs written in one transaction."""
        now = time.time()
        with self._lock, self.conn:
            self.conn.executemany(SAVE_VERDICT, [verdict_row(run_id, v, input_hash, now) for v, input_hash in batch])

    def copy_verdicts(self, from_run: str, to_run: str, *, leave_out: Sequence[str] = ()) -> int:
        """Copy one run's verdicts to another over the same sample ids, in SQL (none is loaded), except the samples
        left out; each copy takes the input hash of its sample in the new run's dataset."""
        with self._lock, self.conn:
            return self.conn.execute(
                f"INSERT INTO verdicts ({VERDICT_COLUMNS}) SELECT :to, v.sample_id, v.scorer, v.kind, v.scorer_version, v.score, "
                "v.unscored_kind, v.unscored_reason, v.feedback, v.evidence_json, v.details_json, v.passed, v.usage_json, "
                "d.input_hash, :now FROM verdicts v JOIN runs r ON r.run_id = :to "
                "JOIN dataset_samples d ON d.dataset_id = r.dataset_id AND d.sample_id = v.sample_id "
                f"WHERE v.run_id = :from AND v.sample_id NOT IN (SELECT o.value FROM {self.conn.sql.json_items(':out', 'o')}) "
                f"{REPLACE_VERDICT}",
                {"to": self.resolve(to_run), "from": self.resolve(from_run), "now": time.time(),
                 "out": json.dumps(list(leave_out), ensure_ascii=False)}).rowcount

    def done_keys_for(self, run_id: str, sample_ids: Sequence[str]) -> set[tuple[str, str]]:
        """The (sample, scorer) pairs already judged among these samples (one window of a resumed run)."""
        with self._lock:
            rows = self.conn.execute(f"SELECT sample_id, scorer FROM verdicts WHERE run_id=? AND sample_id IN "
                                     f"({','.join('?' * len(sample_ids))})", (run_id, *sample_ids)).fetchall()
        return {(r[0], r[1]) for r in rows}

    def has_verdicts(self, run_id: str) -> bool:
        with self._lock:
            return self.conn.execute("SELECT 1 FROM verdicts WHERE run_id=? LIMIT 1", (run_id,)).fetchone() is not None

    def done_keys(self, run_id: str) -> set[tuple[str, str]]:
        with self._lock:
            rows = self.conn.execute("SELECT sample_id, scorer FROM verdicts WHERE run_id=?", (run_id,)).fetchall()
        return {(r[0], r[1]) for r in rows}

    def delete_verdicts(self, run_id: str, keys: Iterable[tuple[str, str]]) -> None:
        with self._lock, self.conn:
            self.conn.executemany("DELETE FROM verdicts WHERE run_id=? AND sample_id=? AND scorer=?",
                                  [(run_id, s, c) for s, c in keys])

    def verdicts(self, run: str) -> list[Verdict]:
        run_id = self.resolve(run)
        with self._lock:
            rows = self.conn.execute(
                "SELECT v.* FROM verdicts v JOIN run_samples s ON s.run_id=v.run_id AND s.sample_id=v.sample_id "
                "WHERE v.run_id=? ORDER BY s.position, v.kind DESC, v.scorer", (run_id,)).fetchall()
        return [row_to_verdict(r) for r in rows]

    def verdict_frame(self, run: str) -> pd.DataFrame:
        """One row per sample × scorer, with the sample's fields beside the verdict."""
        import pandas as pd

        samples = {s.id: s for s in self.samples(run)}
        return pd.DataFrame([verdict_record(v, samples.get(v.sample_id)) for v in self.verdicts(run)])

    def close(self) -> None:
        with self._lock:
            self.conn.close()


def verdict_record(v: Verdict, s: Sample | None) -> dict[str, Any]:
    """One row of the per-row results (verdict_frame, `rubriceval run --out`): the verdict beside its sample."""
    return {
        "sample_id": v.sample_id, "scorer": v.scorer, "kind": v.kind, "scorer_version": v.scorer_version,
        "score": v.score, "passed": v.passed, "unscored_kind": v.unscored_kind,
        "unscored_reason": v.unscored_reason, "feedback": v.feedback,
        "evidence": "; ".join(f"{e.item}: {e.detail}" for e in v.evidence),
        "question": s.question if s else "", "answer": s.answer if s else "",
        "ground_truth": s.ground_truth if s else "", "tags": ",".join(s.tags) if s else "",
        "intent": s.intent if s else "",
        **{f"usage_{k}": val for k, val in v.usage.model_dump().items()},
    }


def verdict_row(run_id: str, verdict: Verdict, input_hash: str, created_at: float) -> tuple:
    """A verdict as a `verdicts` row (column order of the table)."""
    return (run_id, verdict.sample_id, verdict.scorer, verdict.kind, verdict.scorer_version, verdict.score,
            verdict.unscored_kind, verdict.unscored_reason, verdict.feedback,
            json.dumps([e.model_dump() for e in verdict.evidence], ensure_ascii=False),
            json.dumps(verdict.details, ensure_ascii=False, default=str),
            None if verdict.passed is None else int(verdict.passed), verdict.usage.model_dump_json(),
            input_hash, created_at)


def row_to_verdict(r: Any) -> Verdict:
    return Verdict(sample_id=r["sample_id"], scorer=r["scorer"], kind=r["kind"], scorer_version=r["scorer_version"],
                   score=r["score"], unscored_kind=r["unscored_kind"], unscored_reason=r["unscored_reason"],
                   feedback=r["feedback"], evidence=[Evidence(**e) for e in json.loads(r["evidence_json"])],
                   details=json.loads(r["details_json"]), passed=None if r["passed"] is None else bool(r["passed"]),
                   usage=Usage.model_validate_json(r["usage_json"]))


def rubrics_from_run(store: RunStore, run: str) -> tuple[list[Any], list[str]]:
    """The exact rubric versions a run started with (stored in the run), so a resume can't mix versions; and its
    metric names."""
    from rubriceval.rubric.schema import Rubric

    rubrics, metrics = [], []
    for row in store.scorers(run):
        if row["kind"] == "rubric":
            rubrics.append(Rubric.model_validate(row["definition"]))
        else:
            metrics.append(row["scorer"])
    return rubrics, metrics
