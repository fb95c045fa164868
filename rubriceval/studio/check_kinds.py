"""The deterministic check kinds the rubric form edits, and the field each is written with — the one list of them in
the studio (the checks box, drafting from a document and the form read it from here)."""
from __future__ import annotations

# kind → the fields it is written with; the box edits the first (the rest of a check, if any, is kept as written)
CHECK_FIELDS: dict[str, tuple[str, ...]] = {
    "must_mention": ("phrases",), "must_not_mention": ("phrases",), "regex": ("pattern",),
    "required_link": ("url",), "max_length": ("max_chars",), "steps_in_order": ("steps",),
}
# kinds written with one value (a pattern, a link, a length) rather than a list of phrases or steps
SINGLE_VALUE_KINDS = frozenset({"regex", "required_link", "max_length"})
