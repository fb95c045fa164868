"""Who is logged in to the team audit app, for how long, and how fast a wrong password may be retried.

`TeamAuth` is the callable Gradio's login form calls with (name, password). It checks the salted hash from the
auth file, throttles failures per user and per client address with exponential back-off (the first FREE_FAILURES
are free, then 1 s, 2 s, 4 s … up to MAX_LOCK_S; attempts during a lock are refused unchecked and not counted, so a
lock cannot be stretched forever), and opens a session that expires after `ttl_s`. Every event of the app asks
`member(username)`, which refuses a user whose session ended; the app then drops their Gradio login.

Gradio gives the auth callable no request, so LoginAddressMiddleware (ASGI) puts the client address of each
/login request where the callable can read it. Behind a reverse proxy every request comes from the proxy's address,
so every user would share one throttle (one attacker locks everyone out; or, per-user limits aside, nobody is
throttled per address at all). The app is told which peers are its proxies (`--trusted-proxy`): for a request from
one of them the client is the right-most X-Forwarded-For address that is not itself a trusted proxy — the left part
of that header is whatever the client wrote, so it is never believed; from any other peer the header is ignored.
"""
from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

from rubriceval.audit.passwords import AuthEntry, burn_time, verify_password
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_sessions import (
    clear_failures,
    end_sessions,
    failures,
    locked_until,
    session_expires,
    set_failures,
    start_session,
)
from rubriceval.store.team_models import LEAD_ROLES, Role, TeamError

CLIENT_ADDRESS: ContextVar[str] = ContextVar("rubriceval_client_address", default="")
FREE_FAILURES = 3
BASE_LOCK_S = 1.0
MAX_LOCK_S = 15 * 60.0
FORGET_AFTER_S = 60 * 60.0          # a subject's failures are forgotten after an hour without one
DEFAULT_TTL_S = 8 * 3600.0


class Member(BaseModel):
    name: str
    role: Role

    @property
    def is_lead(self) -> bool:
        return self.role in LEAD_ROLES


class SessionExpired(TeamError):
    """The user's session ended: they must log in again."""


def lock_seconds(failure_count: int) -> float:
    """How long the next attempt waits after `failure_count` failures in a row."""
    if failure_count < FREE_FAILURES:
        return 0.0
    return min(MAX_LOCK_S, BASE_LOCK_S * 2 ** (failure_count - FREE_FAILURES))


class TeamAuth:
    def __init__(self, users: dict[str, AuthEntry], *, ttl_s: float = DEFAULT_TTL_S,
                 clock: Callable[[], float] = time.time):
        self.users = users
        self.ttl_s = ttl_s
        self.clock = clock
        self.store: TeamStore | None = None

    def bind(self, store: TeamStore) -> TeamAuth:
        self.store = store
        return self

    def _store(self) -> TeamStore:
        if self.store is None:
            raise TeamError("the login check is not bound to a store (TeamAuth.bind)")
        return self.store

    def __call__(self, username: str, password: str) -> bool:
        return self.login(username, password, CLIENT_ADDRESS.get())

    def login(self, username: str, password: str, address: str = "") -> bool:
        store, now = self._store(), self.clock()
        name = " ".join((username or "").split())
        subjects = [f"user:{name}"] + ([f"ip:{address}"] if address else [])
        if locked_until(store, subjects) > now:
            return False
        entry = self.users.get(name)
        if entry is None:
            burn_time(password)
        if entry is None or not verify_password(password, entry.password_hash):
            for subject in subjects:
                count, last = failures(store, subject)
                count = 1 if now - last > FORGET_AFTER_S else count + 1
                set_failures(store, subject, count, now=now, locked=now + lock_seconds(count))
            return False
        clear_failures(store, subjects[0])        # the address keeps its count: one good account must not reset it
        start_session(store, name, entry.role, address, now=now, ttl_s=self.ttl_s)
        return True

    def member(self, username: str | None) -> Member:
        """The logged-in user behind an event, or SessionExpired."""
        entry = self.users.get(username or "")
        if entry is None or session_expires(self._store(), entry.name, now=self.clock()) is None:
            raise SessionExpired("your session has ended: log in again", field="session",
                                 hint="open /logout, then log in")
        return Member(name=entry.name, role=entry.role)

    def logout(self, username: str) -> None:
        end_sessions(self._store(), username, now=self.clock())

    def members(self) -> list[Member]:
        return [Member(name=e.name, role=e.role) for e in self.users.values()]


ProxyNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def proxy_networks(entries: Iterable[str]) -> tuple[ProxyNetwork, ...]:
    """`--trusted-proxy` values (an address or a network: 10.0.0.5, 10.0.0.0/8, ::1) as networks; a bad one is a
    usage error naming it."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"--trusted-proxy {entry!r}: not an IP address or network") from None
    return tuple(networks)


def _is_proxy(address: str, proxies: tuple[ProxyNetwork, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return False
    return any(ip in network for network in proxies)


def client_address(peer: str, forwarded_for: Iterable[str], proxies: tuple[ProxyNetwork, ...]) -> str:
    """The address a login is throttled by: the socket peer, unless the peer is a trusted proxy; then the right-most
    X-Forwarded-For hop that is not a trusted proxy (each proxy appends the address it saw)."""
    if not proxies or not _is_proxy(peer, proxies):
        return peer
    hops = [hop.strip() for header in forwarded_for for hop in header.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _is_proxy(hop, proxies):
            return hop
    return hops[0] if hops else peer        # every hop is a proxy of ours: the first is as far as we can see


class LoginAddressMiddleware:
    """ASGI middleware: the client address of a /login request, for TeamAuth's per-address throttle."""

    def __init__(self, app: Any, trusted_proxies: tuple[ProxyNetwork, ...] = ()):
        self.app = app
        self.trusted_proxies = trusted_proxies

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and str(scope.get("path", "")).endswith("/login"):
            client = scope.get("client") or ("", 0)
            forwarded = [value.decode("latin-1") for name, value in scope.get("headers", [])
                         if name.lower() == b"x-forwarded-for"]
            token = CLIENT_ADDRESS.set(client_address(str(client[0]), forwarded, self.trusted_proxies))
            try:
                await self.app(scope, receive, send)
            finally:
                CLIENT_ADDRESS.reset(token)
        else:
            await self.app(scope, receive, send)
