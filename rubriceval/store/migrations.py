"""The one way a run store's schema changes: numbered steps applied in order to every older store, SQLite or
PostgreSQL, once, when it is opened, and recorded as the store's schema version (SQLite's `PRAGMA user_version`; a
`store_meta` row on PostgreSQL). An old store opens upgraded, its data kept; it is never reset. A new store is created
from store/schema.py's declarations at the newest version at once.

A step changes what a store already has (adds columns, moves rows) and creates what it lacks from the declarations in
store/schema.py (`create`); it tolerates a store that lacks a table (earlier releases created some tables only when
first used: any subset of them may be there). A new step goes at the end; a step never changes once released.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rubriceval.common.errors import RubricEvalError
from rubriceval.store.db import Database
from rubriceval.store.schema import TEAM_TABLES, add_columns, create


@dataclass(frozen=True)
class Step:
    version: int
    what: str
    apply: Callable[[Database], None]


def _run_liveness(conn: Database) -> None:
    # Which process runs a run, so `rubriceval runs` can tell a run killed with kill -9 from one still going.
    add_columns(conn, "runs", "pid INTEGER", "host TEXT", "process_started REAL")


def _move_run_samples_to_datasets(conn: Database) -> None:
    from rubriceval.store.datasets import move_run_samples_to_datasets

    create(conn, "datasets", "dataset_samples")
    add_columns(conn, "runs", "dataset_id TEXT")
    if conn.table_exists("run_samples") and "run_samples" not in _views(conn):
        move_run_samples_to_datasets(conn)
        conn.execute("DROP TABLE run_samples")
    create(conn, "run_samples")


def _views(conn: Database) -> set[str]:
    if conn.is_postgresql:
        sql = "SELECT table_name FROM information_schema.views WHERE table_schema = current_schema()"
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'view'"
    return {r[0] for r in conn.execute(sql).fetchall()}


def _team_tables(conn: Database) -> None:
    create(conn, *TEAM_TABLES)


def _studio_versions(conn: Database) -> None:
    create(conn, "studio_versions")


def _task_appeal_days(conn: Database) -> None:
    # A task's own appeal deadline (days after the task was created); NULL: the run's window applies.
    add_columns(conn, "team_tasks", "appeal_days DOUBLE PRECISION")


def _every_declared_table(conn: Database) -> None:
    # Until this step, modules created their own tables when first used (audit, trust, pairwise, batches, scorecards,
    # scorecard reviews, calibration, appeals, increments, the team plan): a store has any subset of them.
    create(conn)


STEPS = [
    Step(1, "runs record the pid, host and start time of the process running them", _run_liveness),
    Step(2, "one copy of each dataset version, shared by the runs over it (run_samples becomes a view)",
         _move_run_samples_to_datasets),
    Step(3, "team audits: tasks, assignments, reviews, adjudications, metric corrections, sessions", _team_tables),
    Step(4, "studio versions: every saved rubric/scorecard version, append-only (a server setup's history)",
         _studio_versions),
    Step(5, "audit tasks may set their own appeal deadline for their samples' verdicts (team_tasks.appeal_days)",
         _task_appeal_days),
    Step(6, "every table of store/schema.py, including those modules used to create when first used",
         _every_declared_table),
]
LATEST = STEPS[-1].version


def schema_version(conn: Database) -> int:
    return conn.schema_version()


def upgrade(conn: Database, *, path: str = "") -> int:
    """Bring the store to the newest schema: a new store is created whole; an older one gets the steps it lacks,
    each in one write transaction (`with conn:`), so a second process opening the store at the same moment waits,
    then finds the step done. Returns the store's version."""
    version = schema_version(conn)
    if version == LATEST:
        return version
    if version > LATEST:
        raise RubricEvalError(f"this run store has schema version {version}; this rubriceval knows up to {LATEST}",
                              file=path or None, hint="upgrade rubriceval to open it")
    if version == 0:
        with conn:
            if schema_version(conn) == 0 and not conn.table_exists("runs"):     # nothing recorded yet: a new store
                create(conn)
                conn.set_schema_version(LATEST)
                return LATEST
    for step in STEPS:
        if step.version <= version:
            continue
        with conn:
            if schema_version(conn) < step.version:      # another process may have applied it meanwhile
                step.apply(conn)
                conn.set_schema_version(step.version)
        version = step.version
    return version
