"""Lint for checklist items and the judge-mode options: what the schema accepts but a rubric author would not mean.

* a question no level condition reads (asked, paid for, and ignored by the score);
* a level no combination of answers can reach (a higher level's condition always holds with it);
* `few_shot: per_level` with examples for only some levels.
"""
from __future__ import annotations

from itertools import product

from rubriceval.rubric.level_rule import parse_condition
from rubriceval.rubric.schema import LEVELS, ChecklistItem, Rubric

MAX_ENUMERATED_QUESTIONS = 12      # 2^12 answer combinations are checked; above that the reachability check is skipped


def unreachable_levels(item: ChecklistItem) -> list[int]:
    """Levels of the rule that no combination of yes/no answers makes the highest level holding."""
    ids = [q.id for q in item.questions]
    if not item.levels or len(ids) > MAX_ENUMERATED_QUESTIONS:
        return []
    conditions = {level: parse_condition(text) for level, text in item.levels.items()}
    reached: set[int] = set()
    for values in product((False, True), repeat=len(ids)):
        answers = dict(zip(ids, values))
        holding = [level for level, condition in conditions.items() if condition.holds(answers)]
        reached.add(max(holding) if holding else 1)
    return sorted(level for level in conditions if level not in reached)


def checklist_findings(rubric: Rubric) -> list[tuple]:
    """(severity, message, *field path) for every finding."""
    out: list[tuple] = []
    for index, item in enumerate(rubric.items):
        if not isinstance(item, ChecklistItem) or not item.levels:
            continue
        conditions = [parse_condition(text) for text in item.levels.values()]
        used = set().union(*(c.names() for c in conditions))
        reads_all = any(c.reads_every_question() for c in conditions)
        for q_index, question in enumerate(item.questions):
            if question.id not in used and not reads_all:
                out.append(("warning", f"question '{question.id}' is read by no level condition: it is asked and "
                            "paid for, but never changes the score", "items", index, "questions", q_index))
        for level in unreachable_levels(item):
            out.append(("warning", f"level {level} can never be the score: whenever its condition holds, a higher "
                        "level's holds too", "items", index, "levels", level))
    if rubric.few_shot == "per_level":
        covered = {e.score for e in rubric.examples}
        missing = [level for level in LEVELS if level not in covered]
        if missing:
            out.append(("warning", f"few_shot: per_level, but no example has score {missing}; the prompt shows "
                        f"{len(covered)} level(s)", "examples" if rubric.examples else "few_shot"))
    return out
