"""The studio's scorecard form (质检评分表 field by field) and the YAML it stands for.

As with rubrics (studio/form.py) the YAML stays the one source: the form reads the card's YAML tree (YAML → form on
load) and writes what a lead changed back into that tree (ruamel round trip), so comments, key order and keys the
form does not show (trust bars, review marks, applies_when.metadata …) are kept, and a field shown but not changed is
not rewritten. What the result means is decided by the scorecard loader alone (scorecard/loader.py and the schema's
ScorecardItem), on the text this produces — the form has no validation of its own beyond reading its text boxes.
"""
from __future__ import annotations

import json
import typing
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric.items import Item, ItemBase
from rubriceval.scorecard.predicate_kinds import PREDICATE_NAMES, PredicateName
from rubriceval.studio.form import load_tree, written_back

if TYPE_CHECKING:
    from rubriceval.i18n import Lang

Predicate = PredicateName      # the scorecard's predicate kinds (scorecard/predicate_kinds.py)
PREDICATES = PREDICATE_NAMES   # in the registry's order: the form's choice and its boxes
_BASE_FIELDS = set(ItemBase.model_fields)


def check_kinds() -> dict[str, list[str]]:
    """Every deterministic check kind a scorecard item may use, with the fields it is written with (from the
    rubric items' own models, so a new check kind shows up here by itself)."""
    kinds: dict[str, list[str]] = {}
    for model in typing.get_args(typing.get_args(Item)[0]):
        kind = typing.get_args(model.model_fields["type"].annotation)[0]
        if kind not in ("judge", "checklist"):
            own = [f for f in model.model_fields if f not in _BASE_FIELDS | {"type"}]
            kinds[kind] = sorted(own, key=lambda f: f.endswith("_context"))    # its own fields first
    return kinds


class CardHead(BaseModel):
    """The card's own fields as the form shows them; dimensions one per line: id | name | max deduction | max bonus."""

    id: str = ""
    name: str = ""
    base: int = 100
    pass_total: int | None = None
    dimensions: str = ""


class ItemForm(BaseModel):
    """One item as the form shows it (field order = the page's order). check_fields: one `key: value` per line, the
    value written as YAML/JSON (`phrases: ["您好|你好"]`, `max: 2`)."""

    id: str = ""
    name: str = ""
    dimension: str = ""
    description: str = ""
    predicate: Predicate = "question"
    check_type: str = ""
    check_fields: str = ""
    turns: Literal["", "assistant", "user"] = ""
    question: str = ""
    hit_on: Literal["", "yes", "no"] = ""
    rubric_id: str = ""
    min_score: int = 4
    points: int | None = None
    per: Literal["conversation", "occurrence"] = "conversation"
    cap: int | None = None
    fatal: bool = False
    when_tags: str = ""            # applies_when: comma-separated tags (any of them)
    when_intents: str = ""
    when_pattern: str = ""
    when_roles: list[str] = Field(default_factory=lambda: ["user", "assistant"])
    when_contexts: Literal["", "yes", "no"] = ""
    when_question: str = ""


ITEM_FIELDS = tuple(ItemForm.model_fields)


def _int(value: Any) -> int | None:
    """A number box's value as the integer it shows (anything else is left for the loader to refuse)."""
    if value is None or value == "":
        return None
    try:
        return int(value) if float(value).is_integer() else value
    except (TypeError, ValueError):
        return value


def _whole(value: Any) -> int | None:
    """A number read from the card's YAML for the form: a whole number, else None — the box shows it empty and the
    loader's report names the line (`points: x3`); an unchanged box never writes over what the file has."""
    number = _int(value)
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def item_form_of(values: dict[str, Any]) -> ItemForm:
    clean = {k: v for k, v in values.items() if v is not None or k in ("points", "cap")}
    for key in ("points", "cap", "min_score"):
        if key in clean:
            clean[key] = _int(clean[key])
    if clean.get("min_score") is None:
        clean.pop("min_score", None)
    try:
        return ItemForm.model_validate(clean)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise RubricEvalError(error["msg"], field=".".join(map(str, error["loc"]))) from None


