"""The check-kind registry (issue 38.3) is the one list of check kinds: every other list — the rubric item union and
its JSON schema, the loader's hint, the scorecard's check types, the conversation/per-turn lints, the run functions,
the evidence wording (zh and en), the report's advice, the docs tables and the studio — agrees with it, and each
agreement is checked here against the registry (so a kind registered without its wording, advice or docs line fails,
as test_a_kind_registered_without_its_lists_is_named shows with a throwaway kind)."""
from __future__ import annotations

import ast
import importlib
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from rubriceval import Conversation, Sample
from rubriceval.checks import CHECKS, OCCURRENCES, run_check
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.i18n import LANGS, evidence_text
from rubriceval.i18n.evidence_text import EVIDENCE_TEXT
from rubriceval.i18n.report_text import CHECK_ACTIONS
from rubriceval.rubric import loader
from rubriceval.rubric.check_kinds import CheckKind, kind_names
from rubriceval.rubric.items import CHECK_KINDS, CONVERSATION_CHECKS, PER_TURN_CHECKS, CheckItem, Item
from rubriceval.rubric.schema import Rubric
from rubriceval.scorecard.schema import Scorecard
from rubriceval.validate.lint import scope_mismatches

ROOT = Path(__file__).resolve().parents[2]
CHECKS_DIR = ROOT / "rubriceval" / "checks"
KINDS = CHECK_KINDS
EV_KEY = re.compile(r"""["'](ev_[a-z_]+)["']""")


def _module_file(path: str) -> Path:
    return ROOT / (path.split(":")[0].replace(".", "/") + ".py")


def _keys_in(file: Path) -> set[str]:
    return set(EV_KEY.findall(file.read_text(encoding="utf-8")))


def _shared_wording() -> set[str]:
    """Keys written by the helper modules every kind goes through (per-turn forms, context conditions, roles)."""
    kind_files = {_module_file(k.run) for k in KINDS.values()}
    helpers = [f for f in CHECKS_DIR.glob("*.py") if f not in kind_files]
    return set().union(*(_keys_in(f) for f in helpers)) | {k for k in EVIDENCE_TEXT if k.startswith("ev_role_")}


# -- the consistency rules, each a function of the registry, so the throwaway-kind test runs the same ones ----------

def wording_problems(kinds: dict[str, CheckKind]) -> list[str]:
    problems = []
    for kind in kinds.values():
        problems += [f"{kind.name}: no {lang} text for {key}" for key in kind.wording for lang in LANGS
                     if not EVIDENCE_TEXT.get(key, {}).get(lang)]
        if not kind.wording:
            problems.append(f"{kind.name}: declares no evidence wording")
    by_file: dict[Path, set[str]] = {}
    for kind in kinds.values():
        by_file.setdefault(_module_file(kind.run), set()).update(kind.wording)
    for file, declared in by_file.items():
        undeclared = _keys_in(file) - declared - _shared_wording() if file.exists() else set()
        problems += [f"{file.name} writes {key}, which no kind it runs declares" for key in sorted(undeclared)]
    owned = set().union(*(k.wording for k in kinds.values())) | _shared_wording()
    problems += [f"{key} belongs to no check kind" for key in sorted(set(EVIDENCE_TEXT) - owned)]
    return problems


def advice_problems(kinds: dict[str, CheckKind]) -> list[str]:
    problems = [f"{name}: no {lang} advice in CHECK_ACTIONS" for name in kinds for lang in LANGS
                if not CHECK_ACTIONS.get(name, {}).get(lang)]
    return problems + [f"CHECK_ACTIONS has advice for unknown kind {name}"
                       for name in sorted(set(CHECK_ACTIONS) - set(kinds) - {"checklist"})]


def docs_problems(kinds: dict[str, CheckKind]) -> list[str]:
    problems = []
    for kind in kinds.values():
        rows = [line for line in (ROOT / "docs" / kind.docs).read_text(encoding="utf-8").splitlines()
                if line.startswith("|")]
        if not any(line.startswith(f"| `{kind.name}` |") for line in rows):
            problems.append(f"{kind.name}: no table row in docs/{kind.docs}")
        if not set(kind.form_fields) <= set(kind.model.model_fields):
            problems.append(f"{kind.name}: form fields {sorted(set(kind.form_fields) - set(kind.model.model_fields))} "
                            "are not fields of its model")
    # docs/rubrics.md sends the conversation kinds to conversations.md in one row: it names exactly them.
    row = next(line for line in (ROOT / "docs" / "rubrics.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `before`"))
    listed = re.findall(r"`(\w+)`", row.split("|")[1])
    wanted = [k.name for k in kinds.values() if k.scope == "conversation"]
    if listed != wanted:
        problems.append(f"docs/rubrics.md's conversation row lists {listed}, the registry {wanted}")
    # …and so does the README's sentence on them.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sentence = readme[readme.index("Conversations add "):].split(".\n")[0]
    in_readme = re.findall(r"`(\w+)`", sentence)
    if in_readme != wanted:
        problems.append(f"README's 'Conversations add' sentence lists {in_readme}")
    return problems


