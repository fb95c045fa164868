"""Build the NL2SQL demo database from its SQL source: datasets/nl2sql/orders.sql → datasets/nl2sql/orders.sqlite.

    python datasets/nl2sql/build_orders_db.py [--sql datasets/nl2sql/orders.sql] [--out datasets/nl2sql/orders.sqlite]

The SQL file is the source of truth (reviewable as text); the database is rebuilt from scratch every time, so the same
SQL gives the same tables. Standard library only.
"""
from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SQL = HERE / "orders.sql"
DEFAULT_DB = HERE / "orders.sqlite"


def build(sql_path: Path = DEFAULT_SQL, db_path: Path = DEFAULT_DB) -> Path:
    """Write a fresh database at `db_path` from the statements in `sql_path`."""
    script = sql_path.read_text(encoding="utf-8")
    partial = db_path.with_name(db_path.name + ".partial")
    partial.unlink(missing_ok=True)
    connection = sqlite3.connect(partial)
    try:
        connection.executescript(script)
        connection.commit()
    finally:
        connection.close()
    partial.replace(db_path)   # readers never see a half-built database
    return db_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sql", type=Path, default=DEFAULT_SQL)
    parser.add_argument("--out", type=Path, default=DEFAULT_DB)
    args = parser.parse_args()
    print(build(args.sql, args.out))


if __name__ == "__main__":
    main()
