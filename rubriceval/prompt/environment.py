"""The one place that builds Jinja environments for judge prompts (rubrics, metrics, generation).

Every environment is an `ImmutableSandboxedEnvironment` with the same settings: StrictUndefined (a misspelt
variable is an error, not an empty string), no autoescaping (prompts are plain text), `trim_blocks` and
`lstrip_blocks` (a line holding only a `{% tag %}` leaves no blank line), no trailing newline, and the two filters
`fence` and `tojson`. The sandbox matters for text that comes from YAML (rubric criteria): such text may use
`{{ sample.question }}`, but never reach Python internals (`{{ sample.__class__.__mro__ }}`) or mutate anything.

Untrusted values (answers, contexts, transcripts) are only ever template *variables*, never template source.

A prompt is one or two files: a system template (`<lang>/system.j2` unless named otherwise, or none) and
`<lang>/<name>.j2`; `render_messages` turns them into the chat messages `[{"role": "system", …}, {"role": "user",
…}]` — the one way to split system from user (no marker lines inside a template).
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from pydantic import BaseModel

from rubriceval.common.errors import RubricError
from rubriceval.safety.untrusted import fence_untrusted


def fence(value: Any) -> str:
    """Untrusted text made inert: it cannot close its own `<<<…>>>` block (delimiter look-alikes, NFKC-compared),
    open a chat turn (control-token look-alikes) nor show the judge's own result markers; see
    rubriceval/safety/untrusted.py."""
    return fence_untrusted(value)


def tojson(value: Any) -> str:
    """JSON as a reader sees it: non-ASCII kept (Chinese stays Chinese), no HTML escaping."""
    return json.dumps(value, ensure_ascii=False)


EnvironmentT = TypeVar("EnvironmentT", bound=jinja2.Environment)


def _configure(env: EnvironmentT) -> EnvironmentT:
    env.filters["fence"] = fence
    env.filters["tojson"] = tojson
    return env


@lru_cache(maxsize=32)
def _environment(search_path: tuple[str, ...]) -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(list(search_path)) if search_path else None,
        undefined=jinja2.StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=False,
        # A template is compiled once per process: no stat of its file on every render (~1 % of a judgment's CPU).
        # Edit templates between runs: a process already running keeps the copy it compiled.
        auto_reload=False)
    return _configure(env)


def prompt_environment(*search_path: str | Path | None) -> ImmutableSandboxedEnvironment:
    """The environment for templates found in `search_path` (first folder wins; None entries are skipped).

    Built once per search path. Without a path it renders only strings (`from_string`)."""
    return _environment(tuple(str(p) for p in search_path if p))


def render_messages(env: jinja2.Environment, lang: str, name: str, *, system: str | None = "system",
                    **variables: Any) -> list[dict[str, str]]:
    """`<lang>/<system>.j2` (unless `system` is None) and `<lang>/<name>.j2` as the system and user messages,
    rendered with the same variables and stripped."""
    messages = []
    if system:
        messages.append({"role": "system", "content": render_text(env, lang, system, **variables)})
    messages.append({"role": "user", "content": render_text(env, lang, name, **variables)})
    return messages


def render_text(env: jinja2.Environment, lang: str, name: str, **variables: Any) -> str:
    """One template, `<lang>/<name>.j2`, as stripped text (a message, a re-ask note)."""
    return env.get_template(f"{lang}/{name}.j2").render(**variables).strip()


def template_source(env: jinja2.Environment, name: str) -> tuple[str, str]:
    """(source, file name) of a template as the loader finds it: for fingerprints and error messages."""
    if env.loader is None:
        raise jinja2.TemplateNotFound(name)
    source, filename, _uptodate = env.loader.get_source(env, name)
    return source, filename or name


def templates_fingerprint(env: jinja2.Environment, names: list[str]) -> str:
    """Hash of the named templates as the loader finds them (a team's replacement included): put it in a scorer's
    version so an edited prompt — re-ask note included — never reuses verdicts judged with the old one."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode())
        digest.update(template_source(env, name)[0].encode())
    return digest.hexdigest()[:10]


# ── text from YAML (rubric criteria) ──────────────────────────────────────────────────────────────────────────────

class TextOrigin(BaseModel):
    """Where a piece of template text was written, for the error message."""

    file: str | None = None
    line: int | None = None
    field: str


class PromptTemplateError(RubricError):
    """Template text from a rubric cannot be rendered: unsafe (sandbox), a syntax error or an unknown name."""

    # True when the text itself is sound and only a value is missing (a field or list entry this sample lacks):
    # `validate` renders with a placeholder sample, where that is a warning rather than an error.
    unfilled: bool = False


def is_template_source(text: str) -> bool:
    """Whether YAML text holds template syntax at all (plain text is used as it is, without a render)."""
    return "{{" in text or "{%" in text or "{#" in text


# What went wrong → (what the error says, what to do), most specific first.
_TEMPLATE_PROBLEMS: tuple[tuple[type[Exception], str, str | None], ...] = (
    (SecurityError, "unsafe template expression", "only placeholders such as {{ sample.question }} may be used"),
    (jinja2.TemplateSyntaxError, "template syntax error", "write literal braces as {{ '{{' }}"),
    (jinja2.UndefinedError, "placeholder cannot be filled", "use {{ sample.<field> }} or {{ rubric.<field> }}"),
    (jinja2.TemplateError, "template error", None),
)


def render_untrusted_source(text: str, origin: TextOrigin, **variables: Any) -> str:
    """Render template text written in YAML inside the sandbox; any failure names the file, line and field."""
    try:
        return prompt_environment().from_string(text).render(**variables)
    except jinja2.TemplateError as exc:
        what, hint = next((what, hint) for kind, what, hint in _TEMPLATE_PROBLEMS if isinstance(exc, kind))
        error = PromptTemplateError(f"{what}: {exc.message or exc}", file=origin.file, line=origin.line,
                                    field=origin.field, hint=hint)
        error.unfilled = isinstance(exc, jinja2.UndefinedError)
        raise error from None
