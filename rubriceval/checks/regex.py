"""regex: the field must (or must not) match a pattern."""
from __future__ import annotations

import re

from rubriceval.checks.base import field_text
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import RegexCheck
from rubriceval.verdict import Evidence


def regex(item: RegexCheck, sample: Sample) -> Evidence:
    flags = 0
    for name in item.flags:
        flags |= getattr(re, name)
    text = field_text(sample, item.field)
    match = re.search(item.pattern, text, flags)
    passed = bool(match) == item.should_match
    if match:
        detail = f"pattern /{item.pattern}/ matched" + ("" if item.should_match else " (it must not)")
        return Evidence(item=item.id, passed=passed, span=match.group(0), start=match.start(), detail=detail)
    return Evidence(item=item.id, passed=passed, detail=f"pattern /{item.pattern}/ not found",
                    missing=[item.pattern] if item.should_match else [])
