"""Test doubles shipped with the package for users' own tests and the CLI: a loopback OpenAI-compatible stub server with
fault injection, scripted judges (the gullible one behind `benchmark-judge --stub-judge gullible`), and `assert_case`
(one pytest test per sample, failing with the feedback and evidence). Helpers only this repository's tests use are
in tests/helpers/, not in the wheel.

Names are imported lazily so `python -m rubriceval.testing.stub_server` does not import the module twice.
"""
from __future__ import annotations

from rubriceval.common.lazy import lazy_exports

_HOME = {
    "StubServer": "stub_server",
    "DEFAULT_TEXT": "stub_replies",
    "RequestRecord": "stub_stats", "StubStats": "stub_stats", "fetch_stats": "stub_stats",
    "SchemaError": "schema_instance", "instance_for_schema": "schema_instance",
    "embedding_for": "stub_content", "rough_token_count": "stub_content",
    "assert_case": "cases",
}
__all__ = sorted(_HOME)


__getattr__ = lazy_exports(__name__, {name: f"rubriceval.testing.{module}" for name, module in _HOME.items()},
                           globals())
