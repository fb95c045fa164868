"""The studio's rubric form and the YAML it stands for.

The YAML stays the single source of truth: the form edits the keys a QA lead writes by hand (name, criterion, five
level descriptions, what the judge sees, when the rubric applies, checklist questions and their level rule,
deterministic checks) and is written back into the file's own YAML tree (ruamel.yaml round trip), so comments, key
order, anchors and merge keys, and every key the form does not show (examples, measured:, weights, a check's
`must:` …) are kept; a field the form shows but did not change is not rewritten, and a form equal to what was shown
gives the file's text unchanged, byte for byte. Checks are edited in the checks box (studio/check_text.py): one value
per line, a phrase's `|` alternatives one per line too; a check the box cannot show as written is left to the raw
YAML editor and never rewritten here. One thing ruamel cannot keep: a flow mapping ({…}) written over several lines
comes back on one line when its item is edited (the diff shown before saving says so). Validation is `rubriceval
validate`'s, on the text this produces (studio/workbench.py).
"""
from __future__ import annotations

import io
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricError, RubricEvalError
from rubriceval.studio.check_kinds import CHECK_FIELDS, SINGLE_VALUE_KINDS
from rubriceval.studio.check_text import CheckSpec, normalise_phrase, spec_of, unfaithful

__all__ = ["CHECK_FIELDS", "CheckSpec", "RubricForm", "form_from_yaml", "yaml_from_form", "load_tree",
           "parse_lines", "readonly_checks"]
FORM_TYPES = {"judge", "checklist", *CHECK_FIELDS}
APPLIES_KEYS = {"applies_tags": "tags", "applies_intents": "intents", "applies_pattern": "question_pattern",
                "applies_languages": "languages"}


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
    applies_tags: list[str] = Field(default_factory=list)       # applies_to: (empty: every sample)
    applies_intents: list[str] = Field(default_factory=list)
    applies_pattern: str = ""
    applies_languages: list[str] = Field(default_factory=list)
    questions: list[tuple[str, str]] = Field(default_factory=list)   # checklist: (id, yes/no question)
    level_rule: dict[int, str] = Field(default_factory=dict)         # checklist: level → condition
    checks: list[CheckSpec] = Field(default_factory=list)            # the checks the box shows (studio/check_text)

    def changed(self, shown: RubricForm, field: str) -> bool:
        """Whether the lead changed `field` (text compared as the box shows it, without surrounding blanks)."""
        new, old = getattr(self, field), getattr(shown, field)
        if field == "checks":
            return len(new) != len(old) or not all(a.same_as(b) for a, b in zip(new, old))
        if field == "levels":
            return any(_text(new.get(k)) != _text(old.get(k)) for k in range(1, 6))
        if field == "threshold":
            return float(new) != float(old)
        if isinstance(new, str):
            return _text(new) != _text(old)
        return new != old

    def same_as(self, shown: RubricForm) -> bool:
        return not any(self.changed(shown, field) for field in type(self).model_fields)


def _text(value: Any) -> str:
    return str(value or "").strip()


def round_trip_yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096          # keep one-line flow mappings (weights, measured rows) on one line
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_tree(text: str, name: str = "draft.yaml") -> Any:
    try:
        tree = round_trip_yaml().load(text) if text.strip() else None
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


def _items(tree: Any) -> list[Any]:
    items = tree.get("items")
    return [i for i in items if hasattr(i, "get")] if isinstance(items, list) else []


def _line(node: Any, key: Any) -> int | None:
    try:
        return node.lc.key(key)[0] + 1
    except Exception:                   # not a commented node, or the key has no recorded position
        return None


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [] if value is None else [str(value)]


