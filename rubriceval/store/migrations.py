"""The one way a run store's schema changes: numbered steps applied in order to every store, new or old, SQLite or
PostgreSQL, and recorded as the store's schema version (SQLite's `PRAGMA user_version`; a `store_meta` row on
PostgreSQL). An old store opens upgraded, its data kept; it is never reset.

A module that only adds tables of its own (audit, trust, pairwise, batches) may keep creating them with CREATE TABLE
IF NOT EXISTS; a change to an existing table (a new column, rows moved) is a step here, appended at the end.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rubriceval.common.errors import RubricEvalError
from rubriceval.store.db import Database


@dataclass(frozen=True)
class Step:
    version: int
    what: str
    apply: Callable[[Database], None]


def _run_liveness(conn: Database) -> None:
    # Which process runs a run, so `rubriceval runs` can tell a run killed with kill -9 from one still going.
    for column in ("pid INTEGER", "host TEXT", "process_started REAL"):
        conn.execute(f"ALTER TABLE runs ADD COLUMN {column}")


def _task_appeal_days(conn: Database) -> None:
    # A task's own appeal deadline (days after the task was created); NULL: the run's window applies.
    conn.execute("ALTER TABLE team_tasks ADD COLUMN appeal_days DOUBLE PRECISION")


def _steps() -> list[Step]:
    from rubriceval.store.datasets import move_run_samples_to_datasets
    from rubriceval.store.studio_versions import create_studio_version_table
    from rubriceval.store.team_schema import create_team_tables

    return [
        Step(1, "runs record the pid, host and start time of the process running them", _run_liveness),
        Step(2, "one copy of each dataset version, shared by the runs over it (run_samples becomes a view)",
             move_run_samples_to_datasets),
        Step(3, "team audits: tasks, assignments, reviews, adjudications, metric corrections, sessions",
             create_team_tables),
        Step(4, "studio versions: every saved rubric/scorecard version, append-only (a server setup's history)",
             create_studio_version_table),
        Step(5, "audit tasks may set their own appeal deadline for their samples' verdicts (team_tasks.appeal_days)",
             _task_appeal_days),
    ]


def schema_version(conn: Database) -> int:
    return conn.schema_version()


def upgrade(conn: Database, *, path: str = "") -> int:
    """Apply the steps this store lacks, each in one write transaction (`with conn:`): a second process opening the
    store at the same moment waits, then finds the step done. Returns the store's version."""
    steps = _steps()
    latest = steps[-1].version
    version = schema_version(conn)
    if version > latest:
        raise RubricEvalError(f"this run store has schema version {version}; this rubriceval knows up to {latest}",
                              file=path or None, hint="upgrade rubriceval to open it")
    for step in steps:
        if step.version <= version:
            continue
        with conn:
            if schema_version(conn) < step.version:      # another process may have applied it meanwhile
                step.apply(conn)
                conn.set_schema_version(step.version)
        version = step.version
    return version
