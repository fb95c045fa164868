"""The judge: configuration, the OpenAI-compatible client, the one ask() path, and the reply parser.

Names are loaded on first use, so importing one submodule (e.g. judge.ask for the report's panel statistics) does not
import the client and the openai SDK (~0.5 s): `rubriceval report` and `--help` stay fast.
"""
from __future__ import annotations

from rubriceval.common.lazy import lazy_exports

_HOME = {
    "JudgeConfig": "config",
    "JudgeClient": "client", "JudgeResponse": "client", "CallStats": "client",
    "parse_judge_output": "parser", "ParsedOutput": "parser",
}
__all__ = sorted(_HOME)


__getattr__ = lazy_exports(__name__, {name: f"rubriceval.judge.{module}" for name, module in _HOME.items()},
                           globals())