def form_from_yaml(text: str, name: str = "draft.yaml") -> RubricForm:
    """What the form shows of a rubric file (fields it does not show stay in the file). A file the form cannot read
    raises a user error naming its line; the page then shows it in the raw YAML editor."""
    tree = load_tree(text, name)
    items = _items(tree)
    checklist = next((i for i in items if i.get("type") == "checklist"), None) or {}
    when = tree.get("applies_to") if hasattr(tree.get("applies_to"), "get") else {}
    try:
        threshold = float(tree.get("threshold", 4))
    except (TypeError, ValueError):
        raise RubricEvalError("the form reads threshold as a number", file=name, line=_line(tree, "threshold"),
                              field="threshold", hint="correct it in the YAML editor") from None
    questions = []
    for number, question in enumerate(checklist.get("questions") or [], start=1):
        ask = str(question.get("ask", "")) if hasattr(question, "get") else ""
        if not hasattr(question, "get") or "\n" in ask.strip() or ":" in str(question.get("id", "")):
            raise RubricEvalError(f"the form cannot show checklist question {number}", file=name,
                                  line=_line(checklist.get("questions"), number - 1), field="questions",
                                  hint="correct it in the YAML editor")
        questions.append((str(question.get("id", "")), ask))
    levels = tree.get("score_descriptions") if hasattr(tree.get("score_descriptions"), "get") else {}
    rule_node = checklist.get("levels")
    rule = rule_node if rule_node is not None and hasattr(rule_node, "items") else {}
    return RubricForm(
        id=str(tree.get("id", "") or ""), name=str(tree.get("name", "") or ""),
        language="en" if tree.get("language") == "en" else "zh",
        description=str(tree.get("description", "") or ""), criterion=str(tree.get("criterion", "") or ""),
        levels={level: str(levels.get(level, "") or "") for level in range(1, 6)},
        judge_sees=_strings(tree.get("judge_sees", ["question", "answer"])), threshold=threshold,
        judge_mode=str(tree.get("judge_mode", "holistic")),
        applies_tags=_strings(when.get("tags")), applies_intents=_strings(when.get("intents")),
        applies_pattern=str(when.get("question_pattern") or ""), applies_languages=_strings(when.get("languages")),
        questions=questions, level_rule={int(k): str(v) for k, v in rule.items() if str(k).isdigit()},
        checks=[spec_of(i) for i in items if i.get("type") in CHECK_FIELDS and unfaithful(i) is None])


def readonly_checks(text: str) -> list[tuple[str, str, int | None]]:
    """(id, why — a `studio_ro_` text key —, line) of every check the form leaves to the raw YAML editor."""
    tree = load_tree(text)
    seq = tree.get("items") if isinstance(tree.get("items"), list) else []
    found = []
    for index, item in enumerate(seq):
        if hasattr(item, "get") and item.get("type") not in ("judge", "checklist"):
            why = unfaithful(item)
            if why is not None:
                found.append((str(item.get("id", "")), why, _line(seq, index)))
    return found


def _literal(text: str) -> Any:
    """A multi-line text written as a YAML block (|), as a lead would write a criterion by hand."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    return LiteralScalarString(text.rstrip() + "\n") if "\n" in text.strip() else text.strip()


def _flow_seq(values: list[Any], like: Any = None) -> Any:
    from ruamel.yaml.comments import CommentedSeq

    seq = CommentedSeq(values)
    if like is None or getattr(getattr(like, "fa", None), "flow_style", lambda: True)():
        seq.fa.set_flow_style()
    return seq


def _field_value(spec: CheckSpec, old: Any) -> Any:
    """The check's value as the YAML writes it, keeping the old writing (quotes, flow style) of what did not change."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    values = [v.strip() for v in spec.values if v.strip()]
    if spec.type == "max_length":
        if len(values) != 1 or not values[0].isdigit():
            raise RubricEvalError(f"check '{spec.id}': max_length takes one whole number (the most characters)",
                                  field="checks", hint="e.g. '  - 400'")
        return int(values[0])
    if spec.type in SINGLE_VALUE_KINDS:
        value = values[0] if values else ""
        return old if isinstance(old, str) and old.strip() == value else value
    olds = [o for o in old if isinstance(o, str)] if isinstance(old, list) else []
    kept = {normalise_phrase(o): o for o in olds}
    quoted = not olds or all(isinstance(o, DoubleQuotedScalarString) for o in olds)
    return _flow_seq([kept.get(normalise_phrase(v)) or (DoubleQuotedScalarString(v) if quoted else v)
                      for v in values], old)


