"""How a rubric's items make its final 1–5 score (the rule is stated in the YAML: `combine.rule`)."""
from __future__ import annotations

from pydantic import BaseModel

from rubriceval.rubric.level_rule import level_from_rule
from rubriceval.rubric.schema import Combine


class ItemScore(BaseModel):
    item_id: str
    kind: str              # "judge" or a check type
    weight: float
    must: bool
    score: int | None = None     # judge items: 1–5
    passed: bool | None = None   # checks


def round_half_up(x: float) -> int:
    return int(x + 0.5)


def _judge_score(item: ItemScore) -> int:
    if item.score is None:
        raise ValueError(f"judge item {item.item_id!r} is unscored: combine needs every judge item scored")
    return item.score


def combine(items: list[ItemScore], rule: Combine) -> tuple[int, str]:
    """Final score and a one-line explanation of how it was reached. All judge items must be scored."""
    judges = [i for i in items if i.kind == "judge"]
    checks = [i for i in items if i.kind != "judge"]
    failed_musts = [i.item_id for i in items if i.must and (i.passed is False or (i.score is not None and i.score <= 2))]
    if rule.rule == "judge_capped":
        total_w = sum(i.weight for i in judges) or len(judges)
        mean = sum(_judge_score(i) * (i.weight or 1) for i in judges) / total_w
        score, how = round_half_up(mean), f"judge {mean:.2f}"
    elif rule.rule == "weighted_mean":
        parts = [((_judge_score(i) - 1) / 4 if i.kind == "judge" else float(bool(i.passed)), i.weight) for i in items]
        total_w = sum(w for _, w in parts)
        m = sum(v * w for v, w in parts) / total_w if total_w else 0.0
        score, how = round_half_up(1 + 4 * m), f"weighted mean {m:.2f} → {1 + 4 * m:.2f}"
    else:  # min
        values = [_judge_score(i) if i.kind == "judge" else (5 if i.passed else 1) for i in items]
        score, how = min(values), "lowest item"
    if failed_musts and score > rule.cap_score:
        how += f", capped at {rule.cap_score} by failed must-item(s): {', '.join(failed_musts)}"
        score = rule.cap_score
    if checks:
        how += f"; checks passed {sum(1 for c in checks if c.passed)}/{len(checks)}"
    return score, how


def predicate_level(levels: dict[int, str], items: list[ItemScore]) -> tuple[int, str]:
    """judge_mode predicates: the highest level of `predicate_levels` whose condition the checks meet (a check that
    passed is true), and how."""
    answers = {i.item_id: bool(i.passed) for i in items if i.kind != "judge"}
    level, condition = level_from_rule(levels, answers)
    passed = sum(answers.values())
    return level, f"predicates level {level}: {condition}; checks passed {passed}/{len(answers)}"
