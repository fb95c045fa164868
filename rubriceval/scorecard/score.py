"""Score one sample with one scorecard: every item's outcome, then the totals (arithmetic.scorecard_total).

Order: the deterministic N/A conditions; the `applies_when` questions of the items still in; then each applicable
item's predicate — checks run on the sample (per-turn checks turn by turn, counting failing turns; `ask:`
predicates asked about single turns as a rubric's checks ask them), rubric items read the run's verdict of that
rubric for this sample, question items are asked the checklist way (questions.py). Every judge call goes through
`ask` (rubriceval/judge/ask.py): cached, counted, re-asked once when unreadable. The judge reads the sample masked
when `judge.redact` is on; text that addresses the judge leaves the items that ask the judge unscored (an answer
cannot talk its way to a full score)."""
from __future__ import annotations

from typing import Any

from rubriceval.checks import CHECKS, OCCURRENCES
from rubriceval.checks.context_condition import conditioned
from rubriceval.checks.turn_answers import Unanswered
from rubriceval.checks.turns import conversation_of, turn_sample
from rubriceval.core.verdict import Evidence, Usage, Verdict
from rubriceval.data.knowledge import Knowledge
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.safety.manipulation import scan_fields
from rubriceval.safety.redaction import judge_view
from rubriceval.scorecard.applicability import why_not_applicable
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.questions import (
    applies_question,
    asks_judge,
    checklist_of,
    item_question,
    question_rubric,
    sees_knowledge,
    with_knowledge,
)
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict
from rubriceval.scoring.turn_questions import QuestionAsker, answering, run_check_asking


async def failing_turns(item: ScorecardItem, sample: Sample, asker: QuestionAsker) -> list[tuple[int, Evidence]]:
    """A per-turn check run on every turn of its role (as checks/per_turn.py does, asking the judge about each turn
    its predicate needs): the failing turns' evidence."""
    check_item = item.check_item
    if check_item.type in OCCURRENCES:       # a kind that lists its own occurrences (rubric/check_kinds.py)
        return [(ev.turn or 0, ev) for ev in OCCURRENCES[check_item.type](check_item, sample)]
    conversation = conversation_of(sample)
    check = conditioned(CHECKS[check_item.type])
    asks_about_turn = getattr(check_item, "match", None) is not None      # the turn is passed on, for a question
    found = []
    for number, _ in conversation.numbered(check_item.turns):
        one = turn_sample(conversation, number)
        def run(one: Sample = one, number: int = number) -> Evidence:
            return check(check_item, one, at=(conversation, number)) if asks_about_turn else check(check_item, one)

        evidence = await answering(run, asker, f"scorecard item '{item.id}'")
        if evidence.passed is False:
            found.append((number, evidence.model_copy(update={"turn": number})))
    return found


async def check_outcome(item: ScorecardItem, sample: Sample, asker: QuestionAsker) -> CardItemOutcome:
    """A check item, its per-turn questions (`ask:` predicates) asked through the rubrics' path
    (scoring/turn_questions.py: once per turn and question for every item of the sample, cached, counted)."""
    try:
        evidence = await run_check_asking(item.check_item, sample, asker)
        if item.per == "occurrence" and evidence.passed is False and not item.is_bonus:
            turns = await failing_turns(item, sample, asker)
            return CardItemOutcome(item=item.id, status="hit", occurrences=max(1, len(turns)),
                                   evidence=[ev for _, ev in turns] or [evidence])
    except Unanswered as why:
        return CardItemOutcome(item=item.id, status="unscored", reason=f"check question on turn {why.turn} "
                               f"({why.question!r}): {why.reason}",
                               evidence=[Evidence(item=item.id, passed=None, turn=why.turn, question=why.question,
                                              detail=f"turn {why.turn}: {why.reason}")])
    if evidence.passed is None:
        return CardItemOutcome(item=item.id, status="unscored", evidence=[evidence],
                               reason=evidence.detail or "the check reached no decision")
    if item.is_bonus:
        return CardItemOutcome(item=item.id, status="hit" if evidence.passed else "clear",
                               occurrences=int(evidence.passed), evidence=[evidence])
    if evidence.passed:
        return CardItemOutcome(item=item.id, status="clear", evidence=[evidence])
    return CardItemOutcome(item=item.id, status="hit", occurrences=1, evidence=[evidence])


def rubric_outcome(item: ScorecardItem, verdicts: dict[str, Verdict]) -> CardItemOutcome:
    ref = item.rubric
    if ref is None:
        raise ValueError(f"scorecard item '{item.id}' names no rubric")
    verdict = verdicts.get(ref.id)
    if verdict is None or verdict.unscored_kind == "not_applicable":
        return CardItemOutcome(item=item.id, status="not_applicable", reason=f"rubric '{ref.id}' does not apply")
    if verdict.score is None:            # = not verdict.scored
        return CardItemOutcome(item=item.id, status="unscored", reason=f"rubric '{ref.id}': {verdict.unscored_reason}")
    hit = verdict.score < ref.min_score
    if item.is_bonus:
        hit = not hit
    evidence = Evidence(item=item.id, score=verdict.score, passed=not hit if not item.is_bonus else hit,
                        detail=f"{ref.id} {verdict.score:g}/5 (min {ref.min_score}): {verdict.feedback[:400]}")
    return CardItemOutcome(item=item.id, status="hit" if hit else "clear", occurrences=int(hit), evidence=[evidence])