def _dump_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)      # JSON is YAML: one spelling that reads back as written


def _lines(mapping: dict[str, Any], skip: set[str]) -> str:
    return "\n".join(f"{k}: {_dump_value(_plain(v))}" for k, v in mapping.items() if k not in skip)


def _plain(value: Any) -> Any:
    """ruamel's commented containers as plain lists and dicts (for JSON)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.replace("，", ",").split(",") if p.strip()]


def item_form_from_tree(entry: Any) -> ItemForm:
    """What the form shows of one item of the card's YAML."""
    entry = entry if isinstance(entry, dict) else {}
    check = entry.get("check") if isinstance(entry.get("check"), dict) else None
    rubric = entry.get("rubric") if isinstance(entry.get("rubric"), dict) else {}
    when = entry.get("applies_when") if isinstance(entry.get("applies_when"), dict) else {}
    predicate: Predicate = "check" if check is not None else "rubric" if entry.get("rubric") is not None else "question"
    turns = (check or {}).get("turns")
    hit_on = entry.get("hit_on")
    contexts = when.get("has_contexts")
    return ItemForm(
        id=str(entry.get("id", "")), name=str(entry.get("name", "") or ""), dimension=str(entry.get("dimension", "")),
        description=str(entry.get("description", "") or ""), predicate=predicate,
        check_type=str((check or {}).get("type", "")), check_fields=_lines(check or {}, {"type", "turns"}),
        turns="assistant" if turns == "assistant" else "user" if turns == "user" else "",
        question=str(entry.get("question") or ""),
        hit_on={True: "yes", False: "no"}.get(hit_on, hit_on) if hit_on in (True, False, "yes", "no") else "",
        rubric_id=str(rubric.get("id", "")), min_score=_whole(rubric.get("min_score", 4)) or 4,
        points=_whole(entry.get("points")), per=entry.get("per", "conversation") if entry.get("per") in (
            "conversation", "occurrence") else "conversation",
        cap=_whole(entry.get("cap")), fatal=entry.get("fatal") is True,
        when_tags=", ".join(map(str, when.get("tags") or [])),
        when_intents=", ".join(map(str, when.get("intents") or [])), when_pattern=str(when.get("pattern") or ""),
        when_roles=[str(r) for r in when.get("roles") or ["user", "assistant"]],
        when_contexts="" if contexts is None else "yes" if contexts else "no",
        when_question=str(when.get("question") or ""))


def head_from_tree(tree: Any) -> CardHead:
    dims = []
    for d in tree.get("dimensions") or []:
        if isinstance(d, dict):
            parts = [str(d.get("id", "")), str(d.get("name", "") or ""), str(d.get("max_deduction") or ""),
                     str(d.get("max_bonus") or "")]
            while parts and not parts[-1]:
                parts.pop()
            dims.append(" | ".join(parts))
    return CardHead(id=str(tree.get("id", "")), name=str(tree.get("name", "")),
                    base=_whole(tree.get("base", 100)) or 100, pass_total=_whole(tree.get("pass_total")),
                    dimensions="\n".join(dims))


class CardForm(BaseModel):
    head: CardHead
    items: list[ItemForm]


def card_form_from_yaml(text: str, name: str = "scorecard.yaml") -> CardForm:
    tree = load_tree(text, name)
    items = tree.get("items") if isinstance(tree.get("items"), list) else []
    return CardForm(head=head_from_tree(tree), items=[item_form_from_tree(e) for e in items])


def _dump(tree: Any, text: str = "") -> str:
    """The edited tree as text: only the lines the edit changed (studio/form.written_back)."""
    return written_back(text, tree)