def _write_check(item: Any, spec: CheckSpec) -> None:
    field = CHECK_FIELDS[spec.type][0]
    old_kind = item.get("type")
    if old_kind != spec.type:
        item["type"] = spec.type
        if old_kind in CHECK_FIELDS and CHECK_FIELDS[old_kind][0] != field:
            item.pop(CHECK_FIELDS[old_kind][0], None)
    value = _field_value(spec, item.get(field) if old_kind == spec.type else None)
    if spec.type == "required_link" and value == "":
        item.pop(field, None)            # no url: any link will do
    elif item.get(field) is not value:
        item[field] = value


def _new_check(spec: CheckSpec) -> Any:
    from ruamel.yaml.comments import CommentedMap

    item = CommentedMap([("id", spec.id), ("type", spec.type)])
    _write_check(item, spec)
    return item


def _write_checklist(form: RubricForm, shown: RubricForm, kept: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    checklist = kept if kept is not None else CommentedMap([("id", "checklist"), ("type", "checklist")])
    if form.questions != shown.questions:
        old = {str(q.get("id")): q for q in checklist.get("questions") or [] if hasattr(q, "get")}
        questions = []
        for qid, ask in form.questions:      # a question kept by id keeps its other keys (weight …) and writing
            node = old.get(qid) or _flow_map([("id", qid), ("ask", ask)])
            if str(node.get("ask")) != ask:
                node["ask"] = ask
            questions.append(node)
        seq = checklist.get("questions") if isinstance(checklist.get("questions"), CommentedSeq) else CommentedSeq()
        seq[:] = questions
        checklist["questions"] = seq
    if form.level_rule != shown.level_rule:
        if not form.level_rule:
            checklist.pop("levels", None)
        else:
            levels = checklist.get("levels") if hasattr(checklist.get("levels"), "get") else CommentedMap()
            for level in [k for k in levels if k not in form.level_rule]:
                del levels[level]
            for level, rule in sorted(form.level_rule.items(), reverse=True):
                if str(levels.get(level)) != rule:
                    levels[level] = rule
            checklist["levels"] = levels
    return checklist


def _flow_map(pairs: list[tuple[str, Any]]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    node = CommentedMap(pairs)
    node.fa.set_flow_style()
    return node


def _write_items(tree: Any, form: RubricForm, shown: RubricForm) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    seq = tree.get("items")
    if not isinstance(seq, list):
        if not form.questions and not form.checks:
            return                              # the schema's default: one judge item
        seq = tree["items"] = CommentedSeq([CommentedMap([("id", "judge"), ("type", "judge")])])
    specs = {spec.id: spec for spec in form.checks}
    old_specs = {spec.id: spec for spec in shown.checks}
    for index in reversed(range(len(seq))):     # in place: the sequence keeps its comments and anchors
        item = seq[index]
        if not hasattr(item, "get"):
            continue
        kind, item_id = item.get("type"), str(item.get("id"))
        if kind == "checklist":
            if not form.questions:
                del seq[index]
            elif (form.questions, form.level_rule) != (shown.questions, shown.level_rule):
                _write_checklist(form, shown, item)
        elif kind in CHECK_FIELDS and item_id in old_specs and unfaithful(item) is None:
            if item_id not in specs:
                del seq[index]
            elif not specs[item_id].same_as(old_specs[item_id]):
                _write_check(item, specs[item_id])
    if form.questions and not any(hasattr(i, "get") and i.get("type") == "checklist" for i in seq):
        seq.append(_write_checklist(form, RubricForm(), None))
    ids = {str(i.get("id")) for i in seq if hasattr(i, "get")}
    clash = [spec.id for spec in form.checks if spec.id in ids and spec.id not in old_specs]
    if clash:
        raise RubricEvalError(f"the rubric already has an item with id '{clash[0]}'", field="checks",
                              hint="give the new check another id")
    seq.extend(_new_check(spec) for spec in form.checks if spec.id not in ids)


def _write_applies_to(tree: Any, form: RubricForm, shown: RubricForm) -> None:
    from ruamel.yaml.comments import CommentedMap

    changed = [f for f in APPLIES_KEYS if form.changed(shown, f)]
    if not changed:
        return
    when = tree.get("applies_to") if hasattr(tree.get("applies_to"), "get") else CommentedMap()
    for field in changed:
        value = getattr(form, field)
        key = APPLIES_KEYS[field]
        if isinstance(value, list):
            value = [v.strip() for v in value if v.strip()]
            if value:
                when[key] = _flow_seq(value, when.get(key))
            else:
                when.pop(key, None)
        elif value.strip():
            when[key] = value.strip()
        else:
            when.pop(key, None)
    if len(when):
        tree["applies_to"] = when
    else:
        tree.pop("applies_to", None)


def yaml_from_form(form: RubricForm, base_text: str = "") -> str:
    """The form written into the rubric's YAML (a new file when base_text is empty): comments and every key the
    form does not show are kept; only what the lead changed is written."""
    from ruamel.yaml.comments import CommentedMap

    tree = load_tree(base_text)
    new = not base_text.strip()
    shown = RubricForm() if new else form_from_yaml(base_text)
    if not new and form.same_as(shown):
        return base_text        # nothing edited: the file as written, byte for byte

    def changed(field: str) -> bool:        # a new file is written whole
        return new or form.changed(shown, field)

    for key in ("id", "name", "language", "description"):
        if changed(key) and (key != "description" or _text(form.description) or key in tree):
            tree[key] = _text(getattr(form, key))
    if changed("criterion"):
        tree["criterion"] = _literal(form.criterion)
    if changed("levels"):
        levels = tree.get("score_descriptions") if hasattr(tree.get("score_descriptions"), "get") else None
        if levels is None:
            levels = tree["score_descriptions"] = CommentedMap()
        for level in range(1, 6):
            if new or _text(form.levels.get(level)) != _text(shown.levels.get(level)):
                levels[level] = _text(form.levels.get(level))
    if changed("judge_sees"):
        tree["judge_sees"] = _flow_seq(list(form.judge_sees), tree.get("judge_sees"))
    if changed("threshold"):
        tree["threshold"] = int(form.threshold) if float(form.threshold).is_integer() else form.threshold
    if changed("judge_mode") and (form.judge_mode != "holistic" or "judge_mode" in tree):
        tree["judge_mode"] = form.judge_mode
    _write_applies_to(tree, form, shown)
    _write_items(tree, form, shown)
    return written_back(base_text, tree)


def dump(tree: Any) -> str:
    out = io.StringIO()
    round_trip_yaml().dump(tree, out)
    return out.getvalue()


def written_back(text: str, tree: Any) -> str:
    """The edited tree as text, changing only the lines the edit changed. ruamel writes back what it read, except
    that a flow mapping ({…}) written over several lines comes back on one line: the edit is the difference between
    the dumps of the tree as read and as edited, and that difference is applied to the file's own lines. An edit
    inside such a reflowed mapping cannot be placed there; then the whole dump is the answer (the diff shown before
    saving says so)."""
    import difflib

    edited = dump(tree)
    if not text.strip():
        return edited
    original, before, after = (x.splitlines(keepends=True) for x in (text, dump(load_tree(text)), edited))
    where: dict[int, int] = {}              # a line of the dump as read → the same line of the file
    for block in difflib.SequenceMatcher(None, before, original, autojunk=False).get_matching_blocks():
        where.update({block.a + k: block.b + k for k in range(block.size)})
    lines = list(original)
    for tag, i1, i2, j1, j2 in reversed(difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()):
        if tag == "equal":
            continue
        if i1 == i2:                        # an insertion: between two lines both placed, next to each other
            if i1 in where and (i1 == 0 or where.get(i1 - 1) == where[i1] - 1):
                start = end = where[i1]
            elif i1 - 1 in where and i1 == len(before):
                start = end = where[i1 - 1] + 1
            else:
                return edited
        else:
            if not all(where.get(i) == where.get(i1, -1) + (i - i1) for i in range(i1, i2)):
                return edited
            start, end = where[i1], where[i1] + (i2 - i1)
        lines[start:end] = after[j1:j2]
    return "".join(lines)


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
