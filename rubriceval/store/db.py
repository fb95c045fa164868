"""One connection type for the run store, whatever holds it: a SQLite file (one laptop) or a PostgreSQL server (a
team). Every table family (runs, verdicts, datasets, audit, team, trust, pairwise, batches) writes the same SQL
through it; what differs between the two engines is said here once, not in the modules.

Why psycopg 3 rather than SQLAlchemy Core: the store is hand-written SQL, tuned per query (range scans over the
position index, batched upserts), and already portable except for a handful of spellings. psycopg 3 is the reference
PostgreSQL driver, ships its own libpq in the `binary` wheel, and needs nothing between our SQL and the server; an
ORM/expression layer would mean rewriting every query and a second abstraction to learn for a small gain.

What the layer does for PostgreSQL (SQLite gets the text unchanged):
- placeholders: `?` becomes `%s`, `:name` becomes `%(name)s`, a literal `%` is doubled (outside quoted text);
- DDL types: REAL → DOUBLE PRECISION (REAL is 4 bytes in PostgreSQL: a timestamp would lose minutes), INTEGER →
  BIGINT, BLOB → BYTEA, INTEGER PRIMARY KEY AUTOINCREMENT → an identity column, CREATE VIEW IF NOT EXISTS →
  CREATE OR REPLACE VIEW;
- functions without a common spelling: instr → strpos, GROUP_CONCAT → string_agg; JSON paths go through `Dialect`;
- write transactions: `with db:` is SQLite's BEGIN IMMEDIATE, and on PostgreSQL a BEGIN that takes one advisory
  lock per store, so writers are serialised exactly as on SQLite (the same optimistic-concurrency checks hold);
- numbers: SUM/AVG come back as int or float (never Decimal), booleans are stored as 0/1 as SQLite does;
- errors: a broken uniqueness constraint raises `IntegrityError` on both.

Connections are in autocommit mode on both engines: a statement outside `with db:` commits on its own; several
statements that must land together go inside `with db:` (nested blocks join the outer one).
"""
from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from rubriceval.common.errors import RubricEvalError
from rubriceval.store.location import display_location, is_server_url

# The error both engines raise for a broken PRIMARY KEY/UNIQUE constraint (PostgreSQL's is re-raised as this).
IntegrityError = sqlite3.IntegrityError
Engine = Literal["sqlite", "postgresql"]
_ADVISORY_LOCK = 0x72756272          # "rubr": the store's one writer lock on PostgreSQL


class Dialect:
    """The SQL spellings that differ between SQLite and PostgreSQL, as small builders used inside queries."""

    def __init__(self, engine: Engine):
        self.engine = engine

    @staticmethod
    def _json_keys(path: str) -> list[str]:
        if not re.fullmatch(r"\$(\.[A-Za-z_][A-Za-z0-9_]*)+", path):
            raise ValueError(f"unsupported JSON path {path!r} (only $.key.key…)")
        return path.split(".")[1:]

    def json_text(self, expr: str, path: str) -> str:
        """The JSON value at `path` ($.a.b) of a TEXT column holding JSON, as SQL text (NULL if absent)."""
        keys = self._json_keys(path)
        if self.engine == "sqlite":
            return f"json_extract({expr}, '{path}')"
        return f"(CAST({expr} AS jsonb) #>> '{{{','.join(keys)}}}')"

    def json_number(self, expr: str, path: str) -> str:
        """The JSON number at `path`, as a SQL double (NULL if absent)."""
        if self.engine == "sqlite":
            return self.json_text(expr, path)
        return f"CAST({self.json_text(expr, path)} AS DOUBLE PRECISION)"

    def byte_order(self, expr: str) -> str:
        """`expr` in an ORDER BY, compared byte-wise on both engines (SQLite's default; PostgreSQL's "C" collation),
        so text ties break alike whatever the server's locale."""
        return f'{expr} COLLATE "C"' if self.engine == "postgresql" else expr

    def json_kind(self, expr: str, path: str) -> str:
        """The JSON type at `path`: 'object', 'array' or 'null' alike on both engines (scalars are named differently:
        compare only with those three, or test IS NULL for an absent key)."""
        if self.engine == "sqlite":
            return f"json_type({expr}, '{path}')"
        return f"jsonb_typeof(CAST({expr} AS jsonb) #> '{{{','.join(self._json_keys(path))}}}')"

    def json_items(self, expr: str, alias: str, path: str = "$") -> str:
        """A FROM item: the elements of the JSON array at `path` as text, one row each, in column `alias.value`."""
        if self.engine == "sqlite":
            return f"json_each({expr}, '{path}') AS {alias}" if path != "$" else f"json_each({expr}) AS {alias}"
        keys = self._json_keys(path) if path != "$" else []
        source = f"CAST({expr} AS jsonb)" + (f" #> '{{{','.join(keys)}}}'" if keys else "")
        return f"jsonb_array_elements_text({source}) AS {alias}(value)"


