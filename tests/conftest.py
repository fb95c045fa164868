"""Shared fixtures. Stub-server fixtures: a fresh loopback OpenAI-compatible server per test, and a judge config
pointing at it with a per-test cache. Browser tests: skipped, with one reason, where Debian chromium is missing."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from rubriceval import JudgeConfig
from rubriceval.testing.stub_server import StubServer


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
