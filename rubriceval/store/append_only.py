"""Append-only tables (the audit log, ground-truth edits, turn verdicts, team reviews, adjudications, metric
corrections): the database itself refuses UPDATE and DELETE, on SQLite and on PostgreSQL alike, so no code path —
ours or a hand-typed statement — can rewrite what an expert saved.

SQLite: two triggers per table raising ABORT. PostgreSQL: one trigger function, attached BEFORE UPDATE OR DELETE
(per row) and BEFORE TRUNCATE (per statement), raising the same message. Created only when missing, inside the
caller's write transaction (`with db:`), so two processes opening a new store at once do not race.
"""
from __future__ import annotations

from rubriceval.store.db import Database

_PG_FUNCTION = ("CREATE OR REPLACE FUNCTION rubriceval_append_only() RETURNS trigger LANGUAGE plpgsql AS "
                "$body$ BEGIN RAISE EXCEPTION '%', TG_ARGV[0]; END $body$")


def sqlite_triggers(table: str, message: str) -> list[str]:
    """SQLite's triggers (names kept from the first stores: existing files already hold them)."""
    return [f"CREATE TRIGGER IF NOT EXISTS {table}_no_{event.lower()} BEFORE {event} ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{message}'); END" for event in ("UPDATE", "DELETE")]


def make_append_only(db: Database, tables: dict[str, str]) -> None:
    """Refuse UPDATE/DELETE (and TRUNCATE) on each table; `tables` maps a table to its error message."""
    with db:
        if db.engine == "sqlite":
            for table, message in tables.items():
                for statement in sqlite_triggers(table, message):
                    db.execute(statement)
            return
        if db.execute("SELECT 1 FROM pg_proc WHERE proname = 'rubriceval_append_only'").fetchone() is None:
            db.execute(_PG_FUNCTION)
        existing = {r[0] for r in db.execute(
            "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE c.relnamespace = to_regnamespace(current_schema())::oid").fetchall()}
        for table, message in tables.items():
            for name, when in ((f"{table}_append_only", "UPDATE OR DELETE ON {t} FOR EACH ROW"),
                               (f"{table}_no_truncate", "TRUNCATE ON {t} FOR EACH STATEMENT")):
                if name not in existing:
                    db.execute(f"CREATE TRIGGER {name} BEFORE {when.format(t=table)} "
                               f"EXECUTE FUNCTION rubriceval_append_only('{message}')")
