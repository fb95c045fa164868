"""Checklist items: yes/no questions asked one by one, p(yes) read from logprobs, a level from the rubric's rule.

Each question is its own judge call through `ask`, with the answer constrained to yes/no (`CallOptions.choices`:
a GBNF grammar on llama.cpp, a JSON-schema enum elsewhere), `max_tokens` tiny and `logprobs`/`top_logprobs`
requested. p(yes) = P(yes) / (P(yes) + P(no)), summed over the spellings of each answer among the top tokens at
the answer's position; a server without logprobs gives p(yes) = 1 or 0 from the label (`source: label`).

Prompt layout: system + sample first, the question last (no rubric text before the sample), so the questions
of one sample — of every rubric seeing the same fields — share their whole prompt but the last lines (llama.cpp's slot
cache and providers' prompt caches reuse it; the tokens actually processed are counted in
`Usage.cached_prompt_tokens`). Questions of one sample are asked one after the
other, so the first call has filled the cache when the next arrives. A rubric's knowledge file comes before the
sample (zh|en/knowledge.j2), so rubrics reading the same file still share that prefix.

From answers to a score: judge_mode `checklist` uses the item's `levels` (conditions on yes/no, p ≥ 0.5) or
`points` (weighted mean p(yes) per level); `checklist_fitted` uses the fitted ordinal model
(`rubriceval.trust.fit_weights`).
"""
from __future__ import annotations

import asyncio
import weakref
from typing import Any, Literal, cast

from pydantic import BaseModel

from rubriceval.core.verdict import UnscoredKind, Usage
from rubriceval.data.sample import Sample
from rubriceval.judge.ask import JudgeRequest, TemplateReask, ask
from rubriceval.prompt.checklist import SCHEMA_NAME, compile_question
from rubriceval.prompt.compile import environment
from rubriceval.rubric.level_rule import level_from_points, level_from_rule
from rubriceval.rubric.schema import ChecklistItem, ChecklistQuestion, FittedWeights, Rubric
from rubriceval.scoring.borderline import borderline, borderline_note
from rubriceval.scoring.judge_mode import misfitted_weights
from rubriceval.scoring.yes_no import (  # noqa: F401 (read here by callers of the checklist since before the move)
    NO_SPELLINGS,
    YES_SPELLINGS,
    YesNo,
    p_yes_from_logprobs,
    read_yes_no,
)


class QuestionAnswer(BaseModel):
    question_id: str
    label: bool | None = None
    p_yes: float | None = None
    source: Literal["logprobs", "label"] | None = None
    unscored_kind: str | None = None
    reason: str | None = None
    decided_by: Literal["rule", "judge", "judge_calibrated", "checker"] | None = None   # decided per turn (scoring/judgement/)
    raw_p_yes: float | None = None      # the judge's own p(yes) when `p_yes` was moved to a calibrated cut-off


async def decided_answer(rubric: Rubric, question: ChecklistQuestion, sample: Sample, judge, turns
                         ) -> tuple[QuestionAnswer, Usage] | None:
    """A checklist question about a conversation decided per turn (scoring/judgement/), or None when it is asked
    whole (a large judge, a question naming no party). p(yes) is the item's score moved so 0.5 is its calibrated
    cut-off (the level rules read p ≥ 0.5); undecided answers carry no p(yes) and the kind "undecided"."""
    from rubriceval.scoring.judgement.decide import JudgementSpec, decide, decomposes, shifted_p_yes

    spec = JudgementSpec(question=question.ask, lang=rubric.language, examples=question.examples,
                         calibration=question.calibration, sees_knowledge=bool(rubric.knowledge))
    role = decomposes(spec, sample.conversation, judge)
    if role is None or sample.conversation is None:
        return None
    knowledge = rubric.knowledge_base() if rubric.knowledge else None
    passages = list(knowledge.passages) if knowledge is not None else None
    found = await decide(spec, sample.conversation, role, judge, turns, passages)
    if found.status != "decided" or found.answer is None:
        kind = "undecided" if found.status == "undecided" else "error"
        return QuestionAnswer(question_id=question.id, unscored_kind=kind,
                              reason=f"{found.status}: {found.reason}"), found.usage
    p_yes = shifted_p_yes(found.score, found.calibration) if found.score is not None else float(found.answer)
    return QuestionAnswer(question_id=question.id, label=found.answer, p_yes=p_yes,
                          source="logprobs" if found.score is not None else "label",
                          decided_by=found.decided_by, raw_p_yes=found.score), found.usage


