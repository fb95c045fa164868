"""max_length: long answers lose customers; count characters, not bytes."""
from __future__ import annotations

from rubriceval.checks.base import field_text, worded
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import MaxLength


def max_length(item: MaxLength, sample: Sample) -> Evidence:
    length = len(field_text(sample, item.field))
    passed = length <= item.max_chars
    return Evidence(item=item.id, passed=passed, score=None,
                    **worded(sample, "ev_length", length=length, max_chars=item.max_chars))
