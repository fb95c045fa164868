"""What a conversation check looks for in a turn, beyond literal phrases: a regular expression, built-in entities,
or a yes/no question the judge answers about that one turn.

Which fields are literal and which are regular expressions:
  * a plain string (`then: "收货地址是|实付"`) and every `phrases:` entry is LITERAL text; `|` separates synonyms;
    matching folds full-width characters and ignores case. `\\d{6,}` there would look for a backslash: it is
    refused with a hint to write `{regex: …}`.
  * `regex:` is a Python regular expression (searched, IGNORECASE unless the check is case-sensitive).
  * `entity:` names built-in detectors (rubriceval/safety/entities.py): order_number, tracking_number, money,
    address, phone, id_card, bank_card, email, date_time, url (or 订单号, 金额, 地址 …).
  * `ask:` a yes/no question about one turn, asked with the transcript up to that turn; the turn counts when
    p(yes) ≥ the cut-off (0.5, or `cutoff:` fitted by `rubriceval calibrate --fit-thresholds` for one judge).
A turn matches when ANY given form matches; the deterministic forms are tried first, and the question is asked only
when none of them matched — and not at all when the turn says one of the `unless:` phrases (literal, as above): such a
turn does not match (e.g. a brush-off 请耐心等待 with nothing concrete is never "concrete", whatever a lenient judge
would answer). `not_if:` phrases (literal) go further: a turn that says one matches only by the predicate's own
`phrases` — its entity and regex matches are overruled and the question is not asked (a rule quoted as an excuse,
按规定，开车前 24 小时内退票收 20%, shows a time but promises nothing).
"""
from __future__ import annotations

import re
from typing import overload

from pydantic import Field, field_validator, model_serializer, model_validator

from rubriceval.rubric.strict import StrictModel
from rubriceval.safety.entities import canonical_entity

DEFAULT_CUTOFF = 0.5
# Regex syntax that literal text almost never contains: an escape class, a quantifier, a wildcard run, a range.
_LOOKS_LIKE_REGEX = re.compile(r"\\[dDwWsSbB]|\{\d+(?:,\d*)?\}|\.[*+]|\[[^\]]*[\w]-[\w][^\]]*\]|^\^|\(\?")


def literal_phrase(value: str) -> str:
    """A literal phrase, refused when it reads as a regular expression (it would silently match nothing)."""
    if _LOOKS_LIKE_REGEX.search(value):
        raise ValueError(f"{value!r} is matched as literal text, but it looks like a regular expression; "
                         f"write it as {{regex: {value!r}}} (phrases are literal, '|' separates synonyms)")
    return value



@overload
def valid_regex(value: str) -> str: ...
@overload
def valid_regex(value: None) -> None: ...


def valid_regex(value: str | None) -> str | None:
    """The pattern, if Python's re compiles it (the one regex check of rubric fields)."""
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regex {value!r}: {exc}") from None
    return value

class FittedCutoff(StrictModel):
    """A question's p(yes) cut-off fitted to audited turns, for one judge (`rubriceval calibrate --fit-thresholds`).
    With another judge the default 0.5 applies."""

    value: float = Field(gt=0, lt=1)
    judge_model: str = Field(min_length=1)
    auc: float | None = None
    n_train: int = Field(ge=1)
    n_heldout: int = Field(ge=1)
    accuracy_heldout: float            # the fitted cut-off on held-out turns
    accuracy_default_heldout: float    # 0.5 on the same turns


class Predicate(StrictModel):
    """A turn shows this when any of the forms matches (see the module docstring)."""

    phrases: list[str] = Field(default_factory=list)
    regex: str | None = None
    entity: list[str] = Field(default_factory=list)
    min_kinds: int = Field(default=1, ge=1)    # entities: at least this many distinct kinds in the turn (2: "several
    #                                            order details at once")
    ask: str | None = Field(default=None, min_length=1)
    cutoff: FittedCutoff | None = None
    # Literal phrases that settle "no" before the question is asked (when no text form matched).
    unless: list[str] = Field(default_factory=list)
    # Literal phrases that overrule the entity and regex matches too (only `phrases` still match) and the question.
    not_if: list[str] = Field(default_factory=list)

    @field_validator("phrases", "unless", "not_if")
    @classmethod
    def _literal(cls, value: list[str]) -> list[str]:
        return [literal_phrase(v) for v in value]

    @model_serializer(mode="wrap")
    def _without_empty_unless(self, handler):
        # Left out while empty, so every rubric written before `unless` / `not_if` keeps its content hash (version tag).
        data = handler(self)
        if isinstance(data, dict):
            for name in ("unless", "not_if"):
                if not getattr(self, name):
                    data.pop(name, None)
        return data

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return valid_regex(value)

    @field_validator("entity", mode="before")
    @classmethod
    def _entities(cls, value):
        names = [value] if isinstance(value, str) else list(value or [])
        return [canonical_entity(str(name)) for name in names]

    @model_validator(mode="after")
    def _something(self) -> Predicate:
        if not (self.phrases or self.regex or self.entity or self.ask):
            raise ValueError("say what to look for: phrases, regex, entity and/or ask")
        if self.min_kinds > 1 and len(self.entity) < self.min_kinds:
            raise ValueError(f"min_kinds {self.min_kinds} needs at least that many entities")
        if self.cutoff is not None and not self.ask:
            raise ValueError("a cutoff applies to a question (ask)")
        if self.unless and not self.ask:
            raise ValueError("unless settles a question before it is asked: it needs ask")
        if self.not_if and not (self.regex or self.entity or self.ask):
            raise ValueError("not_if overrules entity, regex and question matches: it needs one of them")
        return self

    @property
    def deterministic(self) -> bool:
        return bool(self.phrases or self.regex or self.entity)

    def cutoff_for(self, judge_model: str | None) -> tuple[float, str]:
        """The cut-off this judge uses, and where it comes from."""
        if self.cutoff is not None and judge_model and self.cutoff.judge_model == judge_model:
            return self.cutoff.value, f"fitted for {judge_model}"
        if self.cutoff is not None:
            return DEFAULT_CUTOFF, f"default (cut-off fitted for judge '{self.cutoff.judge_model}')"
        return DEFAULT_CUTOFF, "default"

    def describe(self) -> str:
        """What the predicate looks for, as evidence names it."""
        parts = [" / ".join(a for p in self.phrases for a in p.split("|") if a.strip())] if self.phrases else []
        parts += [f"/{self.regex}/"] if self.regex else []
        kinds = [f"<{name}>" for name in self.entity]
        parts += kinds if self.min_kinds == 1 else [f"{self.min_kinds}+ of {' '.join(kinds)}"]
        parts += [self.ask] if self.ask else []
        unless = " / ".join(a for p in [*self.unless, *self.not_if] for a in p.split("|") if a.strip())
        return "“" + " | ".join(parts) + "”" + (f" (not when: {unless})" if unless else "")


Match = str | Predicate   # a plain string is literal phrases ('a|b' synonyms)


@overload
def as_predicate(value: Match) -> Predicate: ...
@overload
def as_predicate(value: None) -> None: ...
@overload
def as_predicate(value: Match | None) -> Predicate | None: ...


def as_predicate(value: Match | None) -> Predicate | None:
    if value is None or isinstance(value, Predicate):
        return value
    return Predicate(phrases=[value])


def literal_or_predicate(value):
    """Field validator body: a plain string must be literal text."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("empty phrase")
        literal_phrase(value)
    return value
