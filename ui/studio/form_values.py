"""The rubric form as the page holds it: its field values in FORM_FIELDS order, to and from a RubricForm.

`values_of` then `form_of` gives back the same form, so a rubric opened and saved with no edit is the file as it was
(studio/form.yaml_from_form). The checks box is studio/check_text.py's: one value per line, a phrase's alternatives
one per line, never split at `|`.
"""
from __future__ import annotations

from typing import Any

from rubriceval.common.errors import RubricEvalError
from rubriceval.studio.check_text import box_text, parse_box
from rubriceval.studio.form import RubricForm, parse_lines

FORM_FIELDS = ("id", "name", "language", "description", "criterion", "level1", "level2", "level3", "level4",
               "level5", "judge_sees", "threshold", "judge_mode", "applies_languages", "applies_tags",
               "applies_intents", "applies_pattern", "questions", "level_rule", "checks")
FIELD_INDEX = {name: index for index, name in enumerate(FORM_FIELDS)}


def _listed(text: str | None) -> list[str]:
    """A comma-separated box (tags, intents) as its entries."""
    return [p.strip() for p in (text or "").replace("，", ",").split(",") if p.strip()]


def _threshold(value: Any) -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise RubricEvalError("the pass threshold is empty", field="threshold", hint="a score from 1 to 5, e.g. 4")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RubricEvalError(f"the pass threshold '{value}' is not a number", field="threshold",
                              hint="a score from 1 to 5, e.g. 4") from None


def form_of(values: tuple[Any, ...] | list[Any]) -> RubricForm:
    v = dict(zip(FORM_FIELDS, values))
    level_rule = {}
    for key, condition in parse_lines(v["level_rule"] or "", what="level_rule"):
        if not key.strip().isdigit():
            raise RubricEvalError(f"level rule: '{key}' is not a level (1–5)", field="level_rule",
                                  hint="one per line: level: condition, e.g. 5: a and b")
        level_rule[int(key)] = condition
    return RubricForm(
        id=v["id"] or "", name=v["name"] or "", language=v["language"] or "zh", description=v["description"] or "",
        criterion=v["criterion"] or "", levels={k: v[f"level{k}"] or "" for k in range(1, 6)},
        judge_sees=list(v["judge_sees"] or []), threshold=_threshold(v["threshold"]),
        judge_mode=v["judge_mode"] or "holistic", applies_languages=list(v["applies_languages"] or []),
        applies_tags=_listed(v["applies_tags"]), applies_intents=_listed(v["applies_intents"]),
        applies_pattern=v["applies_pattern"] or "",
        questions=parse_lines(v["questions"] or "", what="questions"), level_rule=level_rule,
        checks=parse_box(v["checks"] or ""))


def values_of(form: RubricForm) -> list[Any]:
    threshold = int(form.threshold) if float(form.threshold).is_integer() else form.threshold
    return [form.id, form.name, form.language, form.description, form.criterion,
            *[form.levels.get(k, "") for k in range(1, 6)], form.judge_sees, threshold, form.judge_mode,
            form.applies_languages, ", ".join(form.applies_tags), ", ".join(form.applies_intents),
            form.applies_pattern, "\n".join(f"{qid}: {ask}" for qid, ask in form.questions),
            "\n".join(f"{level}: {rule}" for level, rule in sorted(form.level_rule.items(), reverse=True)),
            box_text(form.checks)]
