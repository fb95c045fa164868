"""The rubric schema: what a customer-service lead writes in YAML. `rubriceval schema` exports it as JSON Schema.

A rubric is a criterion with five anchored score levels, judged by an LLM, plus optional checklist items: more judge
items, or deterministic checks (must mention, must not mention, regex, required link, steps in order, max length).
`combine` states how items make the final 1–5 score.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SampleField = Literal["question", "answer", "contexts", "ground_truth", "reference_contexts", "intent", "tags"]
LEVELS = (1, 2, 3, 4, 5)


def _valid_regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regex {value!r}: {exc}") from None
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Example(_Strict):
    """A few-shot example: a sample, the score an expert gave it and why."""

    question: str = ""
    answer: str
    contexts: list[str] = Field(default_factory=list)
    ground_truth: str = ""
    score: int = Field(ge=1, le=5)
    feedback: str


class _ItemBase(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-\u4e00-\u9fff]+$")
    description: str = ""
    weight: float = Field(default=1.0, ge=0)
    # A failed must-item caps the rubric score at combine.cap_score.
    must: bool = False


class JudgeItem(_ItemBase):
    """An LLM-judged item. Without its own criterion/levels it uses the rubric's."""

    type: Literal["judge"]
    criterion: str | None = None
    score_descriptions: dict[int, str] | None = None

    @field_validator("score_descriptions")
    @classmethod
    def _levels(cls, value):
        if value is not None:
            _check_levels(value)
        return value


class MustMention(_ItemBase):
    """The answer must mention all (or any) of these phrases; each phrase may list synonyms as 'a|b'."""

    type: Literal["must_mention"]
    phrases: list[str] = Field(min_length=1)
    mode: Literal["all", "any"] = "all"
    field: SampleField = "answer"
    case_sensitive: bool = False


class MustNotMention(_ItemBase):
    type: Literal["must_not_mention"]
    phrases: list[str] = Field(min_length=1)
    field: SampleField = "answer"
    case_sensitive: bool = False


class RegexCheck(_ItemBase):
    type: Literal["regex"]
    pattern: str
    should_match: bool = True
    field: SampleField = "answer"
    flags: list[Literal["IGNORECASE", "MULTILINE", "DOTALL"]] = Field(default_factory=list)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return _valid_regex(value)


class RequiredLink(_ItemBase):
    """The answer must contain a link matching `url` (exact) or `url_pattern` (regex)."""

    type: Literal["required_link"]
    url: str | None = None
    url_pattern: str | None = None
    allowed_domains: list[str] = Field(default_factory=list)   # every link in the answer must be on these
    flag_invented: bool = True        # report links that appear in no context (possibly invented)
    fail_on_invented: bool = False

    @field_validator("url_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _valid_regex(value)


class StepsInOrder(_ItemBase):
    """Steps must appear in this order (each step: phrases separated by '|', any of which counts)."""

    type: Literal["steps_in_order"]
    steps: list[str] = Field(min_length=2)
    require_all: bool = True          # a missing step fails the check
    field: SampleField = "answer"


class MaxLength(_ItemBase):
    type: Literal["max_length"]
    max_chars: int = Field(gt=0)
    field: SampleField = "answer"


CheckItem = Union[MustMention, MustNotMention, RegexCheck, RequiredLink, StepsInOrder, MaxLength]
Item = Annotated[Union[JudgeItem, MustMention, MustNotMention, RegexCheck, RequiredLink, StepsInOrder, MaxLength],
                 Field(discriminator="type")]


class AppliesTo(_Strict):
    """When the rubric applies. Empty → every sample. Any listed condition matching is enough."""

    tags: list[str] = Field(default_factory=list)
    intents: list[str] = Field(default_factory=list)
    question_pattern: str | None = None
    # Unlike the conditions above, a language list is a filter: samples in other languages never match.
    languages: list[Literal["zh", "en"]] = Field(default_factory=list)

    @field_validator("question_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _valid_regex(value)


class Combine(_Strict):
    """How items make the final score.

    judge_capped: the judge items' weighted mean, rounded half up; then any failed `must` item caps it at cap_score.
    weighted_mean: every item mapped to 0–1 (check pass=1/fail=0, judge (s−1)/4), weighted mean mapped back to
      1 + 4·m and rounded half up; caps apply too.
    min: the lowest item score (checks: pass=5, fail=1).
    """

    rule: Literal["judge_capped", "weighted_mean", "min"] = "judge_capped"
    cap_score: int = Field(default=2, ge=1, le=5)


class TrustBar(_Strict):
    """Minimum judge–expert agreement before this rubric's scores are trusted for gating."""

    min_kappa: float = Field(ge=-1, le=1)
    min_items: int = Field(default=50, ge=1)


class Rubric(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    name: str
    version: int | str = 1
    language: Literal["zh", "en"] = "zh"
    description: str = ""
    criterion: str
    score_descriptions: dict[int, str]
    judge_sees: list[SampleField] = Field(default_factory=lambda: ["question", "answer"])
    applies_to: AppliesTo = Field(default_factory=AppliesTo)
    threshold: float = Field(default=4, ge=1, le=5)
    weight: float = Field(default=1.0, ge=0)
    items: list[Item] = Field(default_factory=lambda: [JudgeItem(id="judge", type="judge")])
    combine: Combine = Field(default_factory=Combine)
    examples: list[Example] = Field(default_factory=list)
    trust: TrustBar | None = None
    source_file: str | None = Field(default=None, exclude=True)

    @field_validator("score_descriptions")
    @classmethod
    def _levels(cls, value: dict[int, str]) -> dict[int, str]:
        _check_levels(value)
        return value

    @model_validator(mode="after")
    def _items(self) -> "Rubric":
        ids = [item.id for item in self.items]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise ValueError(f"duplicate item ids: {sorted(dupes)}")
        if not self.items:
            raise ValueError("a rubric needs at least one item")
        if self.combine.rule == "judge_capped" and not self.judge_items:
            raise ValueError("combine.rule 'judge_capped' needs a judge item; use 'weighted_mean' or 'min' "
                             "for a checks-only rubric")
        return self

    @property
    def judge_items(self) -> list[JudgeItem]:
        return [item for item in self.items if isinstance(item, JudgeItem)]

    @property
    def check_items(self) -> list[Any]:
        return [item for item in self.items if not isinstance(item, JudgeItem)]

    def content_hash(self) -> str:
        """Changes whenever anything that can change a verdict changes.

        The trust bar is left out: it judges the verdicts, it does not shape them, so raising or lowering it keeps
        the version's audits (and the judge cache) valid."""
        blob = json.dumps(self.model_dump(mode="json", exclude={"trust"}), ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @property
    def version_tag(self) -> str:
        return f"v{self.version}@{self.content_hash()}"


def _check_levels(value: dict[int, str]) -> None:
    keys = sorted(value)
    missing = [lvl for lvl in LEVELS if lvl not in value]
    extra = [k for k in keys if k not in LEVELS]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing level(s) {missing}")
        if extra:
            parts.append(f"unknown level(s) {extra}")
        raise ValueError("score_descriptions must define exactly levels 1–5: " + ", ".join(parts))
    texts = [" ".join(value[lvl].split()) for lvl in LEVELS]
    for lvl, text in zip(LEVELS, texts):
        if not text:
            raise ValueError(f"score level {lvl} has an empty description")
    dupes = [lvl for i, lvl in enumerate(LEVELS) if texts[i] in texts[:i]]
    if dupes:
        raise ValueError(f"score levels {dupes} repeat the description of a lower level (anchors must differ)")
