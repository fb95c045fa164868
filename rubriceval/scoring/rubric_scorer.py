"""Score one sample with one rubric: deterministic checks + judge items → one Verdict."""
from __future__ import annotations

from typing import Any, cast

from rubriceval.core.item_scores import ItemScores
from rubriceval.core.verdict import Evidence, UnscoredKind, Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.judge.ask import JudgeRequest, TemplateReask, ask
from rubriceval.judge.client import JudgeClient
from rubriceval.prompt.compile import compile_item, reask_template
from rubriceval.rubric.schema import ChecklistItem, JudgeItem, Rubric
from rubriceval.safety.manipulation_policy import (
    MASKED_KINDS,
    apply_manipulation_policy,
    capped_without_judge,
    scan_sample,
)
from rubriceval.safety.redaction import judge_view, record_redactions
from rubriceval.scoring.combine import ItemScore, combine, predicate_level
from rubriceval.scoring.item_outcome import JudgeItemOutcome, read_verdict
from rubriceval.scoring.score_probs import DETAILS_KEY as SCORE_PROBS
from rubriceval.scoring.score_probs import TIE_KEY, holistic_options, tie_details
from rubriceval.scoring.turn_questions import idle_question_checks, rubric_knowledge, run_checks_asking


def missing_fields(rubric: Rubric, sample: Sample) -> list[str]:
    # A conversation rubric's judge reads the transcript; of the sample fields only the expected outcome can lack.
    fields = ("ground_truth",) if rubric.is_conversation else ("question", "answer", "ground_truth")
    needed = [f for f in rubric.judge_sees if f in fields] if rubric.judge_items else []
    return [f for f in needed if not (getattr(sample, f) or "").strip()]


async def judge_item(rubric: Rubric, item: JudgeItem | ChecklistItem, sample: Sample, judge: JudgeClient
                     ) -> JudgeItemOutcome:
    if isinstance(item, ChecklistItem):          # yes/no questions + level rule (rubriceval/scoring/checklist.py)
        from rubriceval.scoring.checklist import checklist_outcome

        return await checklist_outcome(rubric, item, sample, judge)
    if rubric.is_conversation:
        from rubriceval.scoring.conversation_scorer import judge_conversation_item

        return await judge_conversation_item(rubric, item, sample, judge)
    structured = judge.config.structured == "json_schema"
    prompt = compile_item(rubric, item, sample, structured=structured,
                          feedback_max_chars=judge.config.feedback_max_chars)
    request = JudgeRequest(messages=prompt.messages, json_schema=prompt.json_schema, cache_tag=prompt.cache_tag,
                           options=holistic_options(rubric, judge.config))
    reask = TemplateReask(template=reask_template(rubric.language), variables={"structured": structured})
    asked = await ask(judge, request, read_verdict, reask=reask, max_input_tokens=judge.config.max_input_tokens)
    return JudgeItemOutcome.from_asked(item, asked)


async def score_rubric(rubric: Rubric, sample: Sample, judge: JudgeClient | None) -> Verdict:
    """The rubric's verdict with its manipulation policy applied (an answer addressing the judge is capped before
    the judge is asked, or flagged) and, with `judge.redact`, personal data masked in what the judge reads."""
    policy = rubric.manipulation
    findings = scan_sample(sample, policy)
    screen_usage = Usage()
    to_cap = [f for f in findings if f.kind not in MASKED_KINDS]
    if not to_cap and policy.action != "off" and (policy.screens or policy.suffix_screen):
        # model screens (scoring/manipulation_screens.py): the opt-in ones when nothing is to be capped yet
        from rubriceval.scoring.manipulation_screens import screen_sample

        found, screen_usage = await screen_sample(sample, policy, judge, asked=not findings)
        findings += found
        to_cap = [f for f in findings if f.kind not in MASKED_KINDS]
    masked = [f for f in findings if f.kind in MASKED_KINDS]
    if to_cap and policy.skips_judge:
        # No judge is asked: a check's per-turn question stays unanswered (its evidence says so).
        evidence = (await run_checks_asking(rubric.check_items, sample, sample, None, rubric.language,
                                            rubric_knowledge(rubric)))[0]
        capped = capped_without_judge(dict(sample_id=sample.id, scorer=rubric.id, scorer_version=rubric.version_tag,
                                           kind="rubric"), findings, policy, evidence, threshold=rubric.threshold)
        return capped.model_copy(update={"usage": capped.usage + screen_usage})
    if masked and policy.action != "off" and not rubric.is_conversation:
        # Self-praise and odd-token suffixes: the checks and the judge read the answer without them; the sample is
        # flagged when they would have raised the score (safety/masking.py)
        from rubriceval.scoring.manipulation_screens import score_masked

        async def scored(one: Sample) -> Verdict:
            judged, redaction = judge_view(one, judge is not None and judge.config.redact)
            return record_redactions(await _score(rubric, one, judged, judge), redaction)

        verdict = await score_masked(sample, masked, policy, scored, threshold=rubric.threshold)
        verdict = verdict.model_copy(update={"usage": verdict.usage + screen_usage})
        return apply_manipulation_policy(verdict, to_cap, policy, threshold=rubric.threshold)
    judged, redaction = judge_view(sample, judge is not None and judge.config.redact)
    verdict = await _score(rubric, sample, judged, judge)
    verdict = verdict.model_copy(update={"usage": verdict.usage + screen_usage})
    return record_redactions(apply_manipulation_policy(verdict, findings, policy, threshold=rubric.threshold), redaction)


