"""The rubric schema: what a customer-service lead writes in YAML. `rubriceval schema` exports it as JSON Schema.

A rubric is a criterion with five anchored score levels, judged by an LLM, plus optional checklist items: more judge
items, or deterministic checks (the kinds are the check-kind registry's: rubric/check_kinds.py). `combine` states how
items make the final 1–5 score.

`scope` says what one judgment covers: a single-turn sample (default), a whole conversation (the judge reads the
numbered transcript), or each assistant turn of a conversation (per-turn verdicts aggregated by `turn_aggregate`).
Conversation rubrics add the cross-turn checks (CONVERSATION_CHECKS) and the per-turn forms of the single-turn checks
that have one (PER_TURN_CHECKS, `turns: assistant`).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from rubriceval.common.errors import DatasetError
from rubriceval.data.knowledge import Knowledge, knowledge_stamp, load_knowledge
from rubriceval.rubric.auto_accept import AutoAccept
from rubriceval.rubric.items import (  # noqa: F401  (re-exported: the item classes were defined here before)
    CONVERSATION_CHECKS,
    LEVELS,
    PER_TURN_CHECKS,
    BeforeCheck,
    CheckItem,
    ChecklistItem,
    ChecklistQuestion,
    EscalateAfter,
    FinalTurn,
    FirstTurn,
    FittedWeights,
    Item,
    JudgeItem,
    LevelCondition,
    MaxCount,
    MaxLength,
    MustMention,
    MustNotMention,
    RegexCheck,
    RequiredLink,
    SampleField,
    StepsInOrder,
    TurnRole,
    check_level_descriptions,
)
from rubriceval.rubric.level_rule import check_levels_rule
from rubriceval.rubric.measured import Measurement
from rubriceval.rubric.predicate import valid_regex
from rubriceval.rubric.strict import StrictModel, edit_count
from rubriceval.safety.manipulation_policy import ManipulationPolicy

Scope = Literal["sample", "conversation", "assistant_turn"]
# Which judge makes the rubric's LLM score: one holistic 1–5 judgment, or yes/no checklist questions turned into a
# level by the checklist's rule (checklist) or by weights fitted to audited items (checklist_fitted).
# predicates: no whole-rubric judgment at all — the score is `predicate_levels` over the check items' outcomes (their
# entities, regexes and per-turn questions are the only judge calls).
JudgeMode = Literal["holistic", "checklist", "checklist_fitted", "predicates"]
FewShot = Literal["all", "per_level", "none"]

class Example(StrictModel):
    """A few-shot example: a sample, the score an expert gave it and why."""

    question: str = ""
    answer: str
    contexts: list[str] = Field(default_factory=list)
    ground_truth: str = ""
    score: int = Field(ge=1, le=5)
    feedback: str



class AppliesTo(StrictModel):
    """When the rubric applies. Empty → every sample. Any listed condition matching is enough."""

    tags: list[str] = Field(default_factory=list)
    intents: list[str] = Field(default_factory=list)
    question_pattern: str | None = None
    # Unlike the conditions above, a language list is a filter: samples in other languages never match.
    languages: list[Literal["zh", "en"]] = Field(default_factory=list)

    @field_validator("question_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return valid_regex(value)


class Combine(StrictModel):
    """How items make the final score.

    judge_capped: the judge items' weighted mean, rounded half up; then any failed `must` item caps it at cap_score.
    weighted_mean: every item mapped to 0–1 (check pass=1/fail=0, judge (s−1)/4), weighted mean mapped back to
      1 + 4·m and rounded half up; caps apply too.
    min: the lowest item score (checks: pass=5, fail=1).
    """

    rule: Literal["judge_capped", "weighted_mean", "min"] = "judge_capped"
    cap_score: int = Field(default=2, ge=1, le=5)


class TurnAggregate(StrictModel):
    """scope assistant_turn: how per-turn scores make the conversation's judge score.

    min: the worst turn. mean: the mean, rounded half up. share_at_least: the share s of turns scoring ≥ threshold,
    mapped to 1 + 4·s and rounded half up (all turns → 5, none → 1).
    """

    rule: Literal["min", "mean", "share_at_least"] = "min"
    threshold: int = Field(default=4, ge=1, le=5)


class TrustBar(StrictModel):
    """Minimum judge–expert agreement before this rubric's scores are trusted for gating."""

    min_kappa: float = Field(ge=-1, le=1)
    min_items: int = Field(default=50, ge=1)


