"""A scorecard's judgement items — `question:` items and `applies_when.question` — decided by the one judgement
mechanism of the scoring layer (rubriceval/scoring/judgement/, shared with rubric checklists): asked of a
conversation, a question naming the party it asks about (客服 / 用户) is decomposed over that party's turns, with
evidence drafted from its wording, the policy passages retrieved per claim, and the item's calibration for this
judge (carried, or made from the item's `examples:`); otherwise it is asked whole, the checklist way
(questions.py), and read on a carried `p_yes` calibration or 0.5. An item the judge cannot tell is `undecided`
(never counted as clear); `decided_by` says how every other one was decided."""
from __future__ import annotations

from typing import Any, Literal

from rubriceval.core.verdict import Evidence
from rubriceval.data.knowledge import Knowledge
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.predicate import DEFAULT_CUTOFF
from rubriceval.rubric.schema import ChecklistQuestion
from rubriceval.scorecard.questions import (
    applies_question,
    checklist_of,
    item_question,
    question_rubric,
    sees_knowledge,
    with_knowledge,
)
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.scorecard.verdict import CardItemOutcome
from rubriceval.scoring.judgement.decide import (
    Judgement,
    JudgementSpec,
    decide,
    decomposes,
    item_calibration,
    judgement_from_score,
)
from rubriceval.scoring.judgement.turns import TurnAsker, judge_name


def item_spec(card: Scorecard, item: ScorecardItem) -> JudgementSpec:
    return JudgementSpec(question=item.question or "", lang=card.language, examples=item.examples,
                         calibration=item.calibration, sees_knowledge=item.judge_sees_knowledge, fatal=item.fatal)


def applies_spec(card: Scorecard, item: ScorecardItem) -> JudgementSpec:
    when = item.applies_when
    assert when is not None and when.question
    return JudgementSpec(question=when.question, lang=card.language, examples=when.examples,
                         calibration=when.calibration, sees_knowledge=item.judge_sees_knowledge)


async def _ask_whole(card: Scorecard, question: ChecklistQuestion, sample: Sample, judge: Any,
                     knowledge: Knowledge | None):
    from rubriceval.scoring.checklist import ask_questions, checklist_slots

    sees = sees_knowledge(card, question)
    async with checklist_slots(judge):
        # whole: judge_question has decided not to decompose (ask_questions would decide again, per turn, on a
        # small judge — the benchmark's whole-question method measured per-turn answers that way)
        answers, spent = await ask_questions(question_rubric(card), checklist_of(card, sees), [question],
                                             with_knowledge(sample, knowledge) if sees else sample, judge,
                                             decompose=False)
    return answers[0], spent


async def judge_question(card: Scorecard, spec: JudgementSpec, question: ChecklistQuestion, sample: Sample,
                         judge: Any, knowledge: Knowledge | None, asker: TurnAsker | None) -> Judgement:
    """One judgement question of the card about this sample (masked as the judge may see it)."""
    from rubriceval.scoring.checklist import checklist_slots

    role = decomposes(spec, sample.conversation, judge) if asker is not None else None
    if role is not None and sample.conversation is not None and asker is not None:
        passages = with_knowledge(sample, knowledge).contexts if spec.sees_knowledge else None
        async with checklist_slots(judge):
            return await decide(spec, sample.conversation, role, judge, asker, passages)
    answer, spent = await _ask_whole(card, question, sample, judge, knowledge)
    if answer.p_yes is None:
        return Judgement(status="unscored", reason=answer.reason or "no answer", usage=spent)
    calibration = item_calibration(spec, judge_name(judge))
    if calibration is not None and calibration.score != "p_yes":
        calibration = None                     # fitted on per-turn scores: not this whole question's p(yes)
    return judgement_from_score(answer.p_yes, calibration, usage=spent)


def _passed(item: ScorecardItem, found: Judgement) -> bool | None:
    """The evidence's mark: a bonus passes when hit, a deduction when not; None while undecided."""
    if found.answer is None:
        return None
    hit = found.answer == item.hit_answer
    return hit if item.is_bonus else not hit


