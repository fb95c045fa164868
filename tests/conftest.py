"""Shared fixtures. Stub-server fixtures: a fresh loopback OpenAI-compatible server per test, and a judge config
pointing at it with a per-test cache."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rubriceval.judge.config import JudgeConfig
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
