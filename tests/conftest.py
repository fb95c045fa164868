"""Shared fixtures. Stub-server fixtures: a fresh loopback OpenAI-compatible server per test, and a judge config
pointing at it with a per-test cache. Browser tests: skipped, with one reason, where Debian chromium is missing.
Store back ends: `store_target` runs a test once on a SQLite file and once on a fresh database of a real PostgreSQL
server (one per test session, started from Debian's binaries on 127.0.0.1; `make postgres-deps` installs them)."""
from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rubriceval import JudgeConfig
from rubriceval.testing.stub_server import StubServer
from tests.helpers.postgres_server import NOT_FOUND, PostgresServer, server_binaries


@pytest.fixture
def stub_server() -> Iterator[StubServer]:
    """No latency, no random faults; script faults with `stub_server.script([...])`."""
    with StubServer() as stub:
        yield stub


@pytest.fixture
def judge_config(stub_server: StubServer, tmp_path: Path) -> JudgeConfig:
    """A judge config for the stub; tweak per test with `judge_config.model_copy(update={...})`."""
    return JudgeConfig(base_url=stub_server.base_url, model="stub", cache_path=str(tmp_path / "cache.sqlite"),
                       timeout_s=2, max_retries=3)


CHROMIUM = shutil.which("chromium")
NO_CHROMIUM = ("browser tests: no `chromium` on PATH (`make browser-deps` installs Debian's with apt-get, which needs "
               "root)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Raised here rather than in each test file, so `-ra` folds every browser test into one line.
    if CHROMIUM is None and item.get_closest_marker("browser") is not None:
        pytest.skip(NO_CHROMIUM)


@pytest.fixture
def chromium() -> str:
    """The chromium executable for Playwright (browser tests are skipped before they get here when there is none)."""
    assert CHROMIUM is not None, NO_CHROMIUM
    return CHROMIUM


_databases = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the test session (skipped, with the reason, where its binaries are missing)."""
    if server_binaries() is None:
        pytest.skip(NOT_FOUND)
    folder = Path(tempfile.mkdtemp(prefix="rubriceval-pg-"))      # /tmp: reachable by the `postgres` user
    server = PostgresServer.start(folder)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh, empty database on the session's PostgreSQL server."""
    return postgres_server.create_database(f"test_{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], str | Path]:
    """New run stores for a test, each `store_factory(name)` a store of its own: SQLite files, then (the same test
    again) fresh databases on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return lambda name="runs": tmp_path / f"{name}.sqlite"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return lambda name="runs": server.create_database(f"test_{next(_databases)}_{name}")


@pytest.fixture
def store_target(store_factory: Callable[[str], str | Path]) -> str | Path:
    """Where a test's run store lives: a SQLite file, then a PostgreSQL database (the same test, both back ends)."""
    return store_factory("runs")
