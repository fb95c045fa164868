"""regex: the field must (or must not) match a pattern."""
from __future__ import annotations

import re

from rubriceval.checks.base import field_text, worded
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import RegexCheck


def regex(item: RegexCheck, sample: Sample) -> Evidence:
    flags = 0
    for name in item.flags:
        flags |= getattr(re, name)
    text = field_text(sample, item.field)
    match = re.search(item.pattern, text, flags)
    passed = bool(match) == item.should_match
    if match:
        key = "ev_regex_matched" if item.should_match else "ev_regex_matched_forbidden"
        return Evidence(item=item.id, passed=passed, span=match.group(0), start=match.start(),
                        **worded(sample, key, pattern=item.pattern))
    return Evidence(item=item.id, passed=passed, **worded(sample, "ev_regex_not_found", pattern=item.pattern),
                    missing=[item.pattern] if item.should_match else [])