class ChecklistResult(BaseModel):
    """Every question's answer for one sample, the level reached and how."""

    answers: list[QuestionAnswer]
    score: int | None = None
    how: str = ""
    usage: Usage = Usage()
    borderline: dict | None = None     # why the level could flip with the judge's noise (scoring/borderline.py)


def fitted_level(fitted: FittedWeights, p_yes: dict[str, float]) -> tuple[int, str]:
    """1 + the number of cutpoints the weighted sum passes (an ordinal logistic model's most likely level)."""
    z = sum(w * p_yes.get(qid, 0.0) for qid, w in fitted.weights.items())
    level = 1 + sum(1 for c in fitted.cutpoints if z > c)
    return level, f"fitted z = {z:.2f}"


def level_for(item: ChecklistItem, p_yes: dict[str, float], mode: str) -> tuple[int, str]:
    """The level these answers earn under the item's rule (judge_mode checklist) or fitted model (checklist_fitted)."""
    if mode == "checklist_fitted" and item.fitted is not None:
        return fitted_level(item.fitted, p_yes)
    if item.levels:
        answers = {q.id: p_yes[q.id] >= 0.5 for q in item.questions}
        level, condition = level_from_rule(item.levels, answers)
        return level, f"level {level}: {condition}"
    total = sum(q.weight for q in item.questions) or len(item.questions)
    share = sum(q.weight * p_yes[q.id] for q in item.questions) / total
    return level_from_points(item.points, share)


_RUNNING: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def checklist_slots(judge) -> asyncio.Semaphore:
    """At most `concurrency` checklists in flight per judge. Without this bound, many samples' questions
    interleave in the client's queue and every call lands on a server slot that last saw another sample, so the
    shared prefix is processed again each time."""
    if judge not in _RUNNING:
        _RUNNING[judge] = asyncio.Semaphore(max(1, judge.config.concurrency))
    return _RUNNING[judge]


async def judge_checklist(rubric: Rubric, item: ChecklistItem, sample: Sample, judge, *,
                          template_dir: str | None = None) -> ChecklistResult:
    """Ask every question (one after the other: the prefix cache is warm for the next) and apply the rule."""
    async with checklist_slots(judge):
        return await _ask_all(rubric, item, sample, judge, template_dir)


async def ask_questions(rubric: Rubric, item: ChecklistItem, questions: list[ChecklistQuestion], sample: Sample,
                        judge, template_dir: str | None = None, *, decompose: bool = True
                        ) -> tuple[list[QuestionAnswer], Usage]:
    """Ask these questions of the item one after the other (the prefix cache is warm for the next): every
    question's answer (or why it has none) and what the calls cost. Scorecards (rubriceval/scorecard/) ask theirs
    through this too, inside `checklist_slots` (whole: `decompose=False`, having decided before whether to).

    About a conversation, on a small judge, a question naming the party it asks about is decided by the judgement
    mechanism (rubriceval/scoring/judgement/: per turn of that party, evidence, calibration; `decided_answer`)."""
    lang = rubric.language
    reask = TemplateReask(template=environment(template_dir).get_template(f"{lang}/checklist_reask.j2"))
    answers: list[QuestionAnswer] = []
    usage = Usage()
    from rubriceval.scoring.judgement.turns import TurnAsker

    turns = TurnAsker(judge, sample.conversation, lang) if decompose and sample.conversation is not None else None
    for question in questions:
        if turns is not None:
            decided = await decided_answer(rubric, question, sample, judge, turns)
            if decided is not None:
                answers.append(decided[0])
                usage = usage + decided[1]
                continue
        prompt = compile_question(rubric, item, question, sample, template_dir=template_dir)
        request = JudgeRequest(messages=prompt.messages, json_schema=prompt.json_schema, schema_name=SCHEMA_NAME,
                               cache_tag=prompt.cache_tag, options=prompt.options)
        asked = await ask(judge, request, read_yes_no, reask=reask,
                          max_input_tokens=judge.config.max_input_tokens)
        usage = usage + asked.usage
        if asked.ok and asked.value is not None:
            answers.append(QuestionAnswer(question_id=question.id, label=asked.value.label,
                                          p_yes=round(asked.value.p_yes, 4), source=asked.value.source))
        else:
            answers.append(QuestionAnswer(question_id=question.id, unscored_kind=asked.unscored_kind,
                                          reason=asked.reason))
    return answers, usage


