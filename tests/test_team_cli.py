"""`rubriceval audit-user` and `audit-task` through the command line."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from rubriceval.audit.passwords import read_auth_file, verify_password
from rubriceval.cli import main
from rubriceval.store.team import TeamStore
from rubriceval.testing.team_store import build_team_store


def test_users_tasks_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    store, auth = tmp_path / "runs.sqlite", tmp_path / "users.auth"
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
