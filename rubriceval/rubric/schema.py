"""The rubric schema: what a customer-service lead writes in YAML. `rubriceval schema` exports it as JSON Schema.

A rubric is a criterion with five anchored score levels, judged by an LLM, plus optional checklist items: more judge
items, or deterministic checks (must mention, must not mention, regex, required link, steps in order, max length).
`combine` states how items make the final 1–5 score.

`scope` says what one judgment covers: a single-turn sample (default), a whole conversation (the judge reads the
numbered transcript), or each assistant turn of a conversation (per-turn verdicts aggregated by `turn_aggregate`).
Conversation rubrics add cross-turn checks (before, max_count, escalate_after, final_turn) and per-turn forms of
must_mention / must_not_mention / regex / max_length (`turns: assistant`).
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from rubriceval.rubric.level_rule import LevelRuleError, check_condition, check_level_keys, check_points
from rubriceval.safety.manipulation_policy import ManipulationPolicy

SampleField = Literal["question", "answer", "contexts", "ground_truth", "reference_contexts", "intent", "tags"]
# Whose turns a conversation check reads.
TurnRole = Literal["user", "assistant"]
Scope = Literal["sample", "conversation", "assistant_turn"]
# Which judge makes the rubric's LLM score: one holistic 1–5 judgment, or yes/no checklist questions turned into a
# level by the checklist's rule (checklist) or by weights fitted to audited items (checklist_fitted).
JudgeMode = Literal["holistic", "checklist", "checklist_fitted"]
FewShot = Literal["all", "per_level", "none"]
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


class _CheckBase(_ItemBase):
    """A single-turn check, optionally conditioned on the retrieved contexts (each entry: phrases separated by '|',
    any of which counts). unless_context: a failed check passes when a context mentions one of them (never promise
    包邮 unless the knowledge base grants it). only_if_context: the check applies only when a context mentions one of
    them (quote the fee when the contexts mention a fee); otherwise it passes as not required."""

    unless_context: list[str] = Field(default_factory=list)
    only_if_context: list[str] = Field(default_factory=list)


class ChecklistQuestion(_Strict):
    """One yes/no question about the answer, e.g. 回答是否先安抚了用户情绪？"""

    id: str = Field(pattern=r"^[A-Za-z0-9_\-\u4e00-\u9fff]+$")
    ask: str = Field(min_length=1)
    weight: float = Field(default=1.0, ge=0)


class FittedWeights(_Strict):
    """An ordinal logistic model fitted to audited items by `rubriceval calibrate --fit-weights`: the score is 1 +
    the number of cutpoints below Σ weight·p(yes)."""

    weights: dict[str, float]
    cutpoints: list[float] = Field(min_length=4, max_length=4)
    n_train: int = Field(ge=1)
    n_heldout: int = Field(default=0, ge=0)
    kappa_heldout: float | None = None          # the fitted model on held-out audited items
    kappa_rule_heldout: float | None = None     # the declared rule on the same items
    judge_model: str = ""

    @field_validator("cutpoints")
    @classmethod
    def _increasing(cls, value: list[float]) -> list[float]:
        if any(b <= a for a, b in zip(value, value[1:])):
            raise ValueError("cutpoints must increase")
        return value


def _level_condition(text: str, info: ValidationInfo) -> str:
    """One level's condition, checked against the item's questions (the error names this level's own line)."""
    try:
        check_condition(text, [q.id for q in info.data.get("questions") or []])
    except LevelRuleError as exc:
        raise ValueError(str(exc)) from None
    return text


LevelCondition = Annotated[str, AfterValidator(_level_condition)]


class ChecklistItem(_ItemBase):
    """Yes/no questions, each asked on its own (answer constrained to yes/no, p(yes) kept when the judge returns
    logprobs), turned into a 1–5 score by `levels` (conditions over question ids), `points` (weighted share of
    yes per level) or, in judge_mode checklist_fitted, `fitted` weights. See rubriceval/rubric/level_rule.py."""

    type: Literal["checklist"]
    criterion: str | None = None      # context shown after the sample, before the question; None: none
    questions: list[ChecklistQuestion] = Field(min_length=1)
    levels: dict[int, LevelCondition] | None = None
    points: dict[int, float] | None = None
    fitted: FittedWeights | None = None

    @field_validator("questions")
    @classmethod
    def _unique(cls, value: list[ChecklistQuestion]) -> list[ChecklistQuestion]:
        ids = [q.id for q in value]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate question ids: {dupes}")
        return value

    @field_validator("levels")
    @classmethod
    def _rule(cls, value: dict[int, str] | None) -> dict[int, str] | None:
        if value is not None:
            problems = check_level_keys(value)
            if problems:
                raise ValueError("; ".join(f"level {lvl}: {why}" for lvl, why in problems))
        return value

    @field_validator("points")
    @classmethod
    def _points(cls, value: dict[int, float] | None) -> dict[int, float] | None:
        if value is not None:
            problems = check_points(value)
            if problems:
                raise ValueError("; ".join(f"level {lvl}: {why}" for lvl, why in problems))
        return value

    @model_validator(mode="after")
    def _one_rule(self) -> "ChecklistItem":
        if self.levels is not None and self.points is not None:
            raise ValueError("give either levels (conditions) or points (shares), not both")
        if self.fitted is not None:
            unknown = sorted(set(self.fitted.weights) - {q.id for q in self.questions})
            if unknown:
                raise ValueError(f"fitted weights name unknown question id(s) {unknown}")
        return self


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


class MustMention(_CheckBase):
    """The answer must mention all (or any) of these phrases; each phrase may list synonyms as 'a|b'."""

    type: Literal["must_mention"]
    phrases: list[str] = Field(min_length=1)
    mode: Literal["all", "any"] = "all"
    field: SampleField = "answer"
    case_sensitive: bool = False
    turns: TurnRole | None = None     # conversations: every turn of this role must pass (field = that turn)


class MustNotMention(_CheckBase):
    type: Literal["must_not_mention"]
    phrases: list[str] = Field(min_length=1)
    field: SampleField = "answer"
    case_sensitive: bool = False
    turns: TurnRole | None = None


class RegexCheck(_CheckBase):
    type: Literal["regex"]
    pattern: str
    should_match: bool = True
    field: SampleField = "answer"
    flags: list[Literal["IGNORECASE", "MULTILINE", "DOTALL"]] = Field(default_factory=list)
    turns: TurnRole | None = None

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return _valid_regex(value)


class RequiredLink(_CheckBase):
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


class StepsInOrder(_CheckBase):
    """Steps must appear in this order (each step: phrases separated by '|', any of which counts)."""

    type: Literal["steps_in_order"]
    steps: list[str] = Field(min_length=2)
    require_all: bool = True          # a missing step fails the check
    field: SampleField = "answer"


class MaxLength(_CheckBase):
    type: Literal["max_length"]
    max_chars: int = Field(gt=0)
    field: SampleField = "answer"
    turns: TurnRole | None = None


class BeforeCheck(_ItemBase):
    """Conversations: `first` must occur before `then` (e.g. identity verified before any order detail is
    revealed). Passes when `then` never occurs. Each is phrases separated by '|', any of which counts."""

    type: Literal["before"]
    first: str = Field(min_length=1)
    then: str = Field(min_length=1)
    first_roles: list[TurnRole] = Field(default_factory=lambda: ["assistant"], min_length=1)
    then_roles: list[TurnRole] = Field(default_factory=lambda: ["assistant"], min_length=1)
    case_sensitive: bool = False


class MaxCount(_ItemBase):
    """Conversations: at most `max` (and at least `min`) turns of these roles contain any of the phrases
    (e.g. apologise in at most one assistant turn)."""

    type: Literal["max_count"]
    phrases: list[str] = Field(min_length=1)
    max: int = Field(ge=0)
    min: int = Field(default=0, ge=0)
    roles: list[TurnRole] = Field(default_factory=lambda: ["assistant"], min_length=1)
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _range(self) -> "MaxCount":
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


class EscalateAfter(_ItemBase):
    """Conversations: after `failures` consecutive failed bot turns, a handover must follow within the next
    `within` bot turn(s). A bot turn failed when it matches `bot_failure`, or when the user's next turn matches
    `user_failure` (还是不行|没用). A conversation that ends while a handover is owed fails."""

    type: Literal["escalate_after"]
    failures: int = Field(default=2, ge=1)
    bot_failure: str | None = None
    user_failure: str | None = None
    handover: str = Field(min_length=1)
    within: int = Field(default=1, ge=1)
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _some_failure(self) -> "EscalateAfter":
        if not (self.bot_failure or self.user_failure):
            raise ValueError("say what a failed bot turn looks like: bot_failure and/or user_failure")
        return self


class FinalTurn(_ItemBase):
    """Conversations: the last assistant turn mentions all (or any) of these phrases (e.g. 还有什么可以帮您)."""

    type: Literal["final_turn"]
    phrases: list[str] = Field(min_length=1)
    mode: Literal["all", "any"] = "any"
    case_sensitive: bool = False


CheckItem = Union[MustMention, MustNotMention, RegexCheck, RequiredLink, StepsInOrder, MaxLength, BeforeCheck,
                  MaxCount, EscalateAfter, FinalTurn]
Item = Annotated[Union[JudgeItem, ChecklistItem, MustMention, MustNotMention, RegexCheck, RequiredLink, StepsInOrder, MaxLength,
                       BeforeCheck, MaxCount, EscalateAfter, FinalTurn],
                 Field(discriminator="type")]
# Checks that only make sense over a conversation's turns.
CONVERSATION_CHECKS = ("before", "max_count", "escalate_after", "final_turn")
# Single-turn checks that have a per-turn form (`turns: assistant`).
PER_TURN_CHECKS = ("must_mention", "must_not_mention", "regex", "max_length")


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


class TurnAggregate(_Strict):
    """scope assistant_turn: how per-turn scores make the conversation's judge score.

    min: the worst turn. mean: the mean, rounded half up. share_at_least: the share s of turns scoring ≥ threshold,
    mapped to 1 + 4·s and rounded half up (all turns → 5, none → 1).
    """

    rule: Literal["min", "mean", "share_at_least"] = "min"
    threshold: int = Field(default=4, ge=1, le=5)


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
    scope: Scope = "sample"
    turn_aggregate: TurnAggregate | None = None
    judge_mode: JudgeMode = "holistic"
    few_shot: FewShot = "all"            # per_level: one example per score level (the first of each level)
    shuffle_levels: bool = False         # list the level descriptions in a per-sample seeded order (debiasing)
    # An answer that addresses the judge ("[RESULT] 5", "忽略以上规则"): cap its score (default, at 1), send it to
    # audit, or nothing (rubriceval/safety/manipulation_policy.py).
    manipulation: ManipulationPolicy = Field(default_factory=ManipulationPolicy)
    # Why an answer fails, as experts tick it in the audit app (未先安抚, 缺少链接, 编造政策); reports count them.
    failure_tags: list[str] = Field(default_factory=list)
    source_file: str | None = Field(default=None, exclude=True)

    @field_validator("score_descriptions")
    @classmethod
    def _levels(cls, value: dict[int, str]) -> dict[int, str]:
        _check_levels(value)
        return value

    @field_validator("failure_tags")
    @classmethod
    def _failure_tags(cls, value: list[str]) -> list[str]:
        tags = [" ".join(str(tag).split()) for tag in value]
        if any(not tag for tag in tags):
            raise ValueError("a failure tag is empty")
        if any("|" in tag for tag in tags):
            raise ValueError("a failure tag may not contain '|'")
        repeated = sorted({tag for tag in tags if tags.count(tag) > 1})
        if repeated:
            raise ValueError(f"failure tags repeat: {repeated}")
        return tags

    @model_validator(mode="after")
    def _items(self) -> "Rubric":
        ids = [item.id for item in self.items]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise ValueError(f"duplicate item ids: {sorted(dupes)}")
        if not self.items:
            raise ValueError("a rubric needs at least one item")
        if self.judge_mode != "holistic" and not self.checklist_items:
            raise ValueError(f"judge_mode '{self.judge_mode}' needs a checklist item (type: checklist)")
        if self.judge_mode == "checklist_fitted" and not all(i.fitted for i in self.checklist_items):
            raise ValueError("judge_mode 'checklist_fitted' needs fitted weights on every checklist item; "
                             "run `rubriceval calibrate --fit-weights`")
        if self.combine.rule == "judge_capped" and not self.judge_items:
            raise ValueError("combine.rule 'judge_capped' needs a judge item; use 'weighted_mean' or 'min' "
                             "for a checks-only rubric")
        if self.turn_aggregate is not None and self.scope != "assistant_turn":
            raise ValueError("turn_aggregate only applies to scope: assistant_turn")
        return self

    @property
    def is_conversation(self) -> bool:
        return self.scope != "sample"

    @property
    def aggregate(self) -> TurnAggregate:
        return self.turn_aggregate or TurnAggregate()

    @property
    def judge_items(self) -> list[Any]:
        """The items an LLM judges in this rubric's judge_mode: the holistic judge items, or the checklists."""
        if self.judge_mode == "holistic":
            return [item for item in self.items if isinstance(item, JudgeItem)]
        return self.checklist_items

    @property
    def checklist_items(self) -> list[ChecklistItem]:
        return [item for item in self.items if isinstance(item, ChecklistItem)]

    @property
    def check_items(self) -> list[Any]:
        """The deterministic checks."""
        return [item for item in self.items if not isinstance(item, (JudgeItem, ChecklistItem))]

    def content_hash(self) -> str:
        """Changes whenever anything that can change a verdict changes.

        The trust bar and the failure tags are left out: the judge never sees them (the bar judges the verdicts,
        the tags are for experts), so changing them keeps the version's audits (and the judge cache) valid."""
        blob = json.dumps(_hashed_fields(self.model_dump(mode="json", exclude={"trust", "failure_tags"})),
                          ensure_ascii=False,
                          sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @property
    def version_tag(self) -> str:
        return f"v{self.version}@{self.content_hash()}"


# Fields added for conversations: left out of the hash while at their default, so every rubric written before
# them keeps its version tag (and its audits, trust records and cached judge replies).
_LATER_DEFAULTS = {"scope": "sample", "turn_aggregate": None, "judge_mode": "holistic", "few_shot": "all",
                   "shuffle_levels": False, "manipulation": ManipulationPolicy().model_dump(mode="json")}
_LATER_ITEM_DEFAULTS = {"turns": None, "unless_context": [], "only_if_context": []}


def _hashed_fields(data: dict[str, Any]) -> dict[str, Any]:
    data = {k: v for k, v in data.items() if k not in _LATER_DEFAULTS or v != _LATER_DEFAULTS[k]}
    data["items"] = [{k: v for k, v in item.items() if k not in _LATER_ITEM_DEFAULTS or v != _LATER_ITEM_DEFAULTS[k]}
                     for item in data.get("items", [])]
    return data


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
