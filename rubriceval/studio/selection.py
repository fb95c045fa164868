"""Criteria from graded examples (EvalGen's selection): the judge proposes yes/no questions from samples a lead
graded, every question is asked of every graded sample through the checklist path (scoring/checklist.ask_questions,
p(yes) from logprobs where the judge gives them), and only the questions whose answers agree with the grades are
kept — a proposal for the form's checklist, which the lead edits; nothing is saved unseen.

Agreement of a question: over the graded samples it answered, the share where "yes" (p(yes) ≥ 0.5) goes with a good
grade (≥ the rubric's threshold) — or, for a question that names a fault ("is the answer curt?"), with a bad one: the
direction that agrees more is the question's polarity. A question is kept at agreement ≥ MIN_AGREEMENT on at least
MIN_ANSWERED samples; the rest are listed with their figure, so the lead sees why.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.core.verdict import Usage
from rubriceval.data.sample import Sample
from rubriceval.judge.ask import JudgeRequest, ask, json_reader
from rubriceval.prompt.environment import prompt_environment, render_messages
from rubriceval.rubric.schema import ChecklistItem, ChecklistQuestion, Rubric
from rubriceval.scoring.checklist import ask_questions

TEMPLATE_DIR = Path(__file__).parent / "templates"
MIN_AGREEMENT = 0.7
MIN_ANSWERED = 5
MAX_EXAMPLES = 20
QUESTIONS_SCHEMA = {"type": "object", "properties": {"questions": {"type": "array", "items": {
    "type": "object", "properties": {"id": {"type": "string"}, "ask": {"type": "string"}},
    "required": ["id", "ask"]}}}, "required": ["questions"]}


class Candidate(BaseModel):
    id: str
    ask: str
    answered: int
    agreement: float | None      # None: too few answers to say
    polarity: str                # "yes=good" | "yes=bad"
    kept: bool


def _questions(data: dict) -> tuple[list[tuple[str, str]] | None, list[str]]:
    seen: set[str] = set()
    out = []
    for index, q in enumerate(data.get("questions") or []):
        qid = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(q.get("id", "")).lower()).strip("_")
        qid = qid or f"q{index + 1}"
        ask_text = str(q.get("ask", "")).strip()
        if ask_text and qid not in seen:
            seen.add(qid)
            out.append((qid, ask_text))
    return (out, []) if out else (None, ["the reply proposes no question"])


async def propose_questions(graded: list[tuple[Sample, int]], judge, lang: str) -> tuple[list[tuple[str, str]], Usage]:
    examples = [{"question": s.question, "answer": s.answer, "grade": g} for s, g in graded[:MAX_EXAMPLES]]
    messages = render_messages(prompt_environment(TEMPLATE_DIR), lang, "propose_questions", system=None,
                               examples=examples)
    asked = await ask(judge, JudgeRequest(messages=messages, json_schema=QUESTIONS_SCHEMA,
                                          schema_name="proposed_questions", cache_tag="studio.propose.v1"),
                      json_reader(_questions))
    if not asked.ok or asked.value is None:      # ok has a value: said again for the type checker
        raise RubricEvalError(f"the judge proposed no usable question: {asked.reason or asked.unscored_kind}",
                              field="graded")
    return asked.value, asked.usage


def _agreement(pairs: list[tuple[bool, bool]]) -> tuple[float | None, str]:
    if len(pairs) < MIN_ANSWERED:
        return None, "yes=good"
    same = sum(yes == good for yes, good in pairs) / len(pairs)
    return (same, "yes=good") if same >= 1 - same else (1 - same, "yes=bad")


async def select_questions(rubric: Rubric, questions: list[tuple[str, str]], graded: list[tuple[Sample, int]],
                           judge) -> tuple[list[Candidate], Usage]:
    """Every proposed question asked of every graded sample; kept where its answers agree with the grades."""
    item = ChecklistItem(id="proposed", type="checklist",
                         questions=[ChecklistQuestion(id=qid, ask=text) for qid, text in questions])
    usage = Usage()
    answers: dict[str, list[tuple[bool, bool]]] = {qid: [] for qid, _ in questions}
    for sample, grade in graded:
        got, spent = await ask_questions(rubric, item, item.questions, sample, judge)
        usage = usage + spent
        for answer in got:
            if answer.p_yes is not None:
                answers[answer.question_id].append((answer.p_yes >= 0.5, grade >= rubric.threshold))
    out = []
    for qid, text in questions:
        agreement, polarity = _agreement(answers[qid])
        out.append(Candidate(id=qid, ask=text, answered=len(answers[qid]), agreement=agreement, polarity=polarity,
                             kept=agreement is not None and agreement >= MIN_AGREEMENT))
    return out, usage


def parse_grades(text: str, samples: dict[str, Sample]) -> list[tuple[Sample, int]]:
    """'sample_id: grade' lines (grade 1–5) for samples of the chosen run; errors name the line and field."""
    graded = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        sample_id, sep, grade = line.replace("：", ":").rpartition(":")
        sample_id, grade = sample_id.strip(), grade.strip()
        if not sep or not grade.isdigit() or not 1 <= int(grade) <= 5:
            raise RubricEvalError(f"line {number} of the grades is not 'sample_id: 1–5'", field="graded", line=number)
        if sample_id not in samples:
            raise RubricEvalError(f"line {number}: no sample '{sample_id}' in the chosen run", field="graded",
                                  line=number)
        graded.append((samples[sample_id], int(grade)))
    if len(graded) < MIN_ANSWERED:
        raise RubricEvalError(f"grade at least {MIN_ANSWERED} samples (got {len(graded)})", field="graded",
                              hint="EvalGen's selection needs examples on both sides of the threshold")
    return graded