def addresses_judge(sample: Sample) -> list[Any]:
    """Judge-directed text in what the bot said (its answer, or every assistant turn)."""
    if sample.conversation is not None:
        said = "\n".join(t.content for _, t in sample.conversation.numbered("assistant"))
    else:
        said = sample.answer
    return scan_fields({"answer": said or ""})


async def _ask(card: Scorecard, questions: list, sample: Sample, judge, knowledge: Knowledge | None = None
               ) -> tuple[dict[str, Any], Usage]:
    """The questions, the plain ones first, then those asked with the knowledge base (and the card's knowledge
    file) shown."""
    from rubriceval.scoring.checklist import ask_questions, checklist_slots

    found, usage = {}, Usage()
    for sees in (False, True):
        mine = [q for q in questions if sees_knowledge(card, q) == sees]
        if not mine:
            continue
        async with checklist_slots(judge):
            answers, spent = await ask_questions(question_rubric(card), checklist_of(card, sees), mine,
                                                 with_knowledge(sample, knowledge) if sees else sample, judge)
        found.update({a.question_id: a for a in answers})
        usage = usage + spent
    return found, usage


def _question_evidence(item: ScorecardItem, answer: Any) -> Evidence:
    said = "yes" if answer.label else "no"
    return Evidence(item=item.id, passed=(answer.label == item.hit_answer) if item.is_bonus else
                    answer.label != item.hit_answer,
                    detail=f"{item.question} → {said} (p(yes)={answer.p_yes:.2f})",
                    message=msg("sc_question_answer", question=item.question, said=msg(f"answer_{said}"),
                                p_yes=f"{answer.p_yes:.2f}"))


async def score_scorecard(card: Scorecard, sample: Sample, judge: Any, rubric_verdicts: dict[str, Verdict] | None
                          = None, *, run_id: str = "") -> ScorecardVerdict:
    """The scorecard's verdict on this sample. rubric_verdicts: this sample's verdicts of the run's rubrics, by id
    (what `rubric:` items read)."""
    rubric_verdicts = rubric_verdicts or {}
    knowledge = card.knowledge_base()
    outcomes: dict[str, CardItemOutcome] = {}
    pending: list[ScorecardItem] = []
    for item in card.items:
        reason = why_not_applicable(item.applies_when, sample, knowledge is not None)
        if reason:
            outcomes[item.id] = CardItemOutcome(item=item.id, status="not_applicable", reason=reason)
        else:
            pending.append(item)
    judging = [i for i in pending if asks_judge(i)]
    usage = Usage()
    findings = addresses_judge(sample) if judging else []
    judged = judge_view(sample, judge is not None and judge.config.redact)[0] if judging else sample
    if judging and (judge is None or findings):
        why = ("no judge is configured" if judge is None else
               f"the bot's text addresses the judge ({findings[0].kind}: “{findings[0].span}”); the judge was not "
               "asked")
        for item in judging:
            outcomes[item.id] = CardItemOutcome(item=item.id, status="unscored", reason=why)
        pending = [i for i in pending if i not in judging]
    conditional = [i for i in pending if i.applies_when and i.applies_when.question]
    answers, spent = await _ask(card, [applies_question(i) for i in conditional], judged, judge, knowledge)
    usage = usage + spent
    for item in conditional:
        answer = answers[applies_question(item).id]
        if answer.p_yes is None:
            outcomes[item.id] = CardItemOutcome(item=item.id, status="unscored",
                                                reason=f"applies_when question: {answer.reason}")
        elif not answer.label:
            outcomes[item.id] = CardItemOutcome(item=item.id, status="not_applicable", p_yes=answer.p_yes,
                                                reason=f"applies_when question answered no "
                                                   f"(p(yes)={answer.p_yes:.2f}): "
                                                   f"{item.applies_when.question if item.applies_when else ''}")
    pending = [i for i in pending if i.id not in outcomes]
    # One asker for the sample: a per-turn answer serves every check item asking it (checks read `sample`, the
    # judge reads `judged`: masked when redaction is on). It holds the knowledge file as a rubric's does: shown to
    # per-turn questions, searched by unless_context / only_if_context.
    asker = QuestionAsker(judge, judged.conversation, card.language, knowledge)
    for item in pending:
        if item.kind == "check":
            outcomes[item.id] = await check_outcome(item, sample, asker)
        elif item.kind == "rubric":
            outcomes[item.id] = rubric_outcome(item, rubric_verdicts)
    usage = usage + asker.usage
    asked = [i for i in pending if i.kind == "question"]
    answers, spent = await _ask(card, [item_question(i) for i in asked], judged, judge, knowledge)
    usage = usage + spent
    for item in asked:
        answer = answers[item.id]
        if answer.p_yes is None:
            outcomes[item.id] = CardItemOutcome(item=item.id, status="unscored", reason=answer.reason or "no answer")
            continue
        hit = answer.label == item.hit_answer
        outcomes[item.id] = CardItemOutcome(item=item.id, status="hit" if hit else "clear", occurrences=int(hit),
                                            p_yes=answer.p_yes, evidence=[_question_evidence(item, answer)])
    ordered = [outcomes[i.id] for i in card.items]
    return ScorecardVerdict(run_id=run_id, sample_id=sample.id, scorecard=card.id, version=card.version_tag,
                            outcomes=ordered, totals=scorecard_total(card, ordered), usage=usage)
