"""An old run store opens upgraded, never reset. tests/fixtures/stores/v0_runs.sqlite was written by the store code
before schema versions existed (three runs: old-a and old-b over the same five samples, old-c over four with one
sample changed and left `running`; an expert response and a ground-truth edit on old-a), dumped as SQL text.
The upgrade tests run on that store restored into a SQLite file and into a PostgreSQL database (the dump's statements
through the store's own connection, which maps SQLite's types), so every migration step is run on both engines with
data in the tables."""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from rubriceval import AuditStore, RubricEvalError, RunStore
from rubriceval.store.db import Database
from rubriceval.store.migrations import schema_version, upgrade

FIXTURE = Path(__file__).parents[1] / "fixtures" / "stores" / "v0_runs.sql"


def restore(dump: Path, path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(dump.read_text(encoding="utf-8"))
    conn.close()
    return path


def restore_on_server(dump: Path, url: str) -> str:
    """The dump's tables and rows in a PostgreSQL database; SQLite's bookkeeping (PRAGMA, sqlite_sequence) left out,
    identity counters moved past the restored ids as sqlite_sequence had them; SQLite's triggers left out."""
    db, statement = Database(url), ""
    with db:
        for line in dump.read_text(encoding="utf-8").splitlines(keepends=True):
            statement += line
            if not sqlite3.complete_statement(statement):
                continue
            text, statement = statement.strip(), ""
            # SQLite's triggers are its own spelling of append-only: the audit store creates PostgreSQL's on open.
            if text.startswith(("--", "BEGIN", "COMMIT", "PRAGMA", "CREATE TRIGGER")) or "sqlite_sequence" in text:
                continue
            db.execute(text.rstrip(";"))
        for table, column in (("audit_log", "log_id"), ("audit_gt_edits", "edit_id")):
            db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                       f"(SELECT MAX({column}) FROM {table}))")
    db.close()
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def old_store(request, tmp_path):
    if request.param == "sqlite":
        return restore(FIXTURE, tmp_path / "runs.sqlite")
    return restore_on_server(FIXTURE, request.getfixturevalue("postgres_url"))


def _kind_of(db: Database, name: str) -> str:
    if db.is_postgresql:
        return db.execute("SELECT CASE table_type WHEN 'VIEW' THEN 'view' ELSE 'table' END FROM "
                          "information_schema.tables WHERE table_name = ?", (name,)).fetchone()[0]
    return db.execute("SELECT type FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]




def test_the_fixture_is_a_version_0_store(old_store):
    conn = Database(old_store)
    assert conn.schema_version() == 0
    assert "pid" not in conn.columns("runs") and "run_id" in conn.columns("runs")
    assert _kind_of(conn, "run_samples") == "table"
    conn.close()


def test_an_old_store_opens_upgraded_with_every_run_verdict_and_audit(old_store):
    before = Database(old_store)
    verdicts_before = [tuple(r) for r in before.execute("SELECT * FROM verdicts ORDER BY run_id, sample_id, scorer")]
    before.close()
    store = RunStore(old_store)
    assert schema_version(store.conn) >= 1
    runs = {r.name: r for r in store.list_runs()}
    assert set(runs) == {"old-a", "old-b", "old-c"}
    assert runs["old-a"].status == "complete" and runs["old-a"].n_samples == 5 and runs["old-a"].n_verdicts == 10
    assert runs["old-c"].status == "running"       # no process recorded before the upgrade: cannot tell, not guessed
    assert [s.id for s in store.samples("old-c")] == ["s1", "s2", "s3", "s4"]
    assert store.samples("old-c")[3].ground_truth == "改过"
    after = store.conn.execute("SELECT * FROM verdicts ORDER BY run_id, sample_id, scorer").fetchall()
    assert [tuple(r) for r in after] == verdicts_before
    with AuditStore(old_store) as audit:
        assert [r.reason for r in audit.responses(store.resolve("old-a"))] == ["语气生硬"]
        assert audit.item("old-a", "s1", "soothe").sample.ground_truth == "致歉并给出时间"
    # One copy per dataset version: old-a and old-b share their five samples; old-c (one sample changed) has its own.
    ids = {name: store.dataset_id(name) for name in runs}
    assert ids["old-a"] == ids["old-b"] != ids["old-c"]
    assert store.conn.execute("SELECT COUNT(*) FROM dataset_samples").fetchone()[0] == 5 + 4
    assert _kind_of(store.conn, "run_samples") == "view"
    reopened = RunStore(old_store)                  # a second open finds nothing to do
    assert schema_version(reopened.conn) == schema_version(store.conn)


def test_two_processes_opening_an_old_store_at_once_upgrade_it_once(old_store):
    errors = []

    def open_it():
        try:
            RunStore(old_store).list_runs()
        except Exception as exc:      # noqa: BLE001 - the test reports whatever went wrong
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(RunStore(old_store).list_runs()) == 3


def test_a_store_from_a_newer_rubriceval_is_refused_not_rewritten(old_store):
    store = RunStore(old_store)
    version = schema_version(store.conn)
    store.conn.set_schema_version(version + 1)
    with pytest.raises(RubricEvalError, match="newer|knows up to"):
        upgrade(store.conn, path=str(old_store))
    assert schema_version(store.conn) == version + 1            # not rewritten