def test_every_kind_has_its_wording_in_both_languages_and_no_wording_is_orphaned():
    assert wording_problems(KINDS) == []


def test_every_kind_has_report_advice_in_both_languages():
    assert advice_problems(KINDS) == []


def test_every_kind_has_its_docs_line_and_its_form_fields_exist():
    assert docs_problems(KINDS) == []


def test_a_kind_registered_without_its_lists_is_named():
    """The rules above fail for a kind that exists only in the registry (no wording, advice, docs line)."""
    class Slow(BaseModel):
        type: typing.Literal["too_slow"]
        seconds: int

    ghost = CheckKind(name="too_slow", model=Slow, run="rubriceval.checks.too_slow:too_slow", scope="conversation",
                      wording=("ev_too_slow",), form_fields=("seconds", "minutes"), example={"seconds": 1})
    kinds = {**KINDS, "too_slow": ghost}
    assert "too_slow: no zh text for ev_too_slow" in wording_problems(kinds)
    assert "too_slow: no en advice in CHECK_ACTIONS" in advice_problems(kinds)
    problems = docs_problems(kinds)
    assert "too_slow: no table row in docs/rubrics.md" in problems
    assert "too_slow: form fields ['minutes'] are not fields of its model" in problems
    assert any("conversation row lists" in p for p in problems)
    assert any("README's 'Conversations add' sentence" in p for p in problems)


# -- the lists derived from the registry --------------------------------------------------------------------------

def test_each_registration_names_its_own_model_and_a_function_that_runs_it():
    for name, kind in KINDS.items():
        assert typing.get_args(kind.model.model_fields["type"].annotation) == (name,)
        assert CHECKS[name] is getattr(importlib.import_module(kind.run.split(":")[0]), kind.run.split(":")[1])
        assert ast.get_docstring(ast.parse(_module_file(kind.run).read_text(encoding="utf-8"))), kind.run
    assert set(CHECKS) == set(KINDS) and set(OCCURRENCES) == {n for n, k in KINDS.items() if k.occurrences}


def test_the_item_union_and_the_json_schema_are_the_registry():
    models = typing.get_args(typing.get_args(Item)[0])
    assert models[2:] == tuple(k.model for k in KINDS.values()) == typing.get_args(CheckItem)
    mapping = Rubric.model_json_schema()["properties"]["items"]["items"]["discriminator"]["mapping"]
    assert set(mapping) == {"judge", "checklist", *KINDS}


def test_the_kind_lists_of_the_lints_are_the_registry():
    assert CONVERSATION_CHECKS == kind_names("conversation")
    assert set(PER_TURN_CHECKS) == {n for n, k in KINDS.items() if k.per_turn}
    assert all("turns" in k.model.model_fields for k in KINDS.values() if k.per_turn)
    levels = {n: f"level {n}" for n in range(1, 6)}
    for scope in ("sample", "conversation"):
        rubric = Rubric.model_validate({
            "id": "r", "name": "r", "criterion": "c", "score_descriptions": levels, "scope": scope,
            "combine": {"rule": "min"},
            "items": [{"id": f"c{i}", "type": k.name, **k.example} for i, k in enumerate(KINDS.values())]})
        flagged = {rubric.items[path[1]].type for _, *path in scope_mismatches(rubric)}
        wrong_scope = {n for n, k in KINDS.items() if (k.scope == "conversation") == (scope == "sample")}
        assert flagged == wrong_scope, scope


def test_the_loader_and_the_scorecard_name_every_kind():
    hint = loader._HINTS["union_tag_invalid"]
    assert all(re.search(rf"\b{name}\b", hint) for name in KINDS)
    with pytest.raises(ValidationError) as no_type:
        Scorecard.model_validate({"id": "q", "name": "q", "dimensions": [{"id": "d"}],
                                  "items": [{"id": "i", "dimension": "d", "points": -1, "check": {"phrases": ["x"]}}]})
    said = str(no_type.value)
    assert all(re.search(rf"\b{name}\b", said) for name in kind_names(scorecard=True))


