"""`rubriceval audit-user` and `audit-task` through the command line, on a SQLite store file and on a PostgreSQL
database (--store postgresql://…)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from rubriceval.audit.passwords import read_auth_file, verify_password
from rubriceval.audit.team import TeamStore
from rubriceval.cli import main
from tests.helpers.team_store import build_team_store


def test_users_tasks_and_errors(store_target: str | Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys) -> None:
    store, auth = store_target, tmp_path / "users.auth"
    build_team_store(store, n_samples=40)
    monkeypatch.setattr("sys.stdin", io.StringIO("a-long-password\n"))
    assert main(["audit-user", "add", "lead", "--role", "lead", "--auth-file", str(auth), "--password-stdin"]) == 0
    assert verify_password("a-long-password", read_auth_file(auth)["lead"].password_hash)
    assert main(["audit-task", "create", "team-run", "--rubrics", "soothing,links", "--n", "10", "--overlap", "2",
                 "--experts", "a,b,c", "--sampling", "stratified", "--store", str(store), "--name", "t1"]) == 0
    assert "t1" in capsys.readouterr().out
    with TeamStore(store) as team:
        info = team.task("t1")
        assert info.n_items == 20 and info.blind and {p.expert for p in team.progress("t1")} == {"a", "b", "c"}
    assert main(["audit-task", "create", "team-run", "--rubrics", "soothing", "--n", "5", "--experts", "a",
                 "--overlap", "1", "--store", str(store), "--name", "t2", "--open", "--sampling", "lowest"]) == 0
    assert main(["audit-task", "list", "--store", str(store)]) == 0
    listed = capsys.readouterr().out
    assert "t2" in listed and "open" in listed and "a: 0/" in listed
    assert main(["audit-task", "create", "team-run", "--rubrics", "nope", "--n", "5", "--experts", "a",
                 "--store", str(store)]) == 2
    assert "no rubric nope" in capsys.readouterr().err
    assert main(["audit-task", "metric-agreement", "team-run", "--metric", "faithfulness", "--store", str(store)]) == 0
    capsys.readouterr()
    with TeamStore(store) as team:
        first = team.queue("t2", "a").rows[0]
        assert team.save_review("t2", first.item_no, "a", score=2, tags=["未先安抚"], expected_version=0).ok
    assert main(["audit-task", "tags", "team-run", "--store", str(store)]) == 0
    assert "| soothing | 未先安抚 | 1 | 100% |" in capsys.readouterr().out


def test_audit_on_a_store_with_no_runs_is_an_error_and_never_shows_a_password(store_target: str | Path,
                                                                               capsys) -> None:
    store = str(store_target)
    if store.startswith("postgresql://"):             # the test server trusts loopback: any password is accepted
        store = store.replace("postgresql://postgres@", "postgresql://postgres:s3cret-pw@")
    assert main(["audit", "--store", store]) == 2
    err = capsys.readouterr().err
    assert ("no run store here" if "://" in store else "run store not found") in err
    assert "s3cret-pw" not in err
