"""The checks box of the rubric form: every deterministic check as a block a lead reads and edits, and which checks
the form cannot show faithfully.

A block is the check's `id: kind` line, then one value per line: a phrase (or step) starts with `- `, and each
further alternative of that phrase (what the YAML writes `私下转账|加我微信`) is a line of its own starting with `/ `:

    no_private_contact: must_not_mention
      - 私下转账
        / 加我微信
      - 个人微信

so a `|` is never a separator of the box and a regex's own `|` (`expense\\S*|费用系统`) stays in its pattern. Text
after ` # ` on the `id: kind` line is a note the box adds (the check's other keys, kept as written) and is ignored.

Alternatives are compared as the checks read them (each one stripped, empty ones dropped: checks/base.py), so a
phrase written `a | b` shows as two alternatives and, unchanged, is not rewritten. A check whose writing the box
cannot hold (a merge key `<<:`, an anchor others merge, a kind or value form the box does not edit) is not in the
box: the page shows it read-only beside the raw YAML editor, and the form never rewrites or drops it.
"""
from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.studio.check_kinds import CHECK_FIELDS, SINGLE_VALUE_KINDS

NEW_VALUE, ALTERNATIVE = "- ", "/ "
_HEADER = re.compile(r"^(?P<id>[^\s:：]+)\s*[:：]\s*(?P<kind>[A-Za-z_]+)\s*(?:#.*)?$")


class CheckSpec(BaseModel):
    """One deterministic check as the box shows it: its id, its kind and its values (phrases or steps, each with its
    `|` alternatives; or the one pattern, link or length)."""

    id: str
    type: str
    values: list[str] = Field(default_factory=list)

    def same_as(self, other: CheckSpec | None) -> bool:
        """The same check as the checks read it (alternatives stripped, empty ones dropped)."""
        return other is not None and (self.id, self.type, self.normalised()) == (other.id, other.type,
                                                                                  other.normalised())

    def normalised(self) -> list[str]:
        if self.type in SINGLE_VALUE_KINDS:
            return [v.strip() for v in self.values]
        return [normalise_phrase(v) for v in self.values]


def normalise_phrase(phrase: str) -> str:
    return "|".join(a.strip() for a in phrase.split("|") if a.strip())


def unfaithful(item: Any) -> str | None:
    """Why the box cannot show this item as written (a key of the `studio_ro_` texts), or None: it can."""
    if getattr(item, "merge", None):
        return "studio_ro_merge"
    if getattr(getattr(item, "anchor", None), "value", None):
        return "studio_ro_anchor"
    kind = item.get("type")
    if kind not in CHECK_FIELDS:
        return "studio_ro_kind"
    if not isinstance(item.get("id"), str) or not re.fullmatch(r"[^\s:：#]+", item.get("id")):
        return "studio_ro_values"
    field = CHECK_FIELDS[kind][0]
    if field not in item:
        # required_link without url: any link (its url_pattern / allowed_domains are kept); phrases in `match:`
        # (a predicate) are not a list the box edits
        return None if kind == "required_link" and "url_pattern" not in item else "studio_ro_values"
    value = item.get(field)
    if kind == "max_length":
        return None if isinstance(value, int) and not isinstance(value, bool) else "studio_ro_values"
    values = [value] if kind in SINGLE_VALUE_KINDS else value
    if not isinstance(values, list) or not all(isinstance(v, str) and "\n" not in v for v in values):
        return "studio_ro_values"
    if kind not in SINGLE_VALUE_KINDS and not all(normalise_phrase(v) for v in values):
        return "studio_ro_values"
    if kind in SINGLE_VALUE_KINDS and values[0] != values[0].strip():
        return "studio_ro_values"
    return None


def spec_of(item: Any) -> CheckSpec:
    """The box's view of an item `unfaithful` accepts."""
    kind = str(item.get("type"))
    value = item.get(CHECK_FIELDS[kind][0])
    values = [] if value is None else [str(value)] if kind in SINGLE_VALUE_KINDS else [str(v) for v in value]
    return CheckSpec(id=str(item.get("id")), type=kind, values=values)


def block(spec: CheckSpec, note: str = "") -> str:
    lines = [f"{spec.id}: {spec.type}" + (f"  # {note}" if note else "")]
    for value in spec.values:
        if spec.type in SINGLE_VALUE_KINDS:
            lines.append(f"  {NEW_VALUE}{value}")
            continue
        first, *more = [a.strip() for a in value.split("|") if a.strip()]
        lines.append(f"  {NEW_VALUE}{first}")
        lines += [f"    {ALTERNATIVE}{alt}" for alt in more]
    return "\n".join(lines)


def box_text(specs: list[CheckSpec], notes: dict[str, str] | None = None) -> str:
    return "\n".join(block(spec, (notes or {}).get(spec.id, "")) for spec in specs)


def parse_box(text: str) -> list[CheckSpec]:
    """The box's blocks back as checks (errors name the box's line and say how a block is written)."""
    specs: list[CheckSpec] = []
    hint = "e.g. 'no_contact: must_not_mention', then '  - 私下转账' and '    / 加我微信' (one alternative per line)"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if raw[:1] not in (" ", "\t") and not line.startswith((NEW_VALUE.strip(), ALTERNATIVE.strip())):
            header = _HEADER.match(line)
            if header is None:
                raise RubricEvalError(f"line {number} of the checks is not 'id: kind'", field="checks",
                                      line=number, hint=hint)
            if header.group("kind") not in CHECK_FIELDS:
                raise RubricEvalError(f"line {number} of the checks: unknown check kind '{header.group('kind')}'",
                                      field="checks", line=number, hint=", ".join(CHECK_FIELDS))
            if any(s.id == header.group("id") for s in specs):
                raise RubricEvalError(f"line {number} of the checks: the id '{header.group('id')}' is used twice",
                                      field="checks", line=number)
            specs.append(CheckSpec(id=header.group("id"), type=header.group("kind")))
            continue
        if not specs:
            raise RubricEvalError(f"line {number} of the checks is a value before any 'id: kind' line",
                                  field="checks", line=number, hint=hint)
        spec = specs[-1]
        if line.startswith(ALTERNATIVE.strip()) and not line.startswith(NEW_VALUE.strip()):
            alternative = line[1:].strip()
            if not spec.values or spec.type in SINGLE_VALUE_KINDS:
                raise RubricEvalError(f"line {number} of the checks: an alternative ('/ ') follows no phrase",
                                      field="checks", line=number, hint=hint)
            if alternative:
                spec.values[-1] = f"{spec.values[-1]}|{alternative}"
        else:
            value = line[1:].strip() if line.startswith(NEW_VALUE.strip()) else line
            if spec.type in SINGLE_VALUE_KINDS and spec.values:
                raise RubricEvalError(f"line {number} of the checks: {spec.type} takes one value",
                                      field="checks", line=number, hint=hint)
            if value:
                spec.values.append(value)
    return specs
