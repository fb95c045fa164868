"""The generated SQL can never change the database: three locks, each tested on its own, and the file's hash.

Lock 1: `parse_query` lets through one SELECT/WITH and nothing else. Lock 2: even a statement that skipped lock 1
is refused by SQLite's authorizer. Lock 3: even without the authorizer the connection is read-only (mode=ro URI +
query_only). Plus the bounds: a never-ending recursive CTE is interrupted, a result over the row cap is refused.
"""
from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rubriceval.standard_metrics.sql.readonly import connect_read_only, read_schema, run_query
from rubriceval.standard_metrics.sql.statement import SqlProblem, parse_query

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "datasets" / "nl2sql" / "build_orders_db.py"

WRITES = [
    "UPDATE orders SET status = '已取消'",
    "DELETE FROM refunds",
    "INSERT INTO refunds (id, order_id, amount, reason, status, requested_at) VALUES (99, 1001, 1, 'x', '处理中', 'now')",
    "REPLACE INTO customers VALUES (1, 'x', 'x', 'x', '普通', 'x')",
    "DROP TABLE orders",
    "CREATE TABLE stolen AS SELECT * FROM customers",
    "ALTER TABLE orders ADD COLUMN hacked TEXT",
    "ATTACH DATABASE '/tmp/nl2sql_attached.sqlite' AS other",
    "PRAGMA query_only = 0",
    "PRAGMA writable_schema = 1",
    "VACUUM INTO '/tmp/nl2sql_vacuum_copy.sqlite'",
    "BEGIN IMMEDIATE",
]


def build_orders_db(path: Path) -> Path:
    """The demo order database, built by its committed script from its committed SQL."""
    subprocess.run([sys.executable, str(BUILD_SCRIPT), "--out", str(path)], check=True, capture_output=True)
    return path


@pytest.fixture
def orders_db(tmp_path: Path) -> Path:
    return build_orders_db(tmp_path / "orders.sqlite")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(db: Path, sql: str, *, timeout_s: float = 2.0, row_cap: int = 1000):
    return run_query(db, sql, timeout_s=timeout_s, row_cap=row_cap)


def test_a_select_runs_and_returns_typed_rows(orders_db: Path):
    table = run(orders_db, "SELECT id, total_amount, shipped_at FROM orders WHERE customer_id = 3 ORDER BY id")
    assert table.columns == ["id", "total_amount", "shipped_at"]
    assert table.rows == [(1005, 59.0, None), (1006, 199.0, None)]


@pytest.mark.parametrize("sql", [*WRITES, "SELECT 1; DROP TABLE orders",
                                 "WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a"])
def test_lock_1_the_gate_refuses_everything_but_one_select(sql: str):
    with pytest.raises(SqlProblem) as refused:
        parse_query(sql)
    assert refused.value.problem in ("not_read_only", "multiple_statements")


@pytest.mark.parametrize("sql", WRITES)
def test_lock_2_the_authorizer_refuses_writes_that_skipped_the_gate(orders_db: Path, sql: str):
    before = digest(orders_db)
    with pytest.raises(SqlProblem) as refused:
        run(orders_db, sql)
    assert refused.value.problem == "refused", refused.value.reason
    assert digest(orders_db) == before
    assert not Path("/tmp/nl2sql_vacuum_copy.sqlite").exists()
    assert not Path("/tmp/nl2sql_attached.sqlite").exists()


def test_lock_2_refuses_a_second_statement_and_table_valued_pragmas(orders_db: Path):
    before = digest(orders_db)
    for sql in ("SELECT 1; DROP TABLE orders", "SELECT * FROM pragma_table_info('orders')",
                "SELECT load_extension('/tmp/evil')"):
        with pytest.raises(SqlProblem) as refused:
            run(orders_db, sql)
        assert refused.value.problem == "refused", sql
    assert digest(orders_db) == before


@pytest.mark.parametrize("sql", ["UPDATE orders SET status = '已取消'", "DROP TABLE orders", "DELETE FROM refunds",
                                 "CREATE TABLE stolen (x)"])
def test_lock_3_the_connection_itself_cannot_write(orders_db: Path, sql: str):
    before = digest(orders_db)
    connection = connect_read_only(orders_db)   # no authorizer on this one
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly|read-only|query_only"):
            connection.execute(sql)
    finally:
        connection.close()
    assert digest(orders_db) == before


def test_a_never_ending_recursive_cte_is_interrupted(orders_db: Path):
    started = time.monotonic()
    with pytest.raises(SqlProblem) as stopped:
        run(orders_db, "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n",
            timeout_s=0.3)
    assert stopped.value.problem == "timeout"
    assert time.monotonic() - started < 3


def test_row_cap_refuses_rather_than_truncates(orders_db: Path):
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n"
    with pytest.raises(SqlProblem) as capped:
        run(orders_db, endless, row_cap=50)
    assert capped.value.problem == "row_cap"
    assert len(run(orders_db, "SELECT id FROM orders", row_cap=18).rows) == 18   # exactly at the cap is fine
    with pytest.raises(SqlProblem):
        run(orders_db, "SELECT id FROM orders", row_cap=17)


def test_huge_values_are_refused(orders_db: Path):
    with pytest.raises(SqlProblem) as refused:
        run(orders_db, "SELECT zeroblob(50000000)")
    assert refused.value.problem == "failed"


def test_missing_database_file_is_reported(tmp_path: Path):
    with pytest.raises(SqlProblem) as missing:
        run(tmp_path / "nope.sqlite", "SELECT 1")
    assert missing.value.problem == "no_database"
    assert not (tmp_path / "nope.sqlite").exists()      # mode=ro never creates a file


def test_schema_is_read_from_the_database(orders_db: Path):
    tables, ddl = read_schema(orders_db)
    assert list(tables) == ["customers", "orders", "items", "refunds"]
    assert tables["orders"]["total_amount"] == "REAL"
    assert any("CREATE TABLE refunds" in statement for statement in ddl)


def test_the_demo_database_is_rebuilt_identically(tmp_path: Path):
    first = build_orders_db(tmp_path / "a.sqlite")
    second = build_orders_db(tmp_path / "b.sqlite")
    dump = lambda path: list(sqlite3.connect(path).iterdump())  # noqa: E731
    assert dump(first) == dump(second)
    assert len([line for line in dump(first) if line.startswith('INSERT INTO "orders"')]) == 18


def test_the_committed_demo_database_matches_its_sql(tmp_path: Path):
    committed = ROOT / "datasets" / "nl2sql" / "orders.sqlite"
    dump = lambda path: list(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True).iterdump())  # noqa: E731
    assert dump(committed) == dump(build_orders_db(tmp_path / "fresh.sqlite")), \
        "datasets/nl2sql/orders.sql changed: rebuild with python datasets/nl2sql/build_orders_db.py"
