"""Does a rubric apply to a sample? (its scope matches the sample's kind; then tags / intent / a pattern on the
question — a conversation's user turns; empty means always)."""
from __future__ import annotations

import re

from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import Rubric


def applies(rubric: Rubric, sample: Sample) -> bool:
    # Conversation rubrics judge conversations only; single-turn rubrics single-turn samples only.
    if rubric.is_conversation != (sample.conversation is not None):
        return False
    cond = rubric.applies_to
    if cond.languages and sample.language not in cond.languages:
        return False
    if not (cond.tags or cond.intents or cond.question_pattern):
        return True
    if cond.tags and set(cond.tags) & set(sample.tags):
        return True
    if cond.intents and sample.intent in cond.intents:
        return True
    # A conversation's "question" is everything its user said.
    asked = sample.conversation.text_of("user") if sample.conversation is not None else sample.question
    if cond.question_pattern and re.search(cond.question_pattern, asked):
        return True
    return False
