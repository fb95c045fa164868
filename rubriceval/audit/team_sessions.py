"""Logins of the team audit app in the run store: sessions that expire, and failed-login counters per user and per
address (the back-off policy is rubriceval/audit/sessions.py). Portable SQL, on the TeamStore's connection."""
from __future__ import annotations

import uuid

from rubriceval.audit.team import TeamStore


def start_session(store: TeamStore, username: str, role: str, ip: str, *, now: float, ttl_s: float) -> str:
    session_id = uuid.uuid4().hex
    with store.writing() as conn:
        conn.execute("INSERT INTO team_sessions (session_id, username, role, ip, started_at, expires_at) VALUES "
                     "(:id, :u, :role, :ip, :now, :exp)", {"id": session_id, "u": username, "role": role, "ip": ip,
                                                           "now": now, "exp": now + ttl_s})
    return session_id


def session_expires(store: TeamStore, username: str, *, now: float) -> float | None:
    """When the user's newest live session ends; None when they have none (never logged in, expired, logged out)."""
    rows = store.query("SELECT MAX(expires_at) FROM team_sessions WHERE username = :u AND ended_at IS NULL AND "
                       "expires_at > :now", {"u": username, "now": now})
    return rows[0][0] if rows else None


def end_sessions(store: TeamStore, username: str, *, now: float) -> None:
    with store.writing() as conn:
        conn.execute("UPDATE team_sessions SET ended_at = :now WHERE username = :u AND ended_at IS NULL",
                     {"u": username, "now": now})


def locked_until(store: TeamStore, subjects: list[str]) -> float:
    """The latest moment any of these subjects ('user:…', 'ip:…') may try again (0: free now)."""
    rows = store.query("SELECT MAX(locked_until) FROM team_login_failures WHERE subject IN ("
                       + ", ".join(f":s{i}" for i in range(len(subjects))) + ")",
                       {f"s{i}": s for i, s in enumerate(subjects)})
    return rows[0][0] or 0.0


def failures(store: TeamStore, subject: str) -> tuple[int, float]:
    """(failed attempts, time of the last) of a subject."""
    rows = store.query("SELECT failures, last_failure FROM team_login_failures WHERE subject = :s", {"s": subject})
    return (rows[0][0], rows[0][1]) if rows else (0, 0.0)


def set_failures(store: TeamStore, subject: str, count: int, *, now: float, locked: float) -> None:
    with store.writing() as conn:
        conn.execute("INSERT INTO team_login_failures (subject, failures, last_failure, locked_until) VALUES "
                     "(:s, :n, :now, :locked) ON CONFLICT (subject) DO UPDATE SET failures = excluded.failures, "
                     "last_failure = excluded.last_failure, locked_until = excluded.locked_until",
                     {"s": subject, "n": count, "now": now, "locked": locked})


def clear_failures(store: TeamStore, subject: str) -> None:
    with store.writing() as conn:
        conn.execute("DELETE FROM team_login_failures WHERE subject = :s", {"s": subject})