class Database:
    """One open connection to a store (see the module docstring). Thread-safe: calls are serialised by a lock."""

    def __init__(self, target: str | Path, *, read_only: bool = False):
        self.location = display_location(target)
        self._lock = threading.RLock()
        self._depth = 0                       # nesting of `with db:` blocks
        self._server: Any = None              # a second PostgreSQL connection for streaming reads
        if is_server_url(target):
            self.engine: Engine = "postgresql"
            self._url = str(target)
            self._conn = _connect_postgresql(self._url, read_only=read_only)
        else:
            self.engine = "sqlite"
            self._url = str(target)
            self._conn = sqlite3.connect(str(target), check_same_thread=False, timeout=30, isolation_level=None)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.execute("PRAGMA journal_mode=WAL")
            # Under WAL, NORMAL never loses a committed verdict when the process is killed (only on power loss).
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            if read_only:
                self._conn.execute("PRAGMA query_only = 1")
        self.sql = Dialect(self.engine)

    @property
    def is_postgresql(self) -> bool:
        return self.engine == "postgresql"

    # -- statements ---------------------------------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Run one statement; returns a cursor (fetchone/fetchall/fetchmany, rowcount)."""
        with self._lock:
            if self.engine == "sqlite":
                return self._conn.execute(sql, params)
            return _pg_call(self._conn.execute, translate(sql), _pg_params(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any] | dict[str, Any]]) -> Any:
        with self._lock:
            if self.engine == "sqlite":
                return self._conn.executemany(sql, rows)
            cursor = self._conn.cursor()
            _pg_call(cursor.executemany, translate(sql), [_pg_params(r) for r in rows])
            return cursor

    def stream(self, sql: str, params: Sequence[Any] | dict[str, Any] = (), size: int = 2000
               ) -> Iterator[list[Any]]:
        """The rows of a query `size` at a time, without holding the result in memory (a server-side cursor on
        PostgreSQL, on a connection of its own so other queries can run between chunks)."""
        if self.engine == "sqlite":
            with self._lock:
                cursor = self._conn.execute(sql, params)
            while True:
                with self._lock:
                    rows = cursor.fetchmany(size)
                if not rows:
                    return
                yield rows
        if self._server is None:
            self._server = _connect_postgresql(self._url, read_only=True)
        with self._server.transaction(), self._server.cursor(name=f"stream_{id(self)}_{_next_id()}") as cursor:
            cursor.itersize = size
            _pg_call(cursor.execute, translate(sql), _pg_params(params))
            while rows := cursor.fetchmany(size):
                yield rows

    # -- transactions ---------------------------------------------------------------------------------------------------
    def __enter__(self) -> Database:
        self._lock.acquire()
        if self._depth == 0:
            try:
                if self.engine == "sqlite":
                    self._conn.execute("BEGIN IMMEDIATE")
                else:
                    self._conn.execute("BEGIN")
                    self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_ADVISORY_LOCK,))
            except BaseException:
                self._lock.release()
                raise
        self._depth += 1
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                self._conn.execute("ROLLBACK" if kind else "COMMIT")
        finally:
            self._lock.release()

    @contextmanager
    def reading(self) -> Iterator[Database]:
        """Several reads that must see one state (a snapshot): BEGIN … COMMIT without taking the writer lock."""
        with self._lock:
            nested = self._depth > 0
            if not nested:
                self._conn.execute("BEGIN" if self.engine == "sqlite" else "BEGIN ISOLATION LEVEL REPEATABLE READ")
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
                if not nested:
                    self._conn.execute("COMMIT")

    # -- schema version (SQLite: PRAGMA user_version; PostgreSQL: a one-row table) --------------------------------------
    def schema_version(self) -> int:
        if self.engine == "sqlite":
            return int(self.execute("PRAGMA user_version").fetchone()[0])
        self._version_table()
        row = self.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    def _version_table(self) -> None:
        # PostgreSQL's home of the version, made before any schema exists (store/schema.py declares the rest).
        if not self.table_exists("store_meta"):
            with self:                        # under the writer lock: two processes opening a new store race here
                self.execute("CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def set_schema_version(self, version: int) -> None:
        if self.engine == "sqlite":
            self.execute(f"PRAGMA user_version = {int(version)}")
        else:
            self._version_table()
            self.execute("INSERT INTO store_meta (key, value) VALUES ('schema_version', ?) "
                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(int(version)),))

    def refresh_statistics(self, *tables: str) -> None:
        """After many rows were written at once: PostgreSQL has no planner statistics for new rows until autovacuum
        reaches them (up to a minute), and meanwhile joins large tables by nested loop. SQLite plans from the
        indexes alone: nothing to do."""
        if self.engine == "postgresql":
            self.execute(f"ANALYZE {', '.join(tables)}")

    def table_exists(self, name: str) -> bool:
        if self.engine == "sqlite":
            sql = "SELECT 1 FROM sqlite_master WHERE name = ?"
        else:
            sql = "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
        return self.execute(sql, (name,)).fetchone() is not None

    def columns(self, table: str) -> list[str]:
        if self.engine == "sqlite":
            return [r[1] for r in self.execute(f"PRAGMA table_info({table})").fetchall()]
        return [r[0] for r in self.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? ORDER BY ordinal_position", (table,)).fetchall()]

    def close(self) -> None:
        with self._lock:
            for conn in (self._server, self._conn):
                if conn is not None:
                    conn.close()
            self._server = None


# -- PostgreSQL --------------------------------------------------------------------------------------------------------
_ids = iter(range(1, 1 << 62))
_ids_lock = threading.Lock()


def _next_id() -> int:
    with _ids_lock:
        return next(_ids)


def _connect_postgresql(url: str, *, read_only: bool = False) -> Any:
    try:
        import psycopg
    except ImportError:
        raise RubricEvalError("a PostgreSQL store needs the psycopg driver", file=display_location(url),
                              hint="pip install 'rubriceval[postgres]'") from None
    try:
        conn = psycopg.connect(url, autocommit=True, row_factory=_row_factory, connect_timeout=10)
    except psycopg.OperationalError as error:
        raise RubricEvalError(f"cannot connect to the PostgreSQL store: {str(error).strip()}",
                              file=display_location(url),
                              hint="check the URL (postgresql://user@host:port/database) and that the server runs"
                              ) from None
    _adapt(conn)
    if read_only:
        conn.execute("SET default_transaction_read_only = on")
    return conn


def _adapt(conn: Any) -> None:
    """SQLite's value conventions on PostgreSQL: numeric aggregates as int/float, booleans as 0/1."""
    from psycopg.adapt import Dumper, Loader

    class NumberLoader(Loader):
        def load(self, data: Any) -> int | float:
            value = Decimal(bytes(data).decode())
            return int(value) if value == value.to_integral_value() else float(value)

    class BoolAsInteger(Dumper):
        oid = conn.adapters.types["int8"].oid

        def dump(self, obj: bool) -> bytes:
            return b"1" if obj else b"0"

    conn.adapters.register_loader("numeric", NumberLoader)
    conn.adapters.register_dumper(bool, BoolAsInteger)


class _Row(tuple):
    """sqlite3.Row's interface over a PostgreSQL result row: by position, by column name, keys()."""

    _index: dict[str, int] = {}

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._index[key])
            except KeyError:
                raise IndexError(f"no such column: {key}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: Any) -> Any:
    names = [c.name for c in cursor.description or ()]
    row_class = type("Row", (_Row,), {"_index": {n: i for i, n in enumerate(names)}, "__slots__": ()})
    return lambda values: row_class(values)


def _pg_params(params: Any) -> Any:
    return dict(params) if isinstance(params, dict) else tuple(params)


def _pg_call(call: Any, *args: Any) -> Any:
    import psycopg

    try:
        return call(*args)
    except psycopg.errors.IntegrityError as error:
        if isinstance(error, (psycopg.errors.UniqueViolation, psycopg.errors.ForeignKeyViolation,
                              psycopg.errors.NotNullViolation, psycopg.errors.CheckViolation)):
            raise IntegrityError(str(error).strip()) from error
        raise


_DDL_TYPES = [
    (re.compile(r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", re.I),
     "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    (re.compile(r"\bREAL\b", re.I), "DOUBLE PRECISION"),
    (re.compile(r"\bINTEGER\b", re.I), "BIGINT"),
    (re.compile(r"\bBLOB\b", re.I), "BYTEA"),
    (re.compile(r"^\s*CREATE\s+VIEW\s+IF\s+NOT\s+EXISTS\b", re.I), "CREATE OR REPLACE VIEW"),
]
_FUNCTIONS = [(re.compile(r"\binstr\s*\(", re.I), "strpos("),
              (re.compile(r"\bgroup_concat\s*\(", re.I), "string_agg(")]
_DDL = re.compile(r"^\s*(CREATE|ALTER)\s", re.I)


@lru_cache(maxsize=2048)
def translate(sql: str) -> str:
    """SQLite-flavoured store SQL → PostgreSQL (see the module docstring). Quoted text is never touched."""
    parts: list[str] = []
    i, n = 0, len(sql)
    code = []                    # (is_code, text) segments: only code segments are rewritten
    start = 0
    while i < n:
        ch = sql[i]
        if ch in ("'", '"'):
            code.append((True, sql[start:i]))
            j = i + 1
            while j < n:
                if sql[j] == ch:
                    if j + 1 < n and sql[j + 1] == ch:       # '' or "" escapes the quote
                        j += 2
                        continue
                    break
                j += 1
            code.append((False, sql[i:j + 1]))
            i = start = j + 1
            continue
        i += 1
    code.append((True, sql[start:]))
    ddl = bool(_DDL.match(sql))
    for is_code, text in code:
        if not is_code:
            parts.append(text.replace("%", "%%"))
            continue
        text = text.replace("%", "%%")
        text = re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", text)
        text = text.replace("?", "%s")
        for pattern, replacement in _FUNCTIONS:
            text = pattern.sub(replacement, text)
        if ddl:
            for pattern, replacement in _DDL_TYPES:
                text = pattern.sub(replacement, text)
        parts.append(text)
    return "".join(parts)
