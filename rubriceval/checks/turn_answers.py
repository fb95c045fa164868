"""The judge's answers to per-turn questions (`ask:` predicates), as the deterministic checks read them, and the
knowledge-file passages of the run (rubriceval/data/knowledge.py) that context conditions search.

A check stays a plain function of (item, sample): when it needs the answer to a question about turn n that is not
known yet, it raises `NeedAnswer`; the driver (rubriceval/scoring/turn_questions.py) asks the judge and runs the
check again. So a question is asked only on the turns the check's own logic reaches (a `before` stops at its first
decisive turn), in turn order (the judge's prefix cache holds the transcript up to the previous turn), and once
per (turn, question) for every item of the sample. Without a judge (`rubriceval validate`, a sample capped before
judging) a question cannot be answered and the check says so (`Unanswered`).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from pydantic import BaseModel


class NeedAnswer(Exception):
    def __init__(self, question: str, turn: int):
        super().__init__(f"turn {turn}: {question}")
        self.question, self.turn = question, turn


class Unanswered(Exception):
    """A question the judge could not answer (provider error, unreadable reply, no judge)."""

    def __init__(self, question: str, turn: int, kind: str, reason: str):
        super().__init__(f"turn {turn}: question {question!r}: {reason}")
        self.question, self.turn, self.kind, self.reason = question, turn, kind, reason


class TurnAnswer(BaseModel):
    turn: int
    question: str
    p_yes: float | None = None
    source: str | None = None            # logprobs | label
    unscored_kind: str | None = None
    reason: str | None = None


class TurnAnswers:
    """Answers for one sample, keyed by (question, turn)."""

    def __init__(self, judge_model: str | None = None, can_ask: bool = True, knowledge: list[str] | None = None):
        self.judge_model = judge_model
        self.can_ask = can_ask
        self.knowledge = knowledge or []     # knowledge-file passages: context conditions search them too
        self.answers: dict[tuple[str, int], TurnAnswer] = {}

    def p_yes(self, question: str, turn: int) -> float:
        answer = self.answers.get((question, turn))
        if answer is None:
            if not self.can_ask:
                raise Unanswered(question, turn, "missing_field", "no judge to ask the question")
            raise NeedAnswer(question, turn)
        if answer.p_yes is None:
            raise Unanswered(question, turn, answer.unscored_kind or "error", answer.reason or "no answer")
        return answer.p_yes

    def record(self, answer: TurnAnswer) -> None:
        self.answers[(answer.question, answer.turn)] = answer

    def asked(self) -> list[TurnAnswer]:
        return sorted(self.answers.values(), key=lambda a: (a.turn, a.question))


_NO_JUDGE = TurnAnswers(can_ask=False)
_CURRENT: ContextVar[TurnAnswers] = ContextVar("turn_answers", default=_NO_JUDGE)


def current_answers() -> TurnAnswers:
    return _CURRENT.get()


@contextmanager
def using_answers(answers: TurnAnswers) -> Iterator[TurnAnswers]:
    token = _CURRENT.set(answers)
    try:
        yield answers
    finally:
        _CURRENT.reset(token)
