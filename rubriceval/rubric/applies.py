"""Does a rubric apply to a sample? (tags / intent / a pattern on the question; empty means always)."""
from __future__ import annotations

import re

from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import Rubric


def applies(rubric: Rubric, sample: Sample) -> bool:
    cond = rubric.applies_to
    if cond.languages and sample.language not in cond.languages:
        return False
    if not (cond.tags or cond.intents or cond.question_pattern):
        return True
    if cond.tags and set(cond.tags) & set(sample.tags):
        return True
    if cond.intents and sample.intent in cond.intents:
        return True
    if cond.question_pattern and re.search(cond.question_pattern, sample.question):
        return True
    return False
