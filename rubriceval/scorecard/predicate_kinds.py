"""The scorecard predicate-kind registry: what decides whether an item is hit. One record per kind, the single table
the schema's rules and messages (scorecard/schema.py), the rule-sheet import (scorecard/sheet.py), the card's trust
bars and the studio's predicate choice are derived from; tests/checks/test_check_registry.py checks the scoring, the studio
wording and docs/scorecards.md against it.

A kind is a key of the item (`check:`, `question:`, `rubric:`) holding its predicate; exactly one is given."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# The names, typed for editors and type checkers; tests/checks/test_check_registry.py holds it equal to the table below.
PredicateName = Literal["check", "question", "rubric"]


@dataclass(frozen=True)
class PredicateKind:
    name: PredicateName        # the item's key, and ScorecardItem.kind
    says: str                  # how messages describe it: "a deterministic check"
    judge_decided: bool        # the judge decides it, so the card's trust bar applies (a check needs none)
    hit: str                   # when the item is hit (docs/scorecards.md says it in full)
    example: dict[str, Any]    # a minimal item's predicate: the tests score one of each kind


PREDICATE_KINDS: dict[PredicateName, PredicateKind] = {kind.name: kind for kind in (
    PredicateKind("check", "a deterministic check", judge_decided=False,
                  hit="the check fails (a bonus: passes); per: occurrence counts its failing turns or occurrences",
                  example={"check": {"type": "max_length", "max_chars": 80}}),
    PredicateKind("question", "a yes/no question to the judge", judge_decided=True,
                  hit="the judge answers hit_on (default no for deductions, yes for bonuses)",
                  example={"question": "客服是否先表达了歉意？"}),
    PredicateKind("rubric", "a rubric with min_score", judge_decided=True,
                  hit="the run's verdict of that rubric is below min_score",
                  example={"rubric": {"id": "identity_verification", "min_score": 4}}),
)}
PREDICATE_NAMES: tuple[PredicateName, ...] = tuple(PREDICATE_KINDS)


def predicate_choices(last: str = "or") -> str:
    """'check: (a deterministic check), question: (…) or rubric: (…)': how the schema's messages list them."""
    said = [f"{k.name}: ({k.says})" for k in PREDICATE_KINDS.values()]
    return f"{', '.join(said[:-1])} {last} {said[-1]}"