async def _ask_all(rubric: Rubric, item: ChecklistItem, sample: Sample, judge, template_dir: str | None
                   ) -> ChecklistResult:
    answers, usage = await ask_questions(rubric, item, item.questions, sample, judge, template_dir)
    failed = [a for a in answers if a.p_yes is None]
    if failed:
        return ChecklistResult(answers=answers, usage=usage,
                               how=f"question '{failed[0].question_id}': {failed[0].reason}")
    p_yes = {a.question_id: a.p_yes for a in answers if a.p_yes is not None}     # all of them: none failed
    score, how = level_for(item, p_yes, rubric.judge_mode)
    near = borderline(item, p_yes, rubric.judge_mode)
    # A guard, reached only by a run resumed with another judge than it started with (it keeps its versions): every
    # other run has its mode decided for its judge by rubriceval/scoring/judge_mode.py, with the same rule.
    fitted_for = misfitted_weights(rubric, [judge.config.model]) if rubric.judge_mode == "checklist_fitted" else None
    if fitted_for:
        how += f" (weights fitted for judge '{fitted_for}', this judge is '{judge.config.model}': refit them)"
    if near:
        how += f"; {borderline_note(near, rubric.language)}"
    return ChecklistResult(answers=answers, score=score, how=how, usage=usage, borderline=near)


def checklist_feedback(item: ChecklistItem, result: ChecklistResult, lang: str) -> str:
    """One line per question: ✓/✗, p(yes), the question — what the report and the audit app show."""
    asks = {q.id: q.ask for q in item.questions}
    lines = []
    for answer in result.answers:
        if answer.p_yes is None:
            lines.append(f"? {asks[answer.question_id]} ({answer.reason})")
            continue
        mark = "✓" if answer.label else "✗"
        lines.append(f"{mark} {asks[answer.question_id]} p(yes)={answer.p_yes:.2f}")
    lines.append(("→ " if lang == "zh" else "→ ") + result.how)
    return "\n".join(lines)


async def checklist_outcome(rubric: Rubric, item: ChecklistItem, sample: Sample, judge):
    """The checklist as a rubric judge item's outcome (score = the level; details = every question's p(yes))."""
    from rubriceval.scoring.item_outcome import JudgeItemOutcome

    result = await judge_checklist(rubric, item, sample, judge)
    details = {"judge_mode": rubric.judge_mode, "how": result.how,
               **({"borderline": result.borderline} if result.borderline else {}),
               "questions": {a.question_id: a.model_dump(exclude={"question_id"}, exclude_none=True)
                             for a in result.answers}}
    if result.score is None:
        failed = next(a for a in result.answers if a.p_yes is None)
        # an Asked's kind (UnscoredKind), kept as text in QuestionAnswer; the outcome validates it again
        return JudgeItemOutcome(item=item, unscored_kind=cast(UnscoredKind, failed.unscored_kind or "error"),
                                reason=result.how, usage=result.usage, details=details)
    return JudgeItemOutcome(item=item, score=result.score, feedback=checklist_feedback(item, result, rubric.language),
                            usage=result.usage, details=details)