def _evidence(item: ScorecardItem, question: str, found: Judgement) -> list[Evidence]:
    """The judge's answer as evidence: the decisive turn (highest p(yes)) and what the rules found in it."""
    if found.score is None:          # decided by rule (or no answer): the rule's reason, and the turn it names
        ruled = next((t.turn for t in found.turns if t.by_rule), None)
        return [Evidence(item=item.id, passed=_passed(item, found), turn=ruled, detail=found.reason)]
    said = "yes" if found.answer else "no" if found.answer is not None else "undecided"
    turn = found.decisive_turn
    spans = f" [{', '.join(turn.evidence[:3])}]" if turn is not None and turn.evidence else ""
    where = f"turn {turn.turn}: " if turn is not None else ""
    how = f"{found.decided_by}" if found.decided_by else "undecided"
    checker = " · turn checker" if found.calibration is not None and found.calibration.score == "checker" else ""
    cut = (f", cut-off {found.calibration.cutoff:.2f} ({found.calibration.method}{checker})"
           if found.calibration is not None else "")
    return [Evidence(item=item.id, passed=_passed(item, found),
                     turn=turn.turn if turn is not None else None, question=question, p_yes=found.score,
                     detail=f"{where}{question} → {said} (p(yes)={found.score:.2f}{cut}; {how}){spans}",
                     message=msg("sc_question_answer", question=question,
                                 said=msg(f"answer_{said}") if found.answer is not None else said,
                                 p_yes=f"{found.score:.2f}"))]


def question_outcome(item: ScorecardItem, found: Judgement) -> CardItemOutcome:
    """A question item's outcome from its judgement."""
    if found.status == "unscored":
        return CardItemOutcome(item=item.id, status="unscored", reason=found.reason or "no answer")
    evidence = _evidence(item, item.question or "", found)
    if found.status == "undecided" or found.answer is None:
        return CardItemOutcome(item=item.id, status="undecided", p_yes=found.score, evidence=evidence,
                               reason=f"the judge cannot tell: {found.reason}", score_kind=score_kind(found))
    hit = found.answer == item.hit_answer
    # what the judge's decision read p(yes) against (issue 44's confidence); a decision by drafted evidence has none
    judged = found.score is not None and found.decided_by in ("judge", "judge_calibrated", "checker")
    cutoff = (found.calibration.cutoff if found.calibration is not None else DEFAULT_CUTOFF) if judged else None
    return CardItemOutcome(item=item.id, status="hit" if hit else "clear", occurrences=int(hit), p_yes=found.score,
                           evidence=evidence, decided_by=found.decided_by, cutoff=cutoff,
                           score_kind=score_kind(found))


def score_kind(found: Judgement) -> Literal["p_yes", "turn_max", "checker"] | None:
    """What the judgement's score is (CardItemOutcome.score_kind)."""
    if found.score is None:
        return None
    if found.calibration is not None and found.calibration.score == "checker":
        return "checker"
    return "turn_max" if found.turns else "p_yes"


def applies_outcome(item: ScorecardItem, found: Judgement) -> CardItemOutcome | None:
    """The item's outcome when its applies_when question settles it (unscored, or N/A on "no"); None when the item
    applies (yes) or may apply (undecided: the item is still asked, and is undecided unless it is clear)."""
    question = item.applies_when.question if item.applies_when else ""
    if found.status == "unscored":
        return CardItemOutcome(item=item.id, status="unscored", reason=f"applies_when question: {found.reason}")
    if found.status == "decided" and found.answer is False:
        score = f"p(yes)={found.score:.2f}" if found.score is not None else found.reason
        return CardItemOutcome(item=item.id, status="not_applicable", p_yes=found.score, decided_by=found.decided_by,
                               reason=f"applies_when question answered no ({score}): {question}")
    return None


def after_undecided_applies(outcome: CardItemOutcome, applies: Judgement) -> CardItemOutcome:
    """An item whose applies_when question was undecided: a hit (or undecided) waits for a reviewer; clear stays."""
    if applies.status != "undecided" or outcome.status not in ("hit", "undecided"):
        return outcome
    return outcome.model_copy(update={"status": "undecided", "occurrences": 0, "decided_by": None,
                                      "reason": f"whether it applies is undecided: {applies.reason}"})


__all__ = ["after_undecided_applies", "applies_outcome", "applies_question", "applies_spec", "item_question",
           "item_spec", "judge_question", "question_outcome"]
