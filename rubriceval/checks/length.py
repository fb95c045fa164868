"""max_length: long answers lose customers; count characters, not bytes."""
from __future__ import annotations

from rubriceval.checks.base import field_text
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import MaxLength
from rubriceval.verdict import Evidence


def max_length(item: MaxLength, sample: Sample) -> Evidence:
    length = len(field_text(sample, item.field))
    passed = length <= item.max_chars
    return Evidence(item=item.id, passed=passed, score=None,
                    detail=f"{length} characters (max {item.max_chars})")