async def _score(rubric: Rubric, sample: Sample, judged: Sample, judge: JudgeClient | None) -> Verdict:
    """Checks read `sample`; the judge reads `judged` (the same sample, masked when redaction is on)."""
    base: dict[str, Any] = dict(sample_id=sample.id, scorer=rubric.id, scorer_version=rubric.version_tag,
                                kind="rubric")
    # Checks whose predicates ask the judge about single turns (rubriceval/scoring/turn_questions.py).
    idle = idle_question_checks(rubric)
    evidence, check_usage, answered, unanswered = await run_checks_asking(
        rubric.check_items, sample, judged, judge, rubric.language, rubric_knowledge(rubric), idle=idle)
    asked = {"turn_questions": [a.model_dump(exclude_none=True) for a in answered]} if answered else {}
    if unanswered is not None:
        # the kind an Asked gave (UnscoredKind), kept as text by TurnAnswer; Verdict validates it again
        return Verdict(**base, unscored_kind=cast(UnscoredKind, unanswered.kind), evidence=evidence, usage=check_usage, details=asked,
                       unscored_reason=f"check question on turn {unanswered.turn} ({unanswered.question!r}): "
                                       f"{unanswered.reason}")
    # A check that cannot decide (response_time without timestamps) is neither a pass nor a silent fail.
    undecided = next((ev for ev in evidence if ev.passed is None and ev.item not in idle), None)
    if undecided is not None:
        return Verdict(**base, unscored_kind="missing_field", evidence=evidence, usage=check_usage, details=asked,
                       unscored_reason=f"check '{undecided.item}' cannot decide: {undecided.detail}")
    missing = missing_fields(rubric, sample)
    if missing:
        return Verdict(
            **base, unscored_kind="missing_field", evidence=evidence,
            unscored_reason=f"sample has no {', '.join(missing)}, which the rubric's judge needs")
    outcomes: list[JudgeItemOutcome] = []
    for item in rubric.judge_items:
        if judge is None:
            raise ValueError(f"rubric '{rubric.id}' has judge items but no judge is configured")
        outcomes.append(await judge_item(rubric, item, judged, judge))
    usage = sum((o.usage for o in outcomes), check_usage)
    for o in outcomes:
        evidence.append(Evidence(item=o.item.id, score=o.score, passed=None if o.score is None else
                                 o.score >= rubric.threshold, detail=o.feedback or (o.reason or "")))
        evidence += o.turn_evidence
    # Checklist items keep every question's p(yes) under details["checklist"]; conversation items their turns.
    checklist = {o.item.id: o.details for o in outcomes if o.details and isinstance(o.item, ChecklistItem)}
    turn_details = {o.item.id: o.details for o in outcomes if o.details and not isinstance(o.item, ChecklistItem)}
    failed = [o for o in outcomes if o.score is None]
    if failed:
        first = failed[0]
        return Verdict(**base, unscored_kind=first.unscored_kind, evidence=evidence, usage=usage,
                       unscored_reason=f"judge item '{first.item.id}': {first.reason}",
                       feedback=first.feedback, details={"raw_reply": first.raw, **asked,
                                                         **({"turns": turn_details} if turn_details else {}),
                                                         **({"checklist": checklist} if checklist else {})})
    item_scores = [ItemScore(item_id=o.item.id, kind="judge", weight=o.item.weight, must=o.item.must, score=o.score)
                   for o in outcomes]
    item_scores += [ItemScore(item_id=item.id, kind=item.type, weight=item.weight, must=item.must, passed=ev.passed)
                    for item, ev in zip(rubric.check_items, evidence)]
    if rubric.judge_mode == "predicates":
        if rubric.predicate_levels is None:     # the schema requires them in this mode
            raise ValueError(f"rubric '{rubric.id}': judge_mode predicates without predicate_levels")
        score, how = predicate_level(rubric.predicate_levels, item_scores)
    else:
        score, how = combine(item_scores, rubric.combine)
    # Holistic items with logprobs: P(level) per item, and the tie flag the audit queue reads (score_probs.py).
    distributions = {o.item.id: o.score_probs for o in outcomes if o.score_probs is not None}
    probs = {SCORE_PROBS: {i: d.model_dump() for i, d in distributions.items()}} if distributions else {}
    tie = tie_details(distributions)
    probs.update({TIE_KEY: tie} if tie else {})
    feedback_parts = [o.feedback for o in outcomes if o.feedback]
    failed_checks = [f"✗ {ev.item}: {ev.detail}" for ev in evidence[:len(rubric.check_items)] if ev.passed is False]
    feedback = "\n".join(feedback_parts + failed_checks)
    return Verdict(**base, score=float(score), feedback=feedback, evidence=evidence, usage=usage,
                   passed=score >= rubric.threshold, details={"combine": how, **asked,
                                                              **ItemScores({i.item_id: i.score if i.kind == "judge"
                                                                            else i.passed for i in item_scores}).details(),
                                                              **({"turns": turn_details} if turn_details else {}),
                                                              **({"checklist": checklist} if checklist else {}),
                                                              **probs})
