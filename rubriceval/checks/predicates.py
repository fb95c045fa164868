"""Does a turn show a predicate (rubriceval/rubric/predicate.py)? Phrases, regex and entities are looked for in
the turn's text; when none matches and the predicate has a question, the judge's answer about that turn decides
(read through rubriceval/checks/turn_answers.py, so the check asks only on the turns it reaches)."""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from rubriceval.checks.base import find_any, span_at
from rubriceval.checks.turn_answers import current_answers
from rubriceval.data.conversation import Conversation
from rubriceval.rubric.predicate import Predicate
from rubriceval.safety.entities import find_entities


class TurnMatch(NamedTuple):
    turn: int
    start: int | None         # offset of the span in the turn (None: decided by the question)
    span: str | None
    how: str                  # phrase | regex | entity:<name> | question
    p_yes: float | None = None
    question: str | None = None
    cutoff: float | None = None


def _says(phrases: list[str], text: str, case_sensitive: bool) -> bool:
    return any(find_any(text, phrase, case_sensitive) for phrase in phrases)


def text_match(predicate: Predicate, text: str, turn: int, case_sensitive: bool = False) -> TurnMatch | None:
    """The earliest phrase, regex or entity match in `text` (no judge); a `not_if` phrase said leaves only the
    phrase matches."""
    found: list[TurnMatch] = []
    for phrase in predicate.phrases:
        if hit := find_any(text, phrase, case_sensitive):
            found.append(TurnMatch(turn, hit[0], span_at(text, hit[0], len(hit[1])), "phrase"))
    if predicate.not_if and _says(predicate.not_if, text, case_sensitive):
        return _earliest(found)
    if predicate.regex and (m := re.search(predicate.regex, text, 0 if case_sensitive else re.IGNORECASE)):
        found.append(TurnMatch(turn, m.start(), m.group(0), "regex"))
    if predicate.entity and (spans := find_entities(text, predicate.entity)) \
            and len({s.entity for s in spans}) >= predicate.min_kinds:
        if predicate.min_kinds == 1:
            found.append(TurnMatch(turn, spans[0].start, spans[0].text, f"entity:{spans[0].entity}"))
        else:                      # quote from the first entity to the end of the last one
            found.append(TurnMatch(turn, spans[0].start, text[spans[0].start:spans[-1].end],
                                   "entities:" + ",".join(dict.fromkeys(s.entity for s in spans))))
    return _earliest(found)


def _earliest(found: list[TurnMatch]) -> TurnMatch | None:
    """The text match that starts first (a text match always has its start; only a question's has none)."""
    return min(found, key=lambda m: m.start if m.start is not None else 0) if found else None


def settled_no(predicate: Predicate, text: str, case_sensitive: bool = False) -> bool:
    """The turn says one of the predicate's `unless` or `not_if` phrases: no, without asking its question."""
    return _says(predicate.unless, text, case_sensitive) or _says(predicate.not_if, text, case_sensitive)


def needs_question(predicate: Predicate, text: str, turn: int, case_sensitive: bool = False) -> bool:
    """Whether the predicate's question decides this turn (no text form matched, no `unless`/`not_if` phrase said)."""
    return bool(predicate.ask) and text_match(predicate, text, turn, case_sensitive) is None \
        and not settled_no(predicate, text, case_sensitive)


def question_match(predicate: Predicate, turn: int) -> tuple[bool, TurnMatch]:
    """The judge's answer to the predicate's question about `turn` (raises NeedAnswer until it is known)."""
    if predicate.ask is None:
        raise ValueError("question_match needs a predicate with a question (ask:)")
    answers = current_answers()
    p_yes = answers.p_yes(predicate.ask, turn)
    cutoff, _ = predicate.cutoff_for(answers.judge_model)
    return p_yes >= cutoff, TurnMatch(turn, None, None, "question", round(p_yes, 4), predicate.ask, cutoff)


def turn_match(predicate: Predicate, conversation: Conversation, turn: int, case_sensitive: bool = False,
               ask: bool = True) -> TurnMatch | None:
    """Turn `turn` (from 1) shows the predicate: its earliest text match, else the question's yes (when `ask`)."""
    text = conversation.turns[turn - 1].content
    hit = text_match(predicate, text, turn, case_sensitive)
    if hit is not None or not (ask and predicate.ask) or settled_no(predicate, text, case_sensitive):
        return hit
    yes, answered = question_match(predicate, turn)
    return answered if yes else None


def turn_matches(predicate: Predicate, conversation: Conversation, roles: Iterable[str],
                 case_sensitive: bool = False, ask: bool = True) -> Iterator[TurnMatch]:
    """Matches in turn order over the turns of these roles, lazily: a caller that stops early asks no more."""
    roles = set(roles)
    for number, turn in conversation.numbered():
        if turn.role in roles and (hit := turn_match(predicate, conversation, number, case_sensitive, ask)):
            yield hit


def said(hit: TurnMatch) -> str:
    """How evidence shows a match: the quoted span, or the question with its p(yes)."""
    if hit.span is not None:
        return f"“{hit.span}”"
    return f"“{hit.question}” p(yes)={hit.p_yes:.2f}"
