"""An old run store opens upgraded, never reset. tests/fixtures/stores/v0_runs.sqlite was written by the store code
before schema versions existed (three runs: old-a and old-b over the same five samples, old-c over four with one
sample changed and left `running`; an expert response and a ground-truth edit on old-a), dumped as SQL text."""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from rubriceval import AuditStore, RubricEvalError, RunStore
from rubriceval.store.migrations import schema_version, upgrade

FIXTURE = Path(__file__).parent / "fixtures" / "stores" / "v0_runs.sql"


def restore(dump: Path, path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(dump.read_text(encoding="utf-8"))
    conn.close()
    return path


@pytest.fixture
def old_store(tmp_path):
    return restore(FIXTURE, tmp_path / "runs.sqlite")




def test_the_fixture_is_a_version_0_store(old_store):
    with sqlite3.connect(old_store) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        assert "pid" not in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    conn.close()


def test_an_old_store_opens_upgraded_with_every_run_verdict_and_audit(old_store):
    before = sqlite3.connect(old_store)
    verdicts_before = before.execute("SELECT * FROM verdicts ORDER BY run_id, sample_id, scorer").fetchall()
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
    assert [tuple(r) for r in after] == [tuple(r) for r in verdicts_before]
    with AuditStore(old_store) as audit:
        assert [r.reason for r in audit.responses(store.resolve("old-a"))] == ["语气生硬"]
        assert audit.item("old-a", "s1", "soothe").sample.ground_truth == "致歉并给出时间"
    # One copy per dataset version: old-a and old-b share their five samples; old-c (one sample changed) has its own.
    ids = {name: store.dataset_id(name) for name in runs}
    assert ids["old-a"] == ids["old-b"] != ids["old-c"]
    assert store.conn.execute("SELECT COUNT(*) FROM dataset_samples").fetchone()[0] == 5 + 4
    assert store.conn.execute("SELECT type FROM sqlite_master WHERE name='run_samples'").fetchone()[0] == "view"
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