def _question_and_answer() -> list[SampleField]:
    return ["question", "answer"]


def _one_judge_item() -> list[Item]:
    return [JudgeItem(id="judge", type="judge")]


class Rubric(StrictModel):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    name: str
    version: int | str = 1
    language: Literal["zh", "en"] = "zh"
    description: str = ""
    criterion: str
    score_descriptions: dict[int, str]
    judge_sees: list[SampleField] = Field(default_factory=_question_and_answer)
    applies_to: AppliesTo = Field(default_factory=AppliesTo)
    threshold: float = Field(default=4, ge=1, le=5)
    weight: float = Field(default=1.0, ge=0)
    items: list[Item] = Field(default_factory=_one_judge_item)
    combine: Combine = Field(default_factory=Combine)
    examples: list[Example] = Field(default_factory=list)
    trust: TrustBar | None = None
    # Accept the judge's verdicts only where reviews guarantee this agreement (rubric/auto_accept.py); not hashed.
    auto_accept: AutoAccept | None = None
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
    # A knowledge file of policies (.md/.txt/.jsonl, relative to this file): context-conditional checks search it
    # besides the retrieved contexts; every judge prompt of the rubric shows it (rubriceval/data/knowledge.py).
    knowledge: str | None = None
    # judge_mode predicates: the level from the check items' outcomes, conditions over check ids as in a checklist's
    # `levels` ("verified_first and not asked_secret"); a check passes = true.
    predicate_levels: dict[int, str] | None = None
    # How well judges agreed with people on labelled data, per mode (rubriceval/rubric/measured.py): metadata, not
    # hashed; `rubriceval validate` checks it and reports show it.
    measured: list[Measurement] = Field(default_factory=list)
    source_file: str | None = Field(default=None, exclude=True)
    _hash_cache: tuple[tuple, str] | None = PrivateAttr(default=None)      # see content_hash

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():           # reports, the audit app and the studio list a rubric by its name
            raise ValueError("the rubric's name is empty: give it the name reports show (name: 政策合规性)")
        return value

    @field_validator("score_descriptions")
    @classmethod
    def _levels(cls, value: dict[int, str]) -> dict[int, str]:
        check_level_descriptions(value)
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
    def _items(self) -> Rubric:
        ids = [item.id for item in self.items]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise ValueError(f"duplicate item ids: {sorted(dupes)}")
        if not self.items:
            raise ValueError("a rubric needs at least one item")
        if self.judge_mode not in ("holistic", "predicates") and not self.checklist_items:
            raise ValueError(f"judge_mode '{self.judge_mode}' needs a checklist item (type: checklist)")
        if self.predicate_levels is not None:
            check_ids = [item.id for item in self.items if not isinstance(item, (JudgeItem, ChecklistItem))]
            problems = check_levels_rule(self.predicate_levels, check_ids)
            if problems:
                raise ValueError("predicate_levels: " + "; ".join(f"level {lvl}: {why}" for lvl, why in problems))
        if self.judge_mode == "predicates" and self.predicate_levels is None:
            raise ValueError("judge_mode 'predicates' needs predicate_levels (conditions over check ids)")
        if self.judge_mode == "checklist_fitted" and not all(i.fitted for i in self.checklist_items):
            raise ValueError("judge_mode 'checklist_fitted' needs fitted weights on every checklist item; "
                             "run `rubriceval calibrate --fit-weights`")
        if self.combine.rule == "judge_capped" and not self.judge_items and self.judge_mode != "predicates":
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
        if self.judge_mode == "predicates":
            return []
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

    def knowledge_base(self) -> Knowledge | None:
        """The rubric's knowledge file (`knowledge:`, read beside the rubric file; a run's --knowledge is set here
        by the CLI), as its checks and judge prompts read it; None without one."""
        return load_knowledge(self.knowledge, relative_to=self.source_file) if self.knowledge else None

    def content_hash(self) -> str:
        """Changes whenever anything that can change a verdict changes.

        The trust bar, the failure tags and the measurements are left out: the judge never sees them (the bar
        judges the verdicts, the tags are for experts, measurements describe the judge), so changing them keeps the
        version's audits (and the judge cache) valid.

        Cached per rubric object (a run asks for it with every verdict): the cache holds until a field of any
        rubric model is assigned (`rubric.x = …`, `rubric.items[0].weight = …`, rubriceval/rubric/strict.py), the
        manipulation policy changes or the knowledge file is edited (its passages are hashed, not its path); a copy
        (model_copy, pickling) computes its own. An in-place edit of a list or dict field (`rubric.items.append(…)`)
        is not seen: assign a new list, or use model_copy(update=…)."""
        policy = self.manipulation            # not a StrictModel (rubriceval/safety/): its fields are in the key
        key = (id(self), edit_count(), policy.action, policy.cap_score, tuple(policy.fields),
               knowledge_stamp(self.knowledge, self.source_file) if self.knowledge else None)
        private = self.__pydantic_private__   # read directly: pydantic's __getattr__ for it costs 4 µs a call
        assert private is not None            # the model declares private attributes: pydantic always sets the dict
        cached = private.get("_hash_cache")
        if cached is None or cached[0] != key:
            private["_hash_cache"] = cached = (key, _content_hash(self))
        return cached[1]

    @property
    def version_tag(self) -> str:
        return f"v{self.version}@{self.content_hash()}"


