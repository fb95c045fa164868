"""Does a rubric apply to a sample? (its scope matches the sample's kind; then tags / intent / a pattern on the
question — a conversation's user turns; empty means always). `why_not` says which condition failed."""
from __future__ import annotations

import re

from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import Rubric


def applies(rubric: Rubric, sample: Sample) -> bool:
    return why_not(rubric, sample) is None


def why_not(rubric: Rubric, sample: Sample) -> str | None:
    """None when the rubric applies to the sample; otherwise the condition that failed, in words."""
    # Conversation rubrics judge conversations only; single-turn rubrics single-turn samples only.
    if rubric.is_conversation and sample.conversation is None:
        return f"the rubric judges conversations (scope: {rubric.scope}) and this sample is a single turn"
    if not rubric.is_conversation and sample.conversation is not None:
        return "the rubric judges single-turn samples (scope: sample) and this sample is a conversation"
    cond = rubric.applies_to
    if cond.languages and sample.language not in cond.languages:
        return f"applies_to.languages is {cond.languages} and the sample is in '{sample.language}'"
    if not (cond.tags or cond.intents or cond.question_pattern):
        return None
    if cond.tags and set(cond.tags) & set(sample.tags):
        return None
    if cond.intents and sample.intent in cond.intents:
        return None
    # A conversation's "question" is everything its user said.
    asked = sample.conversation.text_of("user") if sample.conversation is not None else sample.question
    if cond.question_pattern and re.search(cond.question_pattern, asked):
        return None
    failed = []
    if cond.tags:
        failed.append(f"applies_to.tags {cond.tags} (the sample's tags: {sample.tags or 'none'})")
    if cond.intents:
        failed.append(f"applies_to.intents {cond.intents} (the sample's intent: {sample.intent or 'none'})")
    if cond.question_pattern:
        failed.append(f"applies_to.question_pattern /{cond.question_pattern}/ (not found in the question)")
    return "no applies_to condition matches: " + "; ".join(failed)
