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
from rubriceval.data.sample import Sample
from rubriceval.safety.manipulation import scan_fields
from rubriceval.safety.redaction import judge_view
from rubriceval.scorecard.applicability import why_not_applicable
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.judged import (
    after_undecided_applies,
    applies_outcome,
    applies_spec,
    item_spec,
    judge_question,
    question_outcome,
)
from rubriceval.scorecard.questions import applies_question, asks_judge, item_question
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict
from rubriceval.scoring.judgement.decide import Judgement
from rubriceval.scoring.judgement.turns import TurnAsker
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
    # One asker of per-turn judgement questions for the sample: every decomposed question about it shares the
    # transcript prefix on the judge server (rubriceval/scoring/judgement/turns.py).
    turn_asker = (TurnAsker(judge, judged.conversation, card.language)
                  if judge is not None and judged.conversation is not None else None)
    applies: dict[str, Judgement] = {}
    for item in conditional:
        found = await judge_question(card, applies_spec(card, item), applies_question(item), judged, judge,
                                     knowledge, turn_asker)
        usage = usage + found.usage
        applies[item.id] = found
        settled = applies_outcome(item, found)
        if settled is not None:
            outcomes[item.id] = settled
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
    for item in [i for i in pending if i.kind == "question"]:
        found = await judge_question(card, item_spec(card, item), item_question(item), judged, judge, knowledge,
                                     turn_asker)
        usage = usage + found.usage
        outcome = question_outcome(item, found)
        outcomes[item.id] = after_undecided_applies(outcome, applies[item.id]) if item.id in applies else outcome
    ordered = [outcomes[i.id] for i in card.items]
    return ScorecardVerdict(run_id=run_id, sample_id=sample.id, scorecard=card.id, version=card.version_tag,
                            outcomes=ordered, totals=scorecard_total(card, ordered), usage=usage)
