"""The studio's rubric form and the YAML it stands for.

The YAML stays the single source of truth: the form edits the keys a QA lead writes by hand (name, criterion, five
level descriptions, what the judge sees, checklist questions and their level rule, deterministic checks) and is
written back into the file's own YAML tree (ruamel.yaml round trip), so comments, key order and every key the form
does not show (examples, measured:, fitted weights …) are kept; a key the form shows but did not change is not
rewritten. One thing ruamel cannot keep: a flow mapping ({…}) written over several lines comes back on one line
(the diff shown before saving says so). Validation is `rubriceval validate`'s, on the text
this produces (studio/workbench.py).
"""
from __future__ import annotations

import io
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricError

CheckKind = Literal["must_mention", "must_not_mention", "regex", "required_link", "max_length", "steps_in_order"]
# The fields each deterministic check kind is written with (the rest of a check, if any, is kept as it was).
CHECK_FIELDS: dict[str, tuple[str, ...]] = {
    "must_mention": ("phrases",), "must_not_mention": ("phrases",), "regex": ("pattern",),
    "required_link": ("url",), "max_length": ("max_chars",), "steps_in_order": ("steps",),
}
FORM_TYPES = {"judge", "checklist", *CHECK_FIELDS}


class CheckSpec(BaseModel):
    """One deterministic check as the form shows it: a kind, an id and its values (phrases, a pattern …)."""

    id: str
    type: CheckKind
    values: list[str] = Field(default_factory=list)     # phrases / steps, or [pattern], [link], [max chars]
    weight: float = 1.0


class RubricForm(BaseModel):
    id: str = ""
    name: str = ""
    language: Literal["zh", "en"] = "zh"
    description: str = ""
    criterion: str = ""
    levels: dict[int, str] = Field(default_factory=lambda: {level: "" for level in range(1, 6)})
    judge_sees: list[str] = Field(default_factory=lambda: ["question", "answer"])
    threshold: float = 4
    judge_mode: str = "holistic"
    questions: list[tuple[str, str]] = Field(default_factory=list)   # checklist: (id, yes/no question)
    level_rule: dict[int, str] = Field(default_factory=dict)         # checklist: level → condition
    checks: list[CheckSpec] = Field(default_factory=list)


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096          # keep one-line flow mappings (weights, measured rows) on one line
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_tree(text: str, name: str = "draft.yaml") -> Any:
    try:
        tree = _yaml().load(text) if text.strip() else None
    except Exception as exc:            # ruamel raises its own YAMLError subclasses with a mark
        mark = getattr(exc, "problem_mark", None)
        raise RubricError(f"not valid YAML: {getattr(exc, 'problem', exc)}", file=name,
                          line=mark.line + 1 if mark is not None else None) from None
    if tree is None:
        from ruamel.yaml.comments import CommentedMap

        tree = CommentedMap()
    if not hasattr(tree, "keys"):
        raise RubricError("a rubric file is a mapping of fields (id:, name:, criterion: …)", file=name, line=1)
    return tree


