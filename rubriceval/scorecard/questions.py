"""A scorecard's yes/no questions (item questions and `applies_when.question`), asked the checklist way: the
sample (or the numbered transcript) first, the question last, answer constrained to yes/no with p(yes) from
logprobs (rubriceval/scoring/checklist.py). The questions are those of one checklist item of a rubric made from the
scorecard, so they share their prompt prefix with every checklist question of the run about the same sample."""
from __future__ import annotations

from functools import lru_cache

from rubriceval.prompt.compile import CompiledPrompt
from rubriceval.rubric.schema import ChecklistItem, ChecklistQuestion, Rubric
from rubriceval.scorecard.schema import Scorecard, ScorecardItem

CHECKLIST_ID = "scorecard"
APPLIES_SUFFIX = "-applies"


def item_question(item: ScorecardItem) -> ChecklistQuestion:
    return ChecklistQuestion(id=item.id, ask=item.question or "")


def applies_question(item: ScorecardItem) -> ChecklistQuestion:
    return ChecklistQuestion(id=item.id + APPLIES_SUFFIX, ask=item.applies_when.question or "")


def _all_questions(card: Scorecard) -> list[ChecklistQuestion]:
    asked = [applies_question(i) for i in card.items if i.applies_when is not None and i.applies_when.question]
    return asked + [item_question(i) for i in card.items if i.question]


@lru_cache(maxsize=64)
def _question_rubric(card_json: str) -> Rubric:
    card = Scorecard.model_validate_json(card_json)
    questions = _all_questions(card)
    checklist = ChecklistItem(id=CHECKLIST_ID, type="checklist", questions=questions or [
        ChecklistQuestion(id="none", ask="-")])
    return Rubric(id=card.id, name=card.name, language=card.language, criterion=card.name,
                  score_descriptions={level: f"level {level}" for level in range(1, 6)}, judge_sees=card.judge_sees,
                  scope="conversation" if card.scope == "conversation" else "sample", judge_mode="checklist",
                  items=[checklist])


def question_rubric(card: Scorecard) -> Rubric:
    """The rubric whose checklist item holds the scorecard's questions (what the checklist machinery needs: language,
    what the judge sees, conversation or single turn)."""
    return _question_rubric(card.model_dump_json())


def checklist_of(card: Scorecard) -> ChecklistItem:
    return question_rubric(card).checklist_items[0]


def compile_scorecard_question(card: Scorecard, question: ChecklistQuestion, sample) -> CompiledPrompt:
    from rubriceval.scoring.checklist import compile_question

    return compile_question(question_rubric(card), checklist_of(card), question, sample)
