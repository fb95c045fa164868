"""Validation messages in the page's language. `rubriceval validate` and the scorecard loader write English
(common/errors.py: file, line, field, message, hint); the studio says them again in zh or en, by structure:

* the frame — error/warning, file, line, field, hint — from the catalogue's `vframe_` keys, and the field path's
  named list entries (`item 2 (id: foo)`) as `vframe_item`;
* the message and the hint — read back into a message kind and its parameters by the kind's English text in the
  catalogue (`vmsg_`/`vhint_` keys, whose English side is the loader's wording with `{name}` where it varies), then
  said in the page's language. A nested message (`check.max_chars: Field required`) is said the same way inside.

A message of no known kind is shown in English, unchanged; in English every message is exactly the CLI's.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import MESSAGES, Lang, t

_NESTED = {"inner"}          # parameters that are messages themselves
# What some parameters look like (the rest: any text), so a generic kind ("Input should be {choices}") does not
# swallow a message of another shape.
_PARAM = {"choices": r"'.+?", "n": r"-?\d+(?:\.\d+)?", "got": r"\d+", "line": r"\d+"}
_HINT = re.compile(r"^(?P<message>.*?) \(hint: (?P<hint>.*)\)$", re.S)


class Problem(BaseModel):
    """One validation message, as the loaders give it (a Finding of `validate`, or a user error)."""

    severity: Literal["error", "warning"] = "error"
    file: str | None = None
    line: int | None = None
    field: str | None = None
    message: str
    hint: str | None = None

    @classmethod
    def of(cls, found: object) -> Problem:
        """From a lint Finding (its hint folded into the message as `(hint: …)`) or a RubricEvalError."""
        message, hint = str(getattr(found, "message", found)), getattr(found, "hint", None)
        if hint is None and (split := _HINT.match(message)):
            message, hint = split.group("message"), split.group("hint")
        severity = getattr(found, "severity", "error")
        return cls(severity="warning" if severity == "warning" else "error", file=getattr(found, "file", None),
                   line=getattr(found, "line", None), field=getattr(found, "field", None), message=message, hint=hint)


@lru_cache(maxsize=1)
def _kinds() -> list[tuple[str, re.Pattern[str]]]:
    """(key, pattern) of every message kind, longest English text first (the most specific kind wins)."""
    kinds = []
    for key, text in MESSAGES.items():
        if key.startswith(("vmsg_", "vhint_")):
            pattern = re.escape(text["en"])
            pattern = re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m.group(1)}>{_PARAM.get(m.group(1), '.+?')})",
                             pattern)
            kinds.append((key, re.compile(f"^{pattern}$", re.S)))
    return sorted(kinds, key=lambda kind: -len(MESSAGES[kind[0]]["en"]))


def say_message(text: str, lang: Lang) -> str:
    """A loader's message (or hint) in `lang`; unknown, or English: as written."""
    if lang == "en" or not text:
        return text
    for key, pattern in _kinds():
        found = pattern.match(text)
        if found:
            params = {k: say_message(v, lang) if k in _NESTED else v for k, v in found.groupdict().items()}
            return t(key, lang, **params)
    return text


_ENTRY = re.compile(r"^(item|example|question) (\d+)(?: \(id: (.*)\))?$")


def say_field(field: str, lang: Lang) -> str:
    """A field path (`item 2 (id: foo).points`) with its named list entries said in `lang`."""
    if lang == "en":
        return field
    parts = []
    for part in re.split(r"\.(?![^()]*\))", field):      # dots inside "(id: a.b)" are not separators
        entry = _ENTRY.match(part)
        if entry:
            said = t(f"vframe_{entry.group(1)}", lang, n=entry.group(2))
            part = said + (f"（id: {entry.group(3)}）" if entry.group(3) else "")
        parts.append(part)
    return ".".join(parts)


def say_problem(problem: Problem, lang: Lang) -> str:
    """The whole message: in English exactly as `rubriceval validate` prints it, in Chinese with its frame said."""
    if lang == "en":
        where = (problem.file or "") + (f":{problem.line}" if problem.line else "") + (
            f" [{problem.field}]" if problem.field else "")
        text = f"{problem.severity}: " + (f"{where}: " if where else "") + problem.message
        return text + (f" (hint: {problem.hint})" if problem.hint else "")
    frame = [t("vframe_file", lang, file=problem.file) if problem.file else "",
             t("vframe_line", lang, line=problem.line) if problem.line else "",
             t("vframe_field", lang, field=say_field(problem.field, lang)) if problem.field else ""]
    where = "，".join(x for x in frame if x)
    text = t(f"vframe_{problem.severity}", lang) + "：" + (f"{where}：" if where else "") + say_message(
        problem.message, lang)
    return text + (t("vframe_hint", lang, hint=say_message(problem.hint, lang)) if problem.hint else "")


def said_error(exc: RubricEvalError, lang: Lang) -> RubricEvalError:
    """The same user error with its message, field and hint in `lang` (what the page's warnings show)."""
    return RubricEvalError(say_message(exc.message, lang), file=exc.file, line=exc.line,
                           field=say_field(exc.field, lang) if exc.field else None,
                           hint=say_message(exc.hint, lang) if exc.hint else None)
