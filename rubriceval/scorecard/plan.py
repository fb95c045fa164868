"""The judge calls a scorecard makes on a sample, for the dry run: the questions of every item its deterministic
N/A conditions leave in (an item behind an `applies_when.question` is counted as asked: an upper bound, exact when
those questions answer yes), compiled exactly as the scorer sends them (masked when `redact`)."""
from __future__ import annotations

from rubriceval.data.sample import Sample
from rubriceval.prompt.compile import CompiledPrompt
from rubriceval.safety.redaction import judge_view
from rubriceval.scorecard.applicability import card_applies, why_not_applicable
from rubriceval.scorecard.questions import (applies_question, compile_scorecard_question, item_question,
                                            sees_knowledge)
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import addresses_judge


def planned_questions(card: Scorecard, sample: Sample, redact: bool = False) -> list[CompiledPrompt] | None:
    """None when the scorecard does not score this sample; else the prompts of its judge calls, in asking order."""
    if not card_applies(card, sample):
        return None
    items = [i for i in card.items if why_not_applicable(i.applies_when, sample) is None]
    questions = [applies_question(i) for i in items if i.applies_when is not None and i.applies_when.question]
    questions += [item_question(i) for i in items if i.question]
    if not questions or addresses_judge(sample):
        return []
    judged = judge_view(sample, redact)[0]
    ordered = [q for q in questions if not sees_knowledge(card, q)] + [q for q in questions if sees_knowledge(card, q)]
    return [compile_scorecard_question(card, q, judged) for q in ordered]
