"""A scorecard's yes/no questions (item questions and `applies_when.question`), asked the checklist way: the
sample (or the numbered transcript) first, the question last, answer constrained to yes/no with p(yes) from
logprobs (rubriceval/scoring/checklist.py). The questions are those of one checklist item of a rubric made from the
scorecard, so they share their prompt prefix with every checklist question of the run about the same sample; a
question with `judge_sees_knowledge` (and that item's `applies_when.question`) is asked with the knowledge base shown
after the transcript (the second item): the passages the bot was given, then the card's knowledge file — numbered
after them, as context conditions search them (rubriceval/checks/context_condition.py)."""
from __future__ import annotations

from functools import lru_cache

from rubriceval.data.knowledge import Knowledge
from rubriceval.data.sample import Sample
from rubriceval.prompt.compile import CompiledPrompt
from rubriceval.rubric.schema import ChecklistItem, ChecklistQuestion, Item, Rubric
from rubriceval.scorecard.schema import Scorecard, ScorecardItem

CHECKLIST_ID = "scorecard"
KNOWLEDGE_ID = "scorecard_kb"          # the questions asked with the knowledge base shown
APPLIES_SUFFIX = "-applies"
# Template source written here (trusted); the passages are values, fenced by the checklist template.
KNOWLEDGE = {
    "zh": "客服回答时能看到的知识库资料：\n{% for c in sample.contexts %}[{{ loop.index }}] {{ c }}\n{% else %}（无）{% endfor %}",
    "en": "The knowledge base passages the agent was given:\n{% for c in sample.contexts %}[{{ loop.index }}] {{ c }}\n"
          "{% else %}(none){% endfor %}",
}


def has_turn_questions(item: ScorecardItem) -> bool:
    """A check item whose predicates ask the judge about single turns (`ask:`, docs/predicates.md): run through
    rubriceval/scoring/turn_questions.py, as a rubric's checks are."""
    from rubriceval.scoring.turn_questions import item_questions

    return item.check is not None and bool(item_questions(item.check_item))


def asks_judge(item: ScorecardItem) -> bool:
    """The item may call the judge: a question, an `applies_when.question`, or a check with per-turn questions."""
    return bool(item.question or (item.applies_when and item.applies_when.question) or has_turn_questions(item))


def item_question(item: ScorecardItem) -> ChecklistQuestion:
    return ChecklistQuestion(id=item.id, ask=item.question or "")


def applies_question(item: ScorecardItem) -> ChecklistQuestion:
    return ChecklistQuestion(id=item.id + APPLIES_SUFFIX,
                             ask=(item.applies_when.question if item.applies_when else None) or "")


def _all_questions(card: Scorecard) -> list[ChecklistQuestion]:
    asked = [applies_question(i) for i in card.items if i.applies_when is not None and i.applies_when.question]
    return asked + [item_question(i) for i in card.items if i.question]


def _knowing(card: Scorecard) -> set[str]:
    """The questions asked with the knowledge base shown: a judge_sees_knowledge item's, and its N/A question's."""
    return {qid for i in card.items if i.judge_sees_knowledge for qid in (i.id, i.id + APPLIES_SUFFIX)}


@lru_cache(maxsize=64)
def _question_rubric(card_json: str) -> Rubric:
    card = Scorecard.model_validate_json(card_json)
    knowing = _knowing(card)
    questions = _all_questions(card)
    plain = [q for q in questions if q.id not in knowing] or [ChecklistQuestion(id="none", ask="-")]
    with_kb = [q for q in questions if q.id in knowing] or [ChecklistQuestion(id="none", ask="-")]
    items: list[Item] = [ChecklistItem(id=CHECKLIST_ID, type="checklist", questions=plain),
                         ChecklistItem(id=KNOWLEDGE_ID, type="checklist", questions=with_kb, criterion=KNOWLEDGE[card.language])]
    return Rubric(id=card.id, name=card.name, language=card.language, criterion=card.name,
                  score_descriptions={level: f"level {level}" for level in range(1, 6)}, judge_sees=card.judge_sees,
                  scope="conversation" if card.scope == "conversation" else "sample", judge_mode="checklist",
                  items=items)


def question_rubric(card: Scorecard) -> Rubric:
    """The rubric whose checklist item holds the scorecard's questions (what the checklist machinery needs: language,
    what the judge sees, conversation or single turn)."""
    return _question_rubric(card.model_dump_json())


def checklist_of(card: Scorecard, knowledge: bool = False) -> ChecklistItem:
    return question_rubric(card).checklist_items[1 if knowledge else 0]


def sees_knowledge(card: Scorecard, question: ChecklistQuestion) -> bool:
    return question.id in _knowing(card)


def with_knowledge(sample: Sample, knowledge: Knowledge | None = None) -> Sample:
    """A sample as the knowledge questions read it: `contexts` = every turn's contexts, each once, in order (a
    conversation's; a single-turn sample keeps its own), then the knowledge file's passages not among them. The
    passages are values the template quotes inside the fenced background, never template source."""
    if sample.conversation is None and knowledge is None:
        return sample
    seen: dict[str, None] = dict.fromkeys(sample.contexts) if sample.conversation is None else {}
    for turn in sample.conversation.turns if sample.conversation is not None else []:
        for passage in turn.contexts:
            seen.setdefault(passage, None)
    for passage in knowledge.passages if knowledge is not None else []:
        seen.setdefault(passage, None)
    return sample.model_copy(update={"contexts": list(seen)})


def compile_scorecard_question(card: Scorecard, question: ChecklistQuestion, sample: Sample,
                               knowledge: Knowledge | None = None) -> CompiledPrompt:
    """`knowledge`: the card's knowledge file (card.knowledge_base()), shown to the knowledge questions."""
    from rubriceval.prompt.checklist import compile_question

    sees = sees_knowledge(card, question)
    return compile_question(question_rubric(card), checklist_of(card, sees), question,
                            with_knowledge(sample, knowledge) if sees else sample)
