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
import math
import weakref
from typing import Any, Literal, cast

from pydantic import BaseModel

from rubriceval.core.verdict import UnscoredKind, Usage
from rubriceval.data.sample import Sample
from rubriceval.judge.ask import JudgeRequest, Reading, TemplateReask, ask
from rubriceval.judge.options import TokenLogprob
from rubriceval.prompt.checklist import SCHEMA_NAME, compile_question
from rubriceval.prompt.compile import environment
from rubriceval.rubric.level_rule import level_from_points, level_from_rule
from rubriceval.rubric.schema import ChecklistItem, ChecklistQuestion, FittedWeights, Rubric
from rubriceval.scoring.borderline import borderline, borderline_note
from rubriceval.scoring.judge_mode import misfitted_weights

YES_SPELLINGS = {"yes", "是", "是的", "y"}
NO_SPELLINGS = {"no", "否", "不是", "n"}


class YesNo(BaseModel):
    """One question's answer: the label, p(yes), and where p(yes) came from."""

    label: bool
    p_yes: float
    source: Literal["logprobs", "label"]


class QuestionAnswer(BaseModel):
    question_id: str
    label: bool | None = None
    p_yes: float | None = None
    source: Literal["logprobs", "label"] | None = None
    unscored_kind: str | None = None
    reason: str | None = None


class ChecklistResult(BaseModel):
    """Every question's answer for one sample, the level reached and how."""

    answers: list[QuestionAnswer]
    score: int | None = None
    how: str = ""
    usage: Usage = Usage()
    borderline: dict | None = None     # why the level could flip with the judge's noise (scoring/borderline.py)


def _spelling(token: str) -> str:
    return token.strip().strip('"').strip().lower()


def p_yes_from_logprobs(tokens: list[TokenLogprob] | None) -> float | None:
    """p(yes) normalised over yes/no at the first generated position that offers either; None when none does."""
    for position in tokens or []:
        options = dict(position.top)
        options.setdefault(position.token, position.logprob)
        yes = sum(math.exp(lp) for tok, lp in options.items() if _spelling(tok) in YES_SPELLINGS)
        no = sum(math.exp(lp) for tok, lp in options.items() if _spelling(tok) in NO_SPELLINGS)
        if yes + no > 0:
            return yes / (yes + no)
    return None


def _label(reply) -> str | None:
    data = getattr(reply, "data", None)
    text = data.get("answer") if isinstance(data, dict) and isinstance(data.get("answer"), str) else reply.text
    word = _spelling(text or "")
    if word.startswith("{"):                       # JSON the client did not decode (no schema was sent)
        word = _spelling(word.split(":")[-1].strip("{} "))
    if word in YES_SPELLINGS:
        return "yes"
    if word in NO_SPELLINGS:
        return "no"
    return None


def read_yes_no(reply) -> Reading[YesNo]:
    """A reader for `ask`: the yes/no label, with p(yes) from the reply's logprobs when there are any."""
    label = _label(reply)
    if label is None:
        snippet = (reply.text or "").strip().replace("\n", " ")[:40]
        return Reading(problems=[f"the reply is neither yes nor no: {snippet!r}"], kind="parse_error")
    p_yes = p_yes_from_logprobs(getattr(reply, "logprobs", None))
    if p_yes is None:
        return Reading(value=YesNo(label=label == "yes", p_yes=1.0 if label == "yes" else 0.0, source="label"))
    return Reading(value=YesNo(label=label == "yes", p_yes=p_yes, source="logprobs"))


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
                        judge, template_dir: str | None = None) -> tuple[list[QuestionAnswer], Usage]:
    """Ask these questions of the item one after the other (the prefix cache is warm for the next): every
    question's answer (or why it has none) and what the calls cost. Scorecards (rubriceval/scorecard/) ask theirs
    through this too, inside `checklist_slots`."""
    lang = rubric.language
    reask = TemplateReask(template=environment(template_dir).get_template(f"{lang}/checklist_reask.j2"))
    answers: list[QuestionAnswer] = []
    usage = Usage()
    for question in questions:
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