def _sample_for(kind: CheckKind) -> Sample:
    if kind.scope == "answer":
        return Sample(id="s", question="怎么退款？", answer="您好，退款请看 https://help.example.com/refund 。")
    return conversation_sample(Conversation(id="c", turns=[
        {"role": "user", "content": "在吗，还是不行", "timestamp": "2026-11-16T01:00:00Z"},
        {"role": "assistant", "content": "您好，抱歉，已为您转人工。还有什么可以帮您", "timestamp": "2026-11-16T01:00:30Z"}]))


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_example_validates_runs_and_is_worded_in_both_languages(name: str):
    kind = KINDS[name]
    item = TypeAdapter(Item).validate_python({"id": "x", "type": name, **kind.example})
    evidence = run_check(item, _sample_for(kind))
    assert evidence.message is not None and evidence.message.key in kind.wording + tuple(_shared_wording())
    assert evidence_text(evidence, "zh") != evidence_text(evidence, "en")
    if kind.scorecard:
        card = Scorecard.model_validate({"id": "q", "name": "q", "dimensions": [{"id": "d"}], "items": [
            {"id": "i", "dimension": "d", "points": -1, "check": {"type": name, **kind.example}}]})
        assert card.items[0].check_item.type == name


def test_the_studio_scorecard_form_offers_every_scorecard_kind():
    from rubriceval.studio.card_form import check_kinds

    kinds = check_kinds()
    assert set(kinds) == set(kind_names(scorecard=True))
    assert all(kinds[n][0] == KINDS[n].form_fields[0] or KINDS[n].form_fields[0] in kinds[n] for n in kinds)


def test_the_studio_rubric_form_edits_every_single_turn_kind_by_its_first_form_field():
    from rubriceval.studio.check_kinds import CHECK_FIELDS, SINGLE_VALUE_KINDS

    answer = {n: k for n, k in KINDS.items() if k.scope == "answer"}
    assert CHECK_FIELDS == {n: k.form_fields[:1] for n, k in answer.items()}
    assert SINGLE_VALUE_KINDS == {"regex", "required_link", "max_length"}


def test_the_studio_says_the_scorecard_check_type_message_in_chinese():
    """Its catalogue held the kinds typed again, and had drifted (no first_turn): the message stayed English."""
    from rubriceval.studio.messages import say_message

    with pytest.raises(ValidationError) as no_type:
        Scorecard.model_validate({"id": "q", "name": "q", "dimensions": [{"id": "d"}],
                                  "items": [{"id": "i", "dimension": "d", "points": -1, "check": {"phrases": ["x"]}}]})
    message = next(e["msg"] for e in no_type.value.errors()).removeprefix("Value error, ")
    said = say_message(message, "zh")
    assert said.startswith("检查需要类型（type），可用：") and all(name in said for name in kind_names(scorecard=True))


def _holds_predicate(annotation: object) -> bool:
    from rubriceval.rubric.predicate import Predicate

    return annotation is Predicate or any(_holds_predicate(a) for a in typing.get_args(annotation))


def test_every_predicate_field_is_registered_as_one_that_may_ask_the_judge():
    """item_questions (scoring/turn_questions.py) reads a kind's `asks`: a predicate field left out of it would ask
    the judge in a run yet never be planned by the dry run nor idled."""
    for name, kind in KINDS.items():
        fields = kind.model.model_fields
        holding = {f for f, info in fields.items() if _holds_predicate(info.annotation)}
        assert {f for f, _ in kind.asks} == holding, name
        assert all(whose in ("assistant", "user") or whose[1:] in fields for _, whose in kind.asks), name


@pytest.mark.parametrize("name", [n for n, k in KINDS.items() if k.asks])
def test_a_question_in_each_registered_field_is_found_with_its_roles(name: str):
    from rubriceval.scoring.turn_questions import item_questions

    kind = KINDS[name]
    asked = {field: {"ask": f"{field}?"} for field, _ in kind.asks}
    item = TypeAdapter(Item).validate_python({"id": "x", "type": name, **kind.example, **asked,
                                              **({"turns": "user"} if "turns" in kind.model.model_fields else {})})
    found = {p.ask: roles for p, roles in item_questions(item)}
    expected = {f"{field}?": ["user"] if whose == "@turns" else
                [whose] if not whose.startswith("@") else list(getattr(item, whose[1:]))
                for field, whose in kind.asks}
    assert found == expected
