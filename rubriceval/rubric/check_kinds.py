"""The check-kind registry: one typed record per deterministic check kind, the single table every other list of check
kinds is derived from — the rubric item union and the loader's hint (rubric/items.py, rubric/loader.py), the
scorecard's check types (scorecard/schema.py), the conversation/per-turn lints (validate/lint.py), the function that
runs each kind (checks/__init__.py) and the studio's check forms. tests/checks/test_check_registry.py fails when the
wording tables, the report's advice, the docs tables or the studio disagree with it.

A kind registers where its item model is declared, with `@check_kind(...)` on the model class (the model's
`type: Literal[...]` names the kind). Its run function is named by import path, "module:function" under
rubriceval.checks: the spec layer states which function runs a kind without importing the layer that runs it
(checks/ imports rubric/, never the other way round). Adding a kind: its model and registration here in the spec
layer, one module in rubriceval/checks/, its wording (i18n/evidence_text.py) and advice (i18n/report_text.py), its
tests and its docs line."""
from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

Scope = Literal["answer", "conversation"]
AskedTurns = Literal["each", "first", "last"]
ModelT = TypeVar("ModelT", bound=type[BaseModel])


@dataclass(frozen=True)
class CheckKind:
    """One deterministic check kind, as everything that lists check kinds reads it."""

    name: str                         # the `type:` written in YAML
    model: type[BaseModel]            # the pydantic item model (rubric/items.py)
    run: str                          # "module:function" under rubriceval.checks: (item, sample) -> Evidence
    scope: Scope                      # answer: a single-turn sample's field; conversation: reads the turns
    wording: tuple[str, ...]          # its evidence messages (i18n/evidence_text.py keys, zh and en)
    form_fields: tuple[str, ...]      # the fields a form shows for it, the main one first
    example: dict[str, Any]           # a minimal valid check without id/type: the tests run it, a form starts from it
    per_turn: bool = False            # an answer check that also runs on every turn of a role (`turns: assistant`)
    scorecard: bool = True            # may be a scorecard item's `check:` predicate
    # "module:function" listing each failing occurrence as its own Evidence ((item, sample) -> list[Evidence]), for
    # a scorecard's `per: occurrence` without `turns:` (a per-turn check's occurrences are its failing turns).
    occurrences: str | None = None
    docs: str = "rubrics.md"          # the docs/ page whose item table has its line
    # Its fields that hold a predicate, which may ask the judge about a turn (`ask:`), each with whose turns: a role,
    # or "@<field>" — the item's field naming the role(s) (none given: the assistant's).
    asks: tuple[tuple[str, str], ...] = ()
    asked_turns: AskedTurns = "each"  # which of those turns: each, or only the first / last assistant turn

    @property
    def counts_occurrences(self) -> bool:
        return self.occurrences is not None


# Filled by the @check_kind decorators of rubric/items.py as it is imported: read it from there
# (`from rubriceval.rubric.items import CHECK_KINDS`), where every built-in kind is registered by then.
CHECK_KINDS: dict[str, CheckKind] = {}


def check_kind(*, run: str, scope: Scope, wording: tuple[str, ...], form_fields: tuple[str, ...],
               example: dict[str, Any], per_turn: bool = False, scorecard: bool = True, occurrences: str | None = None,
               docs: str | None = None, asks: tuple[tuple[str, str], ...] = (),
               asked_turns: AskedTurns = "each") -> Callable[[ModelT], ModelT]:
    """Class decorator registering an item model as a check kind (its name: the model's `type` literal)."""
    def register(model: ModelT) -> ModelT:
        name = kind_of(model)
        if name in CHECK_KINDS:
            raise ValueError(f"check kind '{name}' is registered twice ({CHECK_KINDS[name].model.__name__}, "
                             f"{model.__name__})")
        if not run.startswith("rubriceval.checks.") or ":" not in run:
            raise ValueError(f"check kind '{name}': run must be 'rubriceval.checks.<module>:<function>', got {run!r}")
        CHECK_KINDS[name] = CheckKind(
            name=name, model=model, run=run, scope=scope, wording=wording, form_fields=form_fields,
            example=example, per_turn=per_turn, scorecard=scorecard, occurrences=occurrences, asks=asks,
            asked_turns=asked_turns,
            docs=docs or ("conversations.md" if scope == "conversation" else "rubrics.md"))
        return model
    return register


def kind_of(model: type[BaseModel]) -> str:
    """The `type:` literal an item model is written with."""
    return typing.get_args(model.model_fields["type"].annotation)[0]


def kind_names(scope: Scope | None = None, *, scorecard: bool | None = None) -> tuple[str, ...]:
    """Registered kinds in registration order, optionally of one scope / usable on a scorecard."""
    return tuple(k.name for k in CHECK_KINDS.values()
                 if (scope is None or k.scope == scope) and (scorecard is None or k.scorecard == scorecard))


def conversation_kinds() -> tuple[str, ...]:
    """Checks that only make sense over a conversation's turns."""
    return kind_names("conversation")


def per_turn_kinds() -> tuple[str, ...]:
    """Answer checks that have a per-turn form (`turns: assistant`)."""
    return tuple(k.name for k in CHECK_KINDS.values() if k.per_turn)


def listed(names: typing.Iterable[str], last: str = "or") -> str:
    """'a, b or c': how messages list kinds."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"
