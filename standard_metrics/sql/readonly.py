"""Run one query against a SQLite file with no way to change anything, for a bounded time and a bounded result.

The generated SQL is hostile input (a chatbot wrote it). `statement.parse_query` already refused everything but a
single SELECT/WITH; this module adds two locks that do not depend on sqlglot reading SQLite's grammar right:

1. the connection is opened read-only (`file:…?mode=ro` URI) and `PRAGMA query_only=1` is set before any
   query text is seen;
2. an authorizer lets the statement read and compute and denies every other action (INSERT/UPDATE/DELETE,
   CREATE/DROP/ALTER, ATTACH/DETACH, PRAGMA, transactions …), so SQLite refuses it at prepare time;

and three bounds: a progress handler interrupts a statement still running after `timeout_s` (a recursive CTE
that never ends); at most `row_cap` rows are fetched (one more row means "over the cap", not a truncated
result); strings and blobs are capped at `MAX_VALUE_BYTES`, and no database can be attached (Python ≥ 3.11).
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rubriceval.standard_metrics.sql.statement import Schema, SqlProblem

MAX_VALUE_BYTES = 1_000_000          # one string/blob value; SQLite's default allows 1 GB
_PROGRESS_EVERY = 1_000              # VM instructions between two looks at the clock

_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
# Functions that reach outside the database (none is registered by Python's sqlite3; denied should one appear).
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


class ResultTable(BaseModel):
    """A query's result: column names as SQLite reports them, rows as Python values (int, float, str, bytes, None)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


def _authorize(action: int, arg1: str | None, arg2: str | None, db_name: str | None, trigger: str | None) -> int:
    if action not in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect_read_only(database: Path) -> sqlite3.Connection:
    """A connection that cannot write: read-only URI, query_only, capped value sizes (no authorizer yet)."""
    if not database.is_file():
        raise SqlProblem("no_database", f"database file not found: {database}")
    try:
        connection = sqlite3.connect(database.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise SqlProblem("no_database", f"cannot open {database} read-only: {exc}") from None
    connection.execute("PRAGMA query_only = 1")
    if hasattr(connection, "setlimit"):      # Python ≥ 3.11
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    return connection


def run_query(database: Path, sql: str, *, timeout_s: float, row_cap: int) -> ResultTable:
    """Run one (already gate-checked) query; `SqlProblem` (timeout, row_cap, refused, failed, no_database) says
    why there is no result."""
    connection = connect_read_only(database)
    deadline = time.monotonic() + timeout_s
    try:
        connection.set_authorizer(_authorize)
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_EVERY)
        try:
            cursor = connection.execute(sql)
            rows = cursor.fetchmany(row_cap + 1)
        except sqlite3.ProgrammingError as exc:   # e.g. "You can only execute one statement at a time."
            raise SqlProblem("refused", f"refused: {exc}") from None
        except sqlite3.DatabaseError as exc:
            if time.monotonic() > deadline:
                raise SqlProblem("timeout", f"still running after {timeout_s:g} s (interrupted)") from None
            if "not authorized" in str(exc) or "authorization denied" in str(exc):
                raise SqlProblem("refused", f"refused by the read-only guard: {exc}") from None
            raise SqlProblem("failed", f"SQLite error: {exc}") from None
        except (sqlite3.Warning, OverflowError) as exc:
            raise SqlProblem("refused", f"refused: {exc}") from None
        if len(rows) > row_cap:
            raise SqlProblem("row_cap", f"returns more than {row_cap} rows (row cap)")
        columns = [description[0] for description in cursor.description or []]
        return ResultTable(columns=columns, rows=[tuple(row) for row in rows])
    finally:
        connection.close()


def read_schema(database: Path) -> tuple[Schema, list[str]]:
    """(table → column → declared type, the CREATE statements) of the database's tables, for sqlglot and the judge."""
    connection = connect_read_only(database)
    try:
        tables = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                                    "AND name NOT LIKE 'sqlite_%' ORDER BY rowid").fetchall()
        schema: Schema = {}
        for name, _ in tables:
            columns = connection.execute("SELECT name, type FROM pragma_table_info(?)", (name,)).fetchall()
            schema[name] = {column: declared or "" for column, declared in columns}
        return schema, [ddl for _, ddl in tables if ddl]
    except sqlite3.Error as exc:
        raise SqlProblem("no_database", f"cannot read the schema of {database}: {exc}") from None
    finally:
        connection.close()
