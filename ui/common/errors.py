"""A user's mistake in an app shown as a warning (and in the status line), never as a server fault."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import gradio as gr

from rubriceval import RubricEvalError


def user_errors(fn: Callable[..., Any], outputs: list[Any] | None = None, status: Any = None) -> Callable[..., Any]:
    """Show a user mistake as a warning (and in `status`, when it is one of the outputs); every other output is
    left as it is (gr.skip), so each component stays usable."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RubricEvalError as exc:
            # Not logged as an exception: a missing reason is the expert's slip, not a server fault.
            text = exc.message + (f" ({exc.hint})" if exc.hint else "")
            gr.Warning(text, duration=8)
            if outputs is None or status not in outputs:
                return gr.skip()
            return [f"⚠ {text}" if o is status else gr.skip() for o in outputs]
    return wrapper