def _flow(mapping: dict[str, Any]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    flow = CommentedMap(mapping)
    flow.fa.set_flow_style()
    return flow


def _set(node: Any, key: str, value: Any) -> None:
    """None removes the key; a value equal to what is written is left as written (quotes and all)."""
    if value is None:
        node.pop(key, None)
    elif node.get(key) != value or key not in node:
        node[key] = value


def _parse_check_fields(text: str) -> dict[str, Any]:
    from ruamel.yaml import YAML

    fields: dict[str, Any] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            raise RubricEvalError(f"line {number} of the check fields is not 'key: value'", field="check_fields",
                                  line=number, hint='e.g. phrases: ["您好|你好"] or max: 2')
        try:
            fields[key.strip()] = YAML(typ="safe").load(value.strip()) if value.strip() else ""
        except Exception:                      # ruamel's parse errors: say which line, not a traceback
            raise RubricEvalError(f"line {number} of the check fields: the value is not valid YAML",
                                  field="check_fields", line=number, hint='quote text: phrases: ["a|b"]') from None
    return fields


def _write_item(entry: Any, new: ItemForm, old: ItemForm) -> None:
    for key in ("id", "name", "dimension", "description"):
        if getattr(new, key) != getattr(old, key):
            _set(entry, key, getattr(new, key).strip() or (None if key in ("name", "description") else ""))
    for key in ("points", "cap"):
        if getattr(new, key) != getattr(old, key):
            _set(entry, key, getattr(new, key))
    if new.per != old.per:
        _set(entry, "per", None if new.per == "conversation" and "per" not in entry else new.per)
    if new.fatal != old.fatal:
        _set(entry, "fatal", True if new.fatal else (False if "fatal" in entry else None))
    _write_predicate(entry, new, old)
    _write_applies_when(entry, new, old)


def _write_predicate(entry: Any, new: ItemForm, old: ItemForm) -> None:
    if new.predicate != "check":
        entry.pop("check", None)
    if new.predicate != "question":
        # examples and calibration are a question's (its 示例 and cut-offs): they go with it
        for key in ("question", "hit_on", "judge_sees_knowledge", "examples", "calibration"):
            entry.pop(key, None)
    if new.predicate != "rubric":
        entry.pop("rubric", None)
    same = new.predicate == old.predicate
    if new.predicate == "check" and not (same and (new.check_type, new.check_fields, new.turns) == (
            old.check_type, old.check_fields, old.turns)):
        fields = {"type": new.check_type.strip(), **_parse_check_fields(new.check_fields)}
        if new.turns:
            fields["turns"] = new.turns
        _set(entry, "check", _flow(fields))
    elif new.predicate == "question":
        if not same or new.question != old.question:
            _set(entry, "question", new.question.strip())
        if not same or new.hit_on != old.hit_on:
            _set(entry, "hit_on", new.hit_on or None)
    elif new.predicate == "rubric" and not (same and (new.rubric_id, new.min_score) == (old.rubric_id,
                                                                                        old.min_score)):
        _set(entry, "rubric", _flow({"id": new.rubric_id.strip(), "min_score": new.min_score}))


def _write_applies_when(entry: Any, new: ItemForm, old: ItemForm) -> None:
    keys = ("when_tags", "when_intents", "when_pattern", "when_roles", "when_contexts", "when_question")
    if all(getattr(new, k) == getattr(old, k) for k in keys):
        return
    when = entry.get("applies_when") if isinstance(entry.get("applies_when"), dict) else _flow({})
    _set(when, "tags", _split(new.when_tags) or None)
    _set(when, "intents", _split(new.when_intents) or None)
    _set(when, "pattern", new.when_pattern.strip() or None)
    roles = list(new.when_roles)
    _set(when, "roles", None if sorted(roles) == ["assistant", "user"] and "roles" not in when else roles)
    _set(when, "has_contexts", {"": None, "yes": True, "no": False}[new.when_contexts])
    _set(when, "question", new.when_question.strip() or None)
    if not new.when_question.strip():
        for key in ("examples", "calibration"):      # the applies question's own; they go with it
            when.pop(key, None)
    if len(when) == 0 or set(when) == {"roles"}:
        entry.pop("applies_when", None)       # no condition left: the item always applies
    else:
        entry["applies_when"] = when


def yaml_with_item(text: str, item: ItemForm, replacing: str | None, name: str = "scorecard.yaml") -> str:
    """The card's YAML with `item` written over the item `replacing` (its old id), or added at the end."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    tree = load_tree(text, name)
    seq = tree.get("items")
    if not isinstance(seq, list):
        seq = tree["items"] = CommentedSeq()
    index = next((i for i, e in enumerate(seq) if isinstance(e, dict) and replacing and str(e.get("id")) == replacing),
                 None)
    if index is None:
        entry = CommentedMap([("id", item.id.strip()), *([("name", item.name.strip())] if item.name.strip() else []),
                              ("dimension", item.dimension.strip())])
        _write_item(entry, item, ItemForm(id=item.id, dimension=item.dimension, predicate="check" if
                                          item.predicate != "check" else "question"))
        seq.append(entry)
    else:
        shown = item_form_from_tree(seq[index])
        if item == shown:
            return text         # nothing edited: the file as written (ruamel would reflow a multi-line {…})
        _write_item(seq[index], item, shown)
    return _dump(tree, text)


def yaml_without_item(text: str, item_id: str, name: str = "scorecard.yaml") -> str:
    tree = load_tree(text, name)
    seq = tree.get("items") if isinstance(tree.get("items"), list) else []
    found = [i for i, e in enumerate(seq) if isinstance(e, dict) and str(e.get("id")) == item_id]
    if not found:
        raise RubricEvalError(f"the scorecard has no item '{item_id}'", file=name, field="items")
    del seq[found[0]]
    return _dump(tree, text)


def _dimension_rows(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("|")]
        row: dict[str, Any] = {"id": parts[0]}
        for key, value in zip(("name", "max_deduction", "max_bonus"), parts[1:]):
            if value:
                row[key] = _int(value) if key != "name" else value
        rows.append(row)
    return rows


def yaml_with_head(text: str, head: CardHead, name: str = "scorecard.yaml") -> str:
    """The card's YAML with its id, name, base, pass line and dimensions as the form shows them (a dimension kept
    by id keeps its own writing; the list follows the form's order)."""
    tree = load_tree(text, name)
    old = head_from_tree(tree)
    if head == old:
        return text
    for key in ("id", "name", "base", "pass_total"):
        if getattr(head, key) != getattr(old, key):
            value = getattr(head, key)
            _set(tree, key, value.strip() if isinstance(value, str) else value)
    if head.dimensions != old.dimensions:
        kept = {str(d.get("id")): d for d in tree.get("dimensions") or [] if isinstance(d, dict)}
        dims = []
        for row in _dimension_rows(head.dimensions):
            node = kept.get(row["id"]) or _flow({"id": row["id"]})
            for key in ("name", "max_deduction", "max_bonus"):
                _set(node, key, row.get(key))
            dims.append(node)
        from ruamel.yaml.comments import CommentedSeq

        seq = tree.get("dimensions") if isinstance(tree.get("dimensions"), CommentedSeq) else CommentedSeq()
        seq[:] = dims
        tree["dimensions"] = seq
    return _dump(tree, text)


def item_rows(form: CardForm, lang: Lang = "en") -> list[list[Any]]:
    """The overview table: one row per item, how it is counted said in the page's language."""
    from rubriceval.i18n import t

    rows = []
    for item in form.items:
        predicate = {"check": f"check: {item.check_type}" + (f" ({item.turns})" if item.turns else ""),
                     "question": f"question: {item.question}",          # as the YAML says it
                     "rubric": f"rubric: {item.rubric_id} < {item.min_score}"}[item.predicate]
        when = "; ".join(x for x in (item.when_tags and f"tags: {item.when_tags}",
                                     item.when_intents and f"intents: {item.when_intents}",
                                     item.when_pattern and f"pattern: {item.when_pattern}",
                                     item.when_contexts and f"has_contexts: {item.when_contexts}",
                                     item.when_question and f"question: {item.when_question}") if x)
        count = t("studio_card_once", lang) if item.per == "conversation" else t(
            "studio_card_per_capped", lang, cap=item.cap) if item.cap else t("studio_card_per_each", lang)
        rows.append([item.id, item.dimension, item.name, predicate, item.points, count, "✔" if item.fatal else "",
                     when])
    return rows
