"""The scorecard schema (质检评分表): a base (100), dimensions, and items that each carry a predicate and points.

An item is a predicate plus its points:

* predicate — exactly one of `check:` (any deterministic check kind of rubriceval/checks/, single-turn, per-turn
  with `turns: assistant`, or cross-turn), `question:` (a yes/no question to the judge, asked the checklist way),
  or `rubric:` (a rubric of the same run, hit when its score is below `min_score`);
* points — an exact integer: negative is a deduction (扣分 −3), positive a bonus (+2); `per: occurrence` counts
  every failing turn of a per-turn check, or every occurrence of a check kind that lists them (response_time's late
  replies; rubriceval/rubric/check_kinds.py), capped by `cap`; `fatal: true` (一票否决) makes the total 0.

When the item is "hit": a check that fails, a rubric below its minimum, a question answered `hit_on` (default: `no`
for deductions and fatal items — the question asks whether the standard was met —, `yes` for bonuses). A bonus item
with a check is hit when the check passes. `applies_when` decides N/A: every condition given must hold.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import Field, PrivateAttr, StrictInt, TypeAdapter, ValidationError, field_validator, model_validator

from rubriceval.data.knowledge import Knowledge, load_knowledge
from rubriceval.rubric.auto_accept import AutoAccept
from rubriceval.rubric.calibration import JudgementFields
from rubriceval.rubric.check_kinds import kind_names, listed
from rubriceval.rubric.items import CHECK_KINDS, CONVERSATION_CHECKS, Item, SampleField
from rubriceval.rubric.predicate import valid_regex
from rubriceval.rubric.strict import StrictModel, edit_count
from rubriceval.scorecard.predicate_kinds import PREDICATE_KINDS, PREDICATE_NAMES, PredicateName, predicate_choices

ItemId = Field(pattern=r"^[A-Za-z0-9_\-\u4e00-\u9fff]+$")
_CHECKS = TypeAdapter(Item)


def counts_occurrences(check: dict[str, Any]) -> bool:
    """A check kind that lists its own occurrences (response_time's late replies): `per: occurrence` without turns."""
    kind = CHECK_KINDS.get(str(check.get("type")))
    return kind is not None and kind.counts_occurrences


class Dimension(StrictModel):
    """A group of items (服务规范, 业务准确 …). A dimension may lose at most `max_deduction` points and gain at most
    `max_bonus`; a clamped subtotal is shown as clamped."""

    id: str = ItemId
    name: str = ""
    max_deduction: StrictInt | None = Field(default=None, gt=0)
    max_bonus: StrictInt | None = Field(default=None, gt=0)

    @property
    def label(self) -> str:
        return self.name or self.id


def _both_roles() -> list[Literal["user", "assistant"]]:
    return ["user", "assistant"]


def _card_sees() -> list[SampleField]:
    return ["question", "answer", "contexts"]


class AppliesWhen(JudgementFields):
    """When an item applies; otherwise it is N/A (left out of its hit rate, never a pass). Every condition given must
    hold: tags (any of them), intents (any), a regex on any turn (or the question/answer of a single-turn sample),
    metadata values (equal, or one of a list), retrieved contexts present or not, and a yes/no question to the judge
    (asked only when the rest hold). `examples` / `calibration` belong to that question (rubric/calibration.py)."""

    tags: list[str] = Field(default_factory=list)
    intents: list[str] = Field(default_factory=list)
    pattern: str | None = None
    roles: list[Literal["user", "assistant"]] = Field(default_factory=_both_roles, min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # true: only where retrieved contexts (a knowledge base) were shown, or the card names a knowledge file
    has_contexts: bool | None = None
    question: str | None = Field(default=None, min_length=1)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return valid_regex(value)

    @model_validator(mode="after")
    def _something(self) -> AppliesWhen:
        if not (self.tags or self.intents or self.pattern or self.metadata or self.question
                or self.has_contexts is not None):
            raise ValueError("applies_when needs a condition: tags, intents, pattern, metadata, has_contexts or "
                             "question")
        if (self.examples or self.calibration) and not self.question:
            raise ValueError("examples and calibration belong to applies_when's question")
        return self


class RubricRef(StrictModel):
    """A rubric of the same run as the predicate: hit when its score is below min_score (N/A when it does not apply)."""

    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    min_score: StrictInt = Field(default=4, ge=2, le=5)


class ItemTrust(StrictModel):
    """What reviewers must have confirmed before an item's hits are trusted: precision (confirmed / reviewed hits)
    and recall (confirmed / (confirmed + hits reviewers added)) over at least `min_reviews` reviewed items."""

    min_precision: float = Field(default=0.8, ge=0, le=1)
    min_recall: float | None = Field(default=None, ge=0, le=1)
    min_reviews: int = Field(default=20, ge=1)


class ScorecardItem(JudgementFields):
    """`examples` / `calibration` (rubric/calibration.py) belong to a `question:` item: how the judge decides it."""

    id: str = ItemId
    name: str = ""
    dimension: str
    description: str = ""
    points: StrictInt | None = None
    per: Literal["conversation", "occurrence"] = "conversation"
    cap: StrictInt | None = Field(default=None, gt=0)      # per occurrence: at most this many points from the item
    fatal: bool = False
    check: dict[str, Any] | None = None
    question: str | None = Field(default=None, min_length=1)
    hit_on: Literal["yes", "no"] | None = None
    rubric: RubricRef | None = None
    applies_when: AppliesWhen | None = None
    # A question about the knowledge base (承诺了知识库没有的政策): the judge also reads the passages the bot was given
    # (a conversation's turn contexts, each once), after the transcript.
    judge_sees_knowledge: bool = False
    review: bool = False        # written by `scorecard import` from a rule text: a person should check it
    trust: ItemTrust | None = None      # this item's bar (default: the card's `trust`, for judge-decided items)
    auto_accept: AutoAccept | None = None     # this item's own target (default: the card's; issue 44)
    _check: Any = PrivateAttr(default=None)

    @field_validator("hit_on", mode="before")
    @classmethod
    def _yes_no(cls, value: Any) -> Any:
        """YAML reads an unquoted yes/no as a boolean."""
        return {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value

    @field_validator("check")
    @classmethod
    def _known_check(cls, value: dict[str, Any] | None, info) -> dict[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value.get("type"), str):
            raise ValueError(f"a check needs a type: {listed(kind_names(scorecard=True))}")
        if value["type"] in ("judge", "checklist"):
            raise ValueError(f"'{value['type']}' is not a check; write the item as question: (a yes/no question) or "
                             "rubric: (a rubric with min_score)")
        if value["type"] in CHECK_KINDS and not CHECK_KINDS[value["type"]].scorecard:
            raise ValueError(f"check type '{value['type']}' cannot be a scorecard predicate; use one of: "
                             f"{listed(kind_names(scorecard=True))}")
        try:
            _CHECKS.validate_python({"id": info.data.get("id") or "item", **value})
        except ValidationError as exc:
            error = exc.errors()[0]
            loc = ".".join(str(p) for p in error["loc"][1:])
            raise ValueError(f"check{'.' + loc if loc else ''}: {error['msg'].removeprefix('Value error, ')}") from None
        return value

    @model_validator(mode="after")
    def _predicate_and_points(self) -> ScorecardItem:
        given = [name for name in PREDICATE_NAMES if getattr(self, name) is not None]
        if not given:
            raise ValueError(f"an item needs a predicate: {predicate_choices()}")
        if len(given) > 1:
            raise ValueError(f"an item has one predicate; this one has {' and '.join(given)}")
        if self.points is None and not self.fatal:
            raise ValueError("an item needs points: a negative integer (deduction, e.g. -3) or a positive one (bonus)")
        if self.points == 0:
            raise ValueError("points 0 would never change the total; give a deduction (-N) or a bonus (+N)")
        if self.fatal and self.points is not None and self.points > 0:
            raise ValueError("a fatal item (一票否决) cannot be a bonus: its points must be negative or left out")
        if self.judge_sees_knowledge and self.question is None:
            raise ValueError("judge_sees_knowledge belongs to question items")
        if self.hit_on is not None and self.question is None:
            raise ValueError("hit_on belongs to question items")
        if (self.examples or self.calibration) and self.question is None:
            raise ValueError("examples and calibration belong to question items (or to applies_when with a question)")
        occurring = self.check is not None and bool(self.check.get("turns") or counts_occurrences(self.check))
        if self.per == "occurrence" and not occurring:
            counting = listed([k.name for k in CHECK_KINDS.values() if k.counts_occurrences])
            raise ValueError("per: occurrence counts failing turns: it needs a per-turn check (check with turns: "
                             f"assistant or user) or a check that counts its occurrences: {counting}")
        if self.cap is not None and self.per != "occurrence":
            raise ValueError("cap limits a per-occurrence item; an item counted once never exceeds its points")
        return self

    @property
    def kind(self) -> PredicateName:
        """Which predicate kind decides the item (scorecard/predicate_kinds.py)."""
        return next(name for name in PREDICATE_NAMES if getattr(self, name) is not None)

    @property
    def check_item(self) -> Any:
        """The check as the rubric machinery reads it (rubriceval/checks/), with this item's id."""
        if self._check is None and self.check is not None:
            self._check = _CHECKS.validate_python({"id": self.id, **self.check})
        return self._check

    @property
    def is_bonus(self) -> bool:
        return (self.points or 0) > 0

    @property
    def hit_answer(self) -> bool:
        """The yes/no answer of a question item that counts as a hit."""
        return (self.hit_on or ("yes" if self.is_bonus else "no")) == "yes"

    @property
    def label(self) -> str:
        return self.name or self.id


OnUnscored = Literal["unscored", "not_applicable", "hit"]


class Scorecard(StrictModel):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    name: str
    version: int | str = 1
    language: Literal["zh", "en"] = "zh"
    description: str = ""
    scope: Literal["conversation", "sample"] = "conversation"
    base: StrictInt = Field(default=100, gt=0)
    pass_total: StrictInt | None = Field(default=None, ge=0)      # a total at or above this passes (pass_rate)
    judge_sees: list[SampleField] = Field(default_factory=_card_sees)
    # An unscored item (judge error): the total is unscored (default), or the item counts as N/A, or as hit.
    on_unscored: OnUnscored = "unscored"
    # The trust bar of the items the judge decides (question and rubric items) unless an item sets its own.
    trust: ItemTrust | None = None
    # Accept the machine's decisions only where reviews guarantee this agreement (rubric/auto_accept.py); the
    # rest wait for review. Not hashed: it changes which decisions wait, never a decision.
    auto_accept: AutoAccept | None = None
    # A knowledge file of policies (.md/.txt/.jsonl, relative to this file; rubriceval/data/knowledge.py), read as
    # the context a chat export lacks: by unless_context / only_if_context, per-turn `ask:` questions, the
    # judge_sees_knowledge questions (and their applies_when questions) and `applies_when.has_contexts`.
    knowledge: str | None = Field(default=None, min_length=1)
    # Its passages, read by the loader (never written in YAML): kept with the card, so a resumed run and a report
    # read the version the run started with, whatever the file says later.
    knowledge_passages: list[str] | None = None
    dimensions: list[Dimension] = Field(min_length=1)
    items: list[ScorecardItem] = Field(min_length=1)
    source_file: str | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _consistent(self) -> Scorecard:
        dims = [d.id for d in self.dimensions]
        repeated = sorted({d for d in dims if dims.count(d) > 1})
        if repeated:
            raise ValueError(f"dimensions repeat: {repeated}")
        if self.pass_total is not None and self.pass_total > self.base:
            raise ValueError(f"pass_total {self.pass_total} is above the base {self.base}")
        ids = [i.id for i in self.items]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"item ids repeat: {repeated}")
        for item in self.items:
            if item.dimension not in dims:
                raise ValueError(f"item '{item.id}': unknown dimension '{item.dimension}' (dimensions: {dims})")
            if self.scope == "sample" and item.check and (item.check.get("type") in CONVERSATION_CHECKS
                                                          or item.check.get("turns")):
                raise ValueError(f"item '{item.id}': this check reads a conversation's turns and the scorecard has "
                                 "scope: sample")
        return self

    def dimension(self, dim_id: str) -> Dimension:
        return next(d for d in self.dimensions if d.id == dim_id)

    def trust_bar(self, item: ScorecardItem) -> ItemTrust | None:
        """The item's own bar, else the card's for items the judge decides (deterministic checks need none)."""
        return item.trust or (self.trust if PREDICATE_KINDS[item.kind].judge_decided else None)

    @property
    def fatal_items(self) -> list[ScorecardItem]:
        return [i for i in self.items if i.fatal]

    def knowledge_base(self) -> Knowledge | None:
        """The card's knowledge file as its checks and questions read it: the passages the loader kept, else the
        file (a card built in Python), read beside the card file as a rubric's is."""
        if not self.knowledge:
            return None
        if self.knowledge_passages is not None:
            return Knowledge(source=self.knowledge, passages=self.knowledge_passages)
        return load_knowledge(self.knowledge, relative_to=self.source_file)

    def content_hash(self) -> str:
        """Changes with anything that can change a total: points, predicates, fatal flags, N/A conditions, caps,
        the base, the knowledge file's passages (a policy edit is a new version; moving the file is not). Names,
        descriptions and the review mark are left out (they change no verdict)."""
        key = (id(self), edit_count())
        private = self.__pydantic_private__
        assert private is not None          # the model declares private attributes: pydantic always sets the dict
        cached = private.get("_hash")
        if cached is None or cached[0] != key:
            # The trust bars judge the verdicts, they change none: left out, like a rubric's (and auto_accept).
            data = self.model_dump(mode="json", exclude={"name", "description", "version", "trust", "auto_accept",
                                                         "knowledge", "knowledge_passages"})
            knowledge = self.knowledge_base()
            if knowledge is not None:        # absent without one: every card written before keeps its version
                data["knowledge"] = knowledge.digest
            for item in data["items"]:
                for label in ("name", "description", "review", "trust", "auto_accept"):
                    item.pop(label, None)
            for dim in data["dimensions"]:
                dim.pop("name", None)
            blob = json.dumps(data, ensure_ascii=False, sort_keys=True)
            cached = (key, hashlib.sha256(blob.encode()).hexdigest()[:12])
            private["_hash"] = cached
        return cached[1]

    _hash: tuple | None = PrivateAttr(default=None)

    @property
    def version_tag(self) -> str:
        return f"v{self.version}@{self.content_hash()}"

    @property
    def scorer(self) -> str:
        """How runs, reports and gates name it: scorecard:<id>."""
        return f"scorecard:{self.id}"
