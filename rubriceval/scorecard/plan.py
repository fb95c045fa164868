"""The judge calls a scorecard makes on a sample, for the dry run and the Batch API's rounds: the questions of every
item its deterministic N/A conditions leave in (an item behind an `applies_when.question` is counted as asked: an
upper bound, exact when those questions answer yes), and the per-turn questions of its checks' `ask:` predicates
(every one that may be asked, as for a rubric's checks), compiled exactly as the scorer sends them (masked when
`redact`, the card's knowledge file shown where the scorer shows it), in the scorer's order."""
from __future__ import annotations

from rubriceval.data.sample import Sample
from rubriceval.prompt.compile import CompiledPrompt
from rubriceval.safety.redaction import judge_view
from rubriceval.scorecard.applicability import card_applies, why_not_applicable
from rubriceval.scorecard.questions import (
    applies_question,
    compile_scorecard_question,
    has_turn_questions,
    item_question,
    sees_knowledge,
)
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import addresses_judge
from rubriceval.scoring.turn_questions import plan_turn_questions


def planned_questions(card: Scorecard, sample: Sample, redact: bool = False) -> list[CompiledPrompt] | None:
    """None when the scorecard does not score this sample; else the prompts of its judge calls, in asking order."""
    if not card_applies(card, sample):
        return None
    knowledge = card.knowledge_base()
    items = [i for i in card.items if why_not_applicable(i.applies_when, sample, knowledge is not None) is None]
    conditions = [applies_question(i) for i in items if i.applies_when is not None and i.applies_when.question]
    questions = [item_question(i) for i in items if i.question]
    checks = [i.check_item for i in items if has_turn_questions(i)]
    if not (conditions or questions or checks) or addresses_judge(sample):
        return []
    judged = judge_view(sample, redact)[0]

    def compiled(asked: list) -> list[CompiledPrompt]:
        ordered = [q for q in asked if not sees_knowledge(card, q)] + [q for q in asked if sees_knowledge(card, q)]
        return [compile_scorecard_question(card, q, judged, knowledge) for q in ordered]
    return (compiled(conditions) + plan_turn_questions(checks, judged.conversation, card.language, knowledge)
            + compiled(questions))
