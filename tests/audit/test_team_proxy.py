"""Behind a reverse proxy the team app throttles failed logins per client (X-Forwarded-For from a trusted proxy), not
per proxy, and believes that header from nobody else."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rubriceval.audit.passwords import read_auth_file, write_user
from rubriceval.audit.sessions import (
    CLIENT_ADDRESS,
    FREE_FAILURES,
    LoginAddressMiddleware,
    TeamAuth,
    client_address,
    proxy_networks,
)
from rubriceval.audit.team import TeamStore
from tests.helpers.team_store import build_team_store

PROXY = proxy_networks(["10.0.0.5", "192.168.0.0/16"])


def test_the_client_is_the_last_hop_that_is_not_a_trusted_proxy():
    # Straight from a client: its socket address, whatever header it sends.
    assert client_address("203.0.113.7", ["1.2.3.4"], PROXY) == "203.0.113.7"
    # Through our proxy: the address the proxy saw (appended last).
    assert client_address("10.0.0.5", ["203.0.113.7"], PROXY) == "203.0.113.7"
    # A client that forges a left part of the header gains nothing: the proxy appended the real address.
    assert client_address("10.0.0.5", ["1.2.3.4, 203.0.113.7"], PROXY) == "203.0.113.7"
    # Two proxies of ours in a row (192.168.1.1 forwarded to 10.0.0.5): skip both.
    assert client_address("10.0.0.5", ["198.51.100.2, 192.168.1.1"], PROXY) == "198.51.100.2"
    # Several header lines are one list, in order.
    assert client_address("10.0.0.5", ["198.51.100.2", "192.168.1.1"], PROXY) == "198.51.100.2"
    # No proxies configured: the header is never read.
    assert client_address("10.0.0.5", ["203.0.113.7"], ()) == "10.0.0.5"
    # From the proxy without a header: the proxy itself.
    assert client_address("10.0.0.5", [], PROXY) == "10.0.0.5"


def test_a_bad_proxy_entry_is_named():
    with pytest.raises(ValueError, match="'10.0.0.300'"):
        proxy_networks(["10.0.0.300"])


def _seen_by_login(peer: str, headers: list[tuple[bytes, bytes]], path: str = "/login") -> str:
    seen = {}

    async def app(scope, receive, send):
        seen["address"] = CLIENT_ADDRESS.get()

    middleware = LoginAddressMiddleware(app, trusted_proxies=PROXY)
    asyncio.run(middleware({"type": "http", "path": path, "client": (peer, 5000), "headers": headers}, None, None))
    return seen["address"]


def test_the_middleware_gives_the_login_the_forwarded_client():
    forwarded = [(b"x-forwarded-for", b"6.6.6.6, 203.0.113.7")]
    assert _seen_by_login("10.0.0.5", forwarded) == "203.0.113.7"
    assert _seen_by_login("203.0.113.9", forwarded) == "203.0.113.9"          # not our proxy: header ignored
    assert _seen_by_login("10.0.0.5", forwarded, path="/config") == ""        # only logins are looked at


@pytest.fixture()
def auth(tmp_path: Path, store_target):
    users = tmp_path / "users.auth"
    write_user(users, "ann", "expert", "ann-password")
    write_user(users, "bob", "expert", "bob-password")
    build_team_store(store_target, n_samples=2, metrics=False)
    with TeamStore(store_target) as team:
        yield TeamAuth(read_auth_file(users), clock=lambda: 1_000_000.0).bind(team)


def test_one_guessing_client_behind_the_proxy_does_not_lock_out_the_others(auth):
    attacker = client_address("10.0.0.5", ["203.0.113.66"], PROXY)
    colleague = client_address("10.0.0.5", ["203.0.113.7"], PROXY)
    for name in ("x1", "x2", "x3", "x4", "x5")[:FREE_FAILURES + 1]:
        assert not auth.login(name, "guess", attacker)
    assert not auth.login("bob", "bob-password", attacker)       # the attacker's address is locked now
    assert auth.login("ann", "ann-password", colleague)          # another client behind the same proxy is not
