"""The deterministic check kinds the rubric form edits, and the field each is written with — the one list of them in
the studio (the checks box, drafting from a document and the form read it from here), derived from the check-kind
registry (rubriceval/rubric/check_kinds.py): every single-turn kind, with the first of its form fields."""
from __future__ import annotations

import typing

from rubriceval.rubric.items import CHECK_KINDS

# kind → the fields it is written with; the box edits the first (the rest of a check, if any, is kept as written)
CHECK_FIELDS: dict[str, tuple[str, ...]] = {
    kind.name: kind.form_fields[:1] for kind in CHECK_KINDS.values() if kind.scope == "answer" and kind.form_fields}


def _one_value(kind: str) -> bool:
    field = CHECK_KINDS[kind].model.model_fields[CHECK_FIELDS[kind][0]]
    return typing.get_origin(field.annotation) is not list


# kinds written with one value (a pattern, a link, a length) rather than a list of phrases or steps
SINGLE_VALUE_KINDS = frozenset(kind for kind in CHECK_FIELDS if _one_value(kind))
