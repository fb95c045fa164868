"""Where the tests' data files live: `tests/fixtures/`, inside the repository, so a bare clone can run every test."""
from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_path(*parts: str) -> Path:
    """A file under tests/fixtures/, e.g. fixture_path("reference", "fbeta.jsonl")."""
    return FIXTURES.joinpath(*parts)
