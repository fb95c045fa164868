"""A copy of a run store for tests that each write on their own: a SQLite file through the backup API, a PostgreSQL
database as `CREATE DATABASE … TEMPLATE` on the same server (a file-level copy: milliseconds, where rebuilding the
store takes seconds). Build the source once per module, copy it per test."""
from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rubriceval.store.location import is_server_url

# Errors a statement refused by the database raises (a trigger's RAISE, a constraint), on either engine.
try:
    import psycopg

    DATABASE_ERRORS: tuple[type[Exception], ...] = (sqlite3.DatabaseError, psycopg.Error)
except ImportError:                                  # no driver: only SQLite stores exist here
    DATABASE_ERRORS = (sqlite3.DatabaseError,)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def copy_store(source: str | Path, target: str | Path) -> str | Path:
    """Copy the store at `source` to `target`: a file path for a SQLite source, a new database name (not a URL) for
    a PostgreSQL one. Returns where the copy is (its path or URL). Nothing may be connected to a server source."""
    if not is_server_url(source):
        with closing(sqlite3.connect(source)) as reading, closing(sqlite3.connect(target)) as writing:
            reading.backup(writing)
        return Path(target)
    import psycopg

    name = str(target)
    with psycopg.connect(_with_database(str(source), "postgres"), autocommit=True) as admin:
        template = urlsplit(str(source)).path.lstrip("/")
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return _with_database(str(source), name)


def fresh_copy(source: str | Path, folder: Path) -> str | Path:
    """A copy of `source` of the same kind: `folder`/runs.sqlite, or a new database with a unique name."""
    if is_server_url(source):
        return copy_store(source, f"copy_{uuid.uuid4().hex[:12]}")
    return copy_store(source, folder / "runs.sqlite")


def empty_store(request: Any, prefix: str) -> str | Path:
    """Where a module-scoped fixture parametrized with "sqlite" / "postgresql" builds its source store: a file in a
    fresh temporary folder, or a new database on the test session's PostgreSQL server (tests/conftest.py)."""
    if request.param == "sqlite":
        return request.getfixturevalue("tmp_path_factory").mktemp(prefix) / "runs.sqlite"
    return request.getfixturevalue("postgres_server").create_database(f"{prefix}_{uuid.uuid4().hex[:8]}")
