"""Lazy package exports: a public name is imported from its defining module on first use, so importing a package
(`rubriceval`, `rubriceval.judge`, `rubriceval.testing`) does not pull in pandas, openai or the stub server."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` resolving `exports` (public name → defining module); a resolved name is stored in the
    package's `namespace`, so later lookups skip this function."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