def form_from_yaml(text: str, name: str = "draft.yaml") -> RubricForm:
    """What the form shows of a rubric file (fields it does not show stay in the file)."""
    tree = load_tree(text, name)
    items = list(tree.get("items") or [])
    checklist = next((i for i in items if i.get("type") == "checklist"), None)
    checks = []
    for item in items:
        kind = item.get("type")
        if kind in CHECK_FIELDS:
            values = [str(v) for field in CHECK_FIELDS[kind] for v in _as_list(item.get(field))]
            checks.append(CheckSpec(id=str(item.get("id", kind)), type=kind, values=values,
                                    weight=float(item.get("weight", 1.0))))
    return RubricForm(
        id=str(tree.get("id", "")), name=str(tree.get("name", "")), language=tree.get("language", "zh"),
        description=str(tree.get("description", "")), criterion=str(tree.get("criterion", "")),
        levels={level: str((tree.get("score_descriptions") or {}).get(level, "")) for level in range(1, 6)},
        judge_sees=[str(f) for f in tree.get("judge_sees", ["question", "answer"])],
        threshold=float(tree.get("threshold", 4)), judge_mode=str(tree.get("judge_mode", "holistic")),
        questions=[(str(q.get("id", "")), str(q.get("ask", ""))) for q in (checklist or {}).get("questions", [])],
        level_rule={int(k): str(v) for k, v in ((checklist or {}).get("levels") or {}).items()},
        checks=checks)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _literal(text: str) -> Any:
    """A multi-line text written as a YAML block (|), as a lead would write a criterion by hand."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    return LiteralScalarString(text.rstrip() + "\n") if "\n" in text.strip() else text.strip()


def _check_item(spec: CheckSpec, kept: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap

    item = kept if kept is not None and kept.get("type") == spec.type else CommentedMap()
    item["id"], item["type"] = spec.id, spec.type
    field = CHECK_FIELDS[spec.type][0]
    values = [v.strip() for v in spec.values if v.strip()]
    if spec.type in ("regex", "required_link"):          # one pattern / one link
        item[field] = values[0] if values else ""
    elif spec.type == "max_length":
        item[field] = int(values[0]) if values and values[0].isdigit() else values[0] if values else 0
    else:
        item[field] = values
    if spec.weight != 1.0 or "weight" in item:
        item["weight"] = spec.weight
    return item


def _checklist_item(form: RubricForm, kept: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    checklist = kept if kept is not None else CommentedMap([("id", "checklist"), ("type", "checklist")])
    checklist["questions"] = CommentedSeq(CommentedMap([("id", qid), ("ask", ask)]) for qid, ask in form.questions)
    if form.level_rule:
        checklist["levels"] = CommentedMap(sorted(form.level_rule.items(), reverse=True))
    elif "levels" in checklist:
        del checklist["levels"]
    return checklist


def _write_items(tree: Any, form: RubricForm, shown: RubricForm) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    seq = tree.get("items")
    if seq is None:
        if not form.questions and not form.checks:
            return                              # the schema's default: one judge item
        seq = tree["items"] = CommentedSeq([CommentedMap([("id", "judge"), ("type", "judge")])])
    specs = {spec.id: spec for spec in form.checks}
    old_specs = {spec.id: spec for spec in shown.checks}
    for index in reversed(range(len(seq))):     # in place: the sequence keeps its comments and anchors
        item = seq[index]
        kind, item_id = item.get("type"), str(item.get("id"))
        if kind == "checklist":
            if not form.questions:
                del seq[index]
            elif (form.questions, form.level_rule) != (shown.questions, shown.level_rule):
                seq[index] = _checklist_item(form, item)
        elif kind in CHECK_FIELDS:
            if item_id not in specs:
                del seq[index]
            elif specs[item_id] != old_specs.get(item_id):
                seq[index] = _check_item(specs[item_id], item)
    if form.questions and not any(i.get("type") == "checklist" for i in seq):
        seq.append(_checklist_item(form, None))
    ids = {str(i.get("id")) for i in seq}
    seq.extend(_check_item(spec, None) for spec in form.checks if spec.id not in ids)


def yaml_from_form(form: RubricForm, base_text: str = "") -> str:
    """The form written into the rubric's YAML (a new file when base_text is empty): comments and every key the
    form does not show are kept; checklist and checks items are rewritten in the form's order, other items kept."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    tree = load_tree(base_text)
    shown = form_from_yaml(base_text) if base_text.strip() else None
    if shown is not None and form == shown:
        return base_text        # nothing edited: the file as written (ruamel would reflow a multi-line {…})

    def put(key: str, value: Any, changed: bool) -> None:      # a key the form shows unchanged stays as written
        if shown is None or changed:
            tree[key] = value

    put("id", form.id.strip(), shown is None or form.id != shown.id)
    put("name", form.name.strip(), shown is None or form.name != shown.name)
    put("language", form.language, shown is None or form.language != shown.language)
    if form.description.strip() or "description" in tree:
        put("description", form.description.strip(), shown is None or form.description != shown.description)
    put("criterion", _literal(form.criterion), shown is None or form.criterion != shown.criterion)
    levels = tree.get("score_descriptions") or CommentedMap()
    for level in range(1, 6):
        if shown is None or form.levels.get(level, "") != shown.levels.get(level, ""):
            levels[level] = form.levels.get(level, "").strip()
    tree["score_descriptions"] = levels
    put("judge_sees", CommentedSeq(form.judge_sees), shown is None or form.judge_sees != shown.judge_sees)
    threshold = int(form.threshold) if float(form.threshold).is_integer() else form.threshold
    put("threshold", threshold, shown is None or form.threshold != shown.threshold)
    if form.judge_mode != "holistic" or "judge_mode" in tree:
        put("judge_mode", form.judge_mode, shown is None or form.judge_mode != shown.judge_mode)
    _write_items(tree, form, shown or RubricForm())
    out = io.StringIO()
    _yaml().dump(tree, out)
    return out.getvalue()


def parse_lines(text: str, *, what: str) -> list[tuple[str, str]]:
    """'key: value' lines of a form's text box (questions 'id: question', level rule '5: condition')."""
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = re.match(r"^\s*([^:：]+?)\s*[:：]\s*(.+)$", line)
        if not match:
            raise RubricError(f"line {number} of {what} is not 'key: text'", field=what, line=number,
                              hint="one per line, e.g. 'asks_more: 是否询问了还有其他需要？'")
        pairs.append((match.group(1), match.group(2).strip()))
    return pairs