def _content_hash(rubric: Rubric) -> str:
    data = rubric.model_dump(mode="json", exclude={"trust", "auto_accept", "failure_tags", "measured"})
    if rubric.knowledge:        # the passages the judge reads, not the path (a scorecard's knowledge is hashed so too)
        try:
            base = rubric.knowledge_base()    # not None: the rubric names a knowledge file
            if base is not None:
                data["knowledge"] = base.digest
        except DatasetError:    # validate reports the file; a run stops when it reads it
            data["knowledge"] = f"unreadable: {rubric.knowledge}"
    blob = json.dumps(_hashed_fields(data), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


# Fields added for conversations: left out of the hash while at their default, so every rubric written before
# them keeps its version tag (and its audits, trust records and cached judge replies).
_LATER_DEFAULTS: dict[str, Any] = {"scope": "sample", "turn_aggregate": None, "judge_mode": "holistic",
                                   "few_shot": "all", "shuffle_levels": False,
                                   "manipulation": ManipulationPolicy().model_dump(mode="json"),
                                   "knowledge": None, "predicate_levels": None}
_LATER_ITEM_DEFAULTS: dict[str, Any] = {"turns": None, "unless_context": [], "only_if_context": [], "match": None,
                                        "min_share": None, "last": 1}


# Manipulation-policy fields added later, left out at their default the same way (a rubric with its own policy
# keeps its tag when a new defence is added with a default that changes nothing for it).
_LATER_POLICY_DEFAULTS: dict[str, Any] = {"suffix_screen": True}


def _hashed_fields(data: dict[str, Any]) -> dict[str, Any]:
    policy = data.get("manipulation")
    if isinstance(policy, dict):
        data["manipulation"] = {k: v for k, v in policy.items()
                                if k not in _LATER_POLICY_DEFAULTS or v != _LATER_POLICY_DEFAULTS[k]}
    later = {**_LATER_DEFAULTS, "manipulation": {k: v for k, v in _LATER_DEFAULTS["manipulation"].items()
                                                 if k not in _LATER_POLICY_DEFAULTS}}
    data = {k: v for k, v in data.items() if k not in later or v != later[k]}
    data["items"] = [{k: v for k, v in item.items() if k not in _LATER_ITEM_DEFAULTS or v != _LATER_ITEM_DEFAULTS[k]}
                     for item in data.get("items", [])]
    return data
