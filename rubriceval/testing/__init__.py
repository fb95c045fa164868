"""Test helpers shipped with the package: a loopback OpenAI-compatible stub server with fault injection.

Names are imported lazily so `python -m rubriceval.testing.stub_server` does not import the module twice.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["DEFAULT_TEXT", "RequestRecord", "SchemaError", "StubServer", "StubStats", "embedding_for", "fetch_stats",
           "instance_for_schema", "rough_token_count"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("rubriceval.testing.stub_server"), name)
    raise AttributeError(f"module 'rubriceval.testing' has no attribute {name!r}")
