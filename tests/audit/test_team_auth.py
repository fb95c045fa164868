"""Salted hashes in the auth file, sessions that expire, failed logins throttled per user and per address."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rubriceval.audit.passwords import hash_password, read_auth_file, verify_password, write_user
from rubriceval.audit.sessions import FREE_FAILURES, SessionExpired, TeamAuth, lock_seconds
from rubriceval.audit.team import TeamStore
from rubriceval.common.errors import RubricEvalError
from tests.helpers.team_store import build_team_store


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def auth_file(tmp_path: Path) -> Path:
    path = tmp_path / "users.auth"
    write_user(path, "lead", "lead", "lead-password")
    write_user(path, "ann", "expert", "ann-password")
    return path


@pytest.fixture()
def team(store_target: str | Path):
    build_team_store(store_target, n_samples=4, metrics=False)       # SQLite, then PostgreSQL
    with TeamStore(store_target) as store:
        yield store


def test_hashes_are_salted_and_verified() -> None:
    first, second = hash_password("same password"), hash_password("same password")
    assert first != second and "same password" not in first
    assert verify_password("same password", first) and not verify_password("other", first)
    assert not verify_password("x", "scrypt$broken")


def test_auth_file_lines_and_errors(auth_file: Path, tmp_path: Path) -> None:
    users = read_auth_file(auth_file)
    assert {n: e.role for n, e in users.items()} == {"lead": "lead", "ann": "expert"}
    assert oct(os.stat(auth_file).st_mode & 0o777) == "0o600"
    assert "ann-password" not in auth_file.read_text(encoding="utf-8")
    assert not write_user(auth_file, "ann", "lead", "new-password-1")            # replaced, not added
    users = read_auth_file(auth_file)
    assert users["ann"].role == "lead" and verify_password("new-password-1", users["ann"].password_hash)
    plain = tmp_path / "plain.auth"
    plain.write_text("# team\nalice:s3cret\n", encoding="utf-8")
    with pytest.raises(RubricEvalError, match=r"plain.auth:2 \[password\].*audit-user add alice"):
        read_auth_file(plain)
    bad_role = tmp_path / "role.auth"
    bad_role.write_text(f"bob:boss:{hash_password('whatever-1')}\n", encoding="utf-8")
    with pytest.raises(RubricEvalError, match=r"role.auth:1 \[role\]"):
        read_auth_file(bad_role)
    with pytest.raises(RubricEvalError, match="at least 8"):
        write_user(auth_file, "cat", "expert", "short")


def test_sessions_expire(auth_file: Path, team: TeamStore) -> None:
    clock = Clock()
    auth = TeamAuth(read_auth_file(auth_file), ttl_s=3600, clock=clock).bind(team)
    with pytest.raises(SessionExpired):
        auth.member("ann")                                   # never logged in
    assert auth.login("ann", "ann-password", "10.0.0.1")
    assert auth.member("ann").role == "expert" and not auth.member("ann").is_lead
    clock.now += 3599
    assert auth.member("ann").name == "ann"
    clock.now += 2
    with pytest.raises(SessionExpired, match="log in again"):
        auth.member("ann")
    assert auth.login("ann", "ann-password")
    auth.logout("ann")
    with pytest.raises(SessionExpired):
        auth.member("ann")


def test_failed_logins_back_off_exponentially_per_user_and_per_address(auth_file: Path, team: TeamStore) -> None:
    clock = Clock()
    auth = TeamAuth(read_auth_file(auth_file), clock=clock).bind(team)
    assert [lock_seconds(n) for n in range(FREE_FAILURES, FREE_FAILURES + 4)] == [1, 2, 4, 8]
    for _ in range(FREE_FAILURES):
        assert not auth.login("ann", "wrong", "10.0.0.1")
    # Locked now: even the right password is refused until the back-off has passed.
    assert not auth.login("ann", "ann-password", "10.0.0.2")
    clock.now += 1.01
    assert not auth.login("ann", "wrong again", "10.0.0.2")     # 4th failure: 2 s
    clock.now += 1.5
    assert not auth.login("ann", "ann-password", "10.0.0.2")
    clock.now += 0.6
    assert auth.login("ann", "ann-password", "10.0.0.2")        # success clears the user's count
    # The address 10.0.0.1 is throttled for every user it tries (guessing many names from one place).
    for name in ("x1", "x2", "x3"):
        assert not auth.login(name, "guess", "10.9.9.9")
    assert not auth.login("lead", "lead-password", "10.9.9.9")
    assert auth.login("lead", "lead-password", "10.0.0.3")
