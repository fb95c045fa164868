"""A checklist's level rule: which yes/no answers make which 1–5 score, written so a customer-service lead can read it.

    levels:
      5: all
      4: soothe and status and eta and follow_up
      3: soothe and (status or eta)
      2: any
      1: otherwise

The score is the highest level whose condition holds. A condition is made of question ids, `and`, `or`, `not`,
parentheses, `all` / `any` / `none` (of the item's questions), `N of (a, b, c)` (at least N of these) and
`otherwise` (always true; only for level 1). Level 1 may be left out: it is what remains. A question counts as
"yes" when its p(yes) ≥ 0.5.

Or a points table — the weighted share of "yes" (question weights, p(yes) as the soft answer) needed per level:

    points: {5: 0.9, 4: 0.7, 3: 0.5, 2: 0.25}

Without either, the item uses `1 + 4 × share`, rounded half up (the `weighted_mean` combine rule's mapping).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

KEYWORDS = {"and", "or", "not", "all", "any", "none", "otherwise", "of"}
_TOKEN = re.compile(r"\s*(?:(?P<punct>[(),])|(?P<number>\d+)|(?P<word>[A-Za-z0-9_\-\u4e00-\u9fff]+))")


class LevelRuleError(ValueError):
    """A level condition that cannot be read; the message says where in the text."""


@dataclass(frozen=True)
class Condition:
    """A parsed condition: evaluate it with `holds(answers)` (question id → yes?)."""

    kind: str                       # "id", "and", "or", "not", "all", "any", "none", "otherwise", "at_least"
    name: str = ""
    parts: tuple[Condition, ...] = ()
    count: int = 0

    def holds(self, answers: dict[str, bool]) -> bool:
        if self.kind == "id":
            return answers[self.name]
        if self.kind == "and":
            return all(p.holds(answers) for p in self.parts)
        if self.kind == "or":
            return any(p.holds(answers) for p in self.parts)
        if self.kind == "not":
            return not self.parts[0].holds(answers)
        if self.kind == "all":
            return all(answers.values())
        if self.kind == "any":
            return any(answers.values())
        if self.kind == "none":
            return not any(answers.values())
        if self.kind == "otherwise":
            return True
        return sum(p.holds(answers) for p in self.parts) >= self.count      # at_least

    def names(self) -> set[str]:
        own = {self.name} if self.kind == "id" else set()
        return own.union(*(p.names() for p in self.parts))

    def reads_every_question(self) -> bool:
        return self.kind in ("all", "any", "none") or any(p.reads_every_question() for p in self.parts)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise LevelRuleError(f"cannot read {text[pos:pos + 12]!r} (position {pos + 1})")
        out.append(match.group("punct") or match.group("number") or match.group("word"))
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


class _Parser:
    def __init__(self, text: str):
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None, what: str = "more") -> str:
        """The next token; `expected`: it must be exactly this."""
        token = self.peek()
        if token is None:
            raise LevelRuleError(f"the condition ends too early (expected {expected or what})")
        if expected is not None and token != expected:
            raise LevelRuleError(f"expected {expected!r}, found {token!r}")
        self.pos += 1
        return token

    def parse(self) -> Condition:
        if not self.tokens:
            raise LevelRuleError("the condition is empty")
        node = self.or_expr()
        if self.peek() is not None:
            raise LevelRuleError(f"unexpected {self.peek()!r}")
        return node

    def joined(self, word: str, part) -> Condition:
        """part (word part)*: one Condition of kind `word` over the parts, or the single part."""
        parts = [part()]
        while self.peek() == word:
            self.take()
            parts.append(part())
        return parts[0] if len(parts) == 1 else Condition(word, parts=tuple(parts))

    def or_expr(self) -> Condition:
        return self.joined("or", self.and_expr)

    def and_expr(self) -> Condition:
        return self.joined("and", self.not_expr)

    def not_expr(self) -> Condition:
        if self.peek() == "not":
            self.take()
            return Condition("not", parts=(self.not_expr(),))
        return self.atom()

    def atom(self) -> Condition:
        token = self.take(what="a question id")
        if token == "(":
            node = self.or_expr()
            self.take(")")
            return node
        if token in ("all", "any", "none", "otherwise"):
            return Condition(token)
        if token.isdigit() and self.peek() == "of":
            self.take("of")
            self.take("(")
            names = [self.name()]
            while self.peek() == ",":
                self.take(",")
                names.append(self.name())
            self.take(")")
            return Condition("at_least", parts=tuple(Condition("id", name=n) for n in names), count=int(token))
        if token in KEYWORDS or token in "(),":
            raise LevelRuleError(f"unexpected {token!r}")
        return Condition("id", name=token)

    def name(self) -> str:
        token = self.take(what="a question id")
        if token in KEYWORDS or token in "(),":
            raise LevelRuleError(f"expected a question id, found {token!r}")
        return token


def parse_condition(text: str) -> Condition:
    return _Parser(str(text)).parse()


def check_condition(text: str, question_ids: list[str]) -> Condition:
    """The parsed condition, or LevelRuleError saying why it cannot be used with these questions."""
    condition = parse_condition(text)
    unknown = sorted(condition.names() - set(question_ids))
    if unknown:
        raise LevelRuleError(f"unknown question id(s) {unknown}; the questions are {list(question_ids)}")
    return condition


def check_level_keys(levels: dict[int, str]) -> list[tuple[int, str]]:
    """(level, problem) for levels outside 1–5 and for 'otherwise' above level 1."""
    problems = [(level, "levels are 1–5") for level in levels if level not in (1, 2, 3, 4, 5)]
    for level, text in levels.items():
        if level != 1 and str(text).strip() == "otherwise":
            problems.append((level, "'otherwise' is always true: only level 1 may use it"))
    return problems


def check_levels_rule(levels: dict[int, str], question_ids: list[str]) -> list[tuple[int, str]]:
    """(level, problem) for every condition that cannot be used; empty when the rule is sound."""
    problems = check_level_keys(levels)
    for level, text in sorted(levels.items()):
        try:
            check_condition(text, question_ids)
        except LevelRuleError as exc:
            problems.append((level, str(exc)))
    return sorted(problems)


def check_points(points: dict[int, float]) -> list[tuple[int, str]]:
    """(level, problem): levels 2–5 only, shares in [0, 1], a higher level needing a larger share."""
    problems = [(level, "points name levels 2–5 (level 1 is what remains)") for level in points
                if level not in (2, 3, 4, 5)]
    problems += [(level, f"share {share} is not between 0 and 1") for level, share in points.items()
                 if not 0 <= share <= 1]
    ordered = sorted((lvl, share) for lvl, share in points.items() if lvl in (2, 3, 4, 5))
    for (low, low_share), (high, high_share) in zip(ordered, ordered[1:]):
        if high_share <= low_share:
            problems.append((high, f"level {high} needs a larger share than level {low} ({high_share} ≤ {low_share})"))
    return problems


def level_from_rule(levels: dict[int, str], answers: dict[str, bool]) -> tuple[int, str]:
    """The highest level whose condition holds, and that condition (level 1 when none holds)."""
    for level in sorted(levels, reverse=True):
        if parse_condition(levels[level]).holds(answers):
            return level, levels[level]
    return 1, "otherwise"


def level_from_points(points: dict[int, float] | None, share: float) -> tuple[int, str]:
    """The level a weighted share of "yes" earns: the points table, else 1 + 4·share rounded half up."""
    if not points:
        return int(1 + 4 * share + 0.5), f"1 + 4 × {share:.2f}"
    for level in sorted(points, reverse=True):
        if share >= points[level]:
            return level, f"share {share:.2f} ≥ {points[level]}"
    return 1, f"share {share:.2f} below every level"
