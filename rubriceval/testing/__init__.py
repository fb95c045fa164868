"""Test helpers shipped with the package: a loopback OpenAI-compatible stub server with fault injection.

Names are imported lazily so `python -m rubriceval.testing.stub_server` does not import the module twice.
"""
from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "StubServer": "stub_server",
    "DEFAULT_TEXT": "stub_replies",
    "RequestRecord": "stub_stats", "StubStats": "stub_stats", "fetch_stats": "stub_stats",
    "SchemaError": "schema_instance", "instance_for_schema": "schema_instance",
    "embedding_for": "stub_content", "rough_token_count": "stub_content",
}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(f"rubriceval.testing.{_HOME[name]}"), name)
    raise AttributeError(f"module 'rubriceval.testing' has no attribute {name!r}")
