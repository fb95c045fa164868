"""The items a rubric lists: judge items, checklists (yes/no questions turned into a level), and deterministic
checks (single-turn, per-turn, and cross-turn checks over a conversation). `Item` is the discriminated union the rubric
schema reads (`type:` picks the class), built from the check-kind registry: each check model registers itself with
`@check_kind` (rubric/check_kinds.py), and the unions and kind lists at the end are derived from it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, Union

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from rubriceval.rubric.calibration import JudgementFields
from rubriceval.rubric.check_kinds import CHECK_KINDS, check_kind, conversation_kinds, per_turn_kinds
from rubriceval.rubric.level_rule import LevelRuleError, check_condition, check_level_keys, check_points
from rubriceval.rubric.predicate import Match, Predicate, literal_or_predicate, literal_phrase, valid_regex
from rubriceval.rubric.strict import StrictModel

SampleField = Literal["question", "answer", "contexts", "ground_truth", "reference_contexts", "intent", "tags"]
# Whose turns a conversation check reads.
TurnRole = Literal["user", "assistant"]


def _assistant_only() -> list[TurnRole]:
    return ["assistant"]
LEVELS = (1, 2, 3, 4, 5)



class ItemBase(StrictModel):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-\u4e00-\u9fff]+$")
    description: str = ""
    weight: float = Field(default=1.0, ge=0)
    # A failed must-item caps the rubric score at combine.cap_score.
    must: bool = False
    if TYPE_CHECKING:       # for type checkers only (no field here): every item model declares its kind as a Literal
        type: str


class _CheckBase(ItemBase):
    """A single-turn check, optionally conditioned on the retrieved contexts (each entry: phrases separated by '|',
    any of which counts). unless_context: a failed check passes when a context mentions one of them (never promise
    包邮 unless the knowledge base grants it). only_if_context: the check applies only when a context mentions one of
    them (quote the fee when the contexts mention a fee); otherwise it passes as not required."""

    unless_context: list[str] = Field(default_factory=list)
    only_if_context: list[str] = Field(default_factory=list)


class _PhrasesOrMatch(StrictModel):
    """`phrases` are literal text ('a|b' synonyms); `match` adds a regex, built-in entities and/or a yes/no question
    about the turn (rubriceval/rubric/predicate.py). At least one of them."""

    match: Predicate | None = None      # declared first: the phrases validator reads it
    phrases: list[str] = Field(default_factory=list)

    @field_validator("phrases")
    @classmethod
    def _literal_phrases(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if not value and info.data.get("match") is None:     # say so at the field a lead wrote empty
            raise ValueError("phrases is empty: give at least one phrase, or use match (regex, entity, ask)")
        return [literal_phrase(v) for v in value]

    @model_validator(mode="after")
    def _phrases_or_match(self):
        if not self.phrases and self.match is None:
            raise ValueError("give phrases (literal text) and/or match (regex, entity, ask)")
        if self.match is not None and self.match.ask and not self._turn_known():
            raise ValueError("a question (match.ask) is asked about one turn: use it on a conversation check "
                             "or with `turns: assistant`")
        return self

    def _turn_known(self) -> bool:
        return True


class ChecklistQuestion(JudgementFields):
    """One yes/no question about the answer, e.g. 回答是否先安抚了用户情绪？ `examples` / `calibration`
    (rubric/calibration.py): how it is decided on a small judge (scoring/judgement/)."""

    id: str = Field(pattern=r"^[A-Za-z0-9_\-\u4e00-\u9fff]+$")
    ask: str = Field(min_length=1)
    weight: float = Field(default=1.0, ge=0)


class FittedWeights(StrictModel):
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


class ChecklistItem(ItemBase):
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
    def _one_rule(self) -> ChecklistItem:
        if self.levels is not None and self.points is not None:
            raise ValueError("give either levels (conditions) or points (shares), not both")
        if self.fitted is not None:
            unknown = sorted(set(self.fitted.weights) - {q.id for q in self.questions})
            if unknown:
                raise ValueError(f"fitted weights name unknown question id(s) {unknown}")
        return self


class JudgeItem(ItemBase):
    """An LLM-judged item. Without its own criterion/levels it uses the rubric's."""

    type: Literal["judge"]
    criterion: str | None = None
    score_descriptions: dict[int, str] | None = None

    @field_validator("score_descriptions")
    @classmethod
    def _levels(cls, value):
        if value is not None:
            check_level_descriptions(value)
        return value


@check_kind(run="rubriceval.checks.mention:must_mention", scope="answer", per_turn=True, asks=(("match", "@turns"),),
            wording=("ev_mention_all_ok", "ev_mention_all_missing", "ev_mention_any_ok", "ev_mention_any_missing",
                     "ev_match_shown", "ev_match_missing", "ev_match_and"),
            form_fields=("phrases", "mode", "match"), example={"phrases": ["退款|退货"]})
class MustMention(_PhrasesOrMatch, _CheckBase):
    """The answer must mention all (or any) of these phrases; each phrase may list synonyms as 'a|b'. With `match`,
    the answer (or turn) must also show it (an entity, a regex, a yes to the question)."""

    type: Literal["must_mention"]
    mode: Literal["all", "any"] = "all"
    field: SampleField = "answer"
    case_sensitive: bool = False
    turns: TurnRole | None = None     # conversations: every turn of this role must pass (field = that turn)
    # With `turns`: pass when at least this share of those turns pass (default: all of them).
    min_share: float | None = Field(default=None, gt=0, le=1)

    def _turn_known(self) -> bool:
        return self.turns is not None

    @model_validator(mode="after")
    def _share_needs_turns(self) -> MustMention:
        if self.min_share is not None and self.turns is None:
            raise ValueError("min_share applies to per-turn checks (turns: assistant)")
        return self


@check_kind(run="rubriceval.checks.mention:must_not_mention", scope="answer", per_turn=True,
            asks=(("match", "@turns"),),
            wording=("ev_forbidden_none", "ev_forbidden_found", "ev_match_shown", "ev_match_missing", "ev_match_and"),
            form_fields=("phrases", "match"), example={"phrases": ["保证到账"]})
class MustNotMention(_PhrasesOrMatch, _CheckBase):
    """None of these phrases, and (with `match`) nothing that shows it: an entity, a regex, a yes to the question."""

    type: Literal["must_not_mention"]
    field: SampleField = "answer"
    case_sensitive: bool = False
    turns: TurnRole | None = None

    def _turn_known(self) -> bool:
        return self.turns is not None


@check_kind(run="rubriceval.checks.regex:regex", scope="answer", per_turn=True,
            wording=("ev_regex_matched", "ev_regex_matched_forbidden", "ev_regex_not_found"),
            form_fields=("pattern", "should_match", "flags"), example={"pattern": r"[A-Z]\d{4}"})
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
        return valid_regex(value)


@check_kind(run="rubriceval.checks.links:required_link", scope="answer",
            wording=("ev_link_found", "ev_link_missing", "ev_link_wanted_url", "ev_link_wanted_pattern",
                     "ev_link_wanted_any", "ev_link_off_domain", "ev_link_invented", "ev_note"),
            form_fields=("url", "url_pattern", "allowed_domains"),
            example={"url_pattern": r"https://help\.example\.com/\S+"})
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
        return valid_regex(value)


@check_kind(run="rubriceval.checks.order:steps_in_order", scope="answer",
            wording=("ev_steps_ok", "ev_steps_swapped", "ev_steps_missing", "ev_steps_order"),
            form_fields=("steps", "require_all"), example={"steps": ["抱歉|不好意思", "订单号"]})
class StepsInOrder(_CheckBase):
    """Steps must appear in this order (each step: phrases separated by '|', any of which counts)."""

    type: Literal["steps_in_order"]
    steps: list[str] = Field(min_length=2)
    require_all: bool = True          # a missing step fails the check
    field: SampleField = "answer"


@check_kind(run="rubriceval.checks.length:max_length", scope="answer", per_turn=True, wording=("ev_length",),
            form_fields=("max_chars",), example={"max_chars": 80})
class MaxLength(_CheckBase):
    type: Literal["max_length"]
    max_chars: int = Field(gt=0)
    field: SampleField = "answer"
    turns: TurnRole | None = None


@check_kind(run="rubriceval.checks.before:before", scope="conversation",
            asks=(("first", "@first_roles"), ("then", "@then_roles")),
            wording=("ev_before_never", "ev_before_ok", "ev_before_first", "ev_before_late", "ev_before_absent"),
            form_fields=("first", "then", "first_roles", "then_roles"),
            example={"first": "身份核验通过", "then": "收货地址"})
class BeforeCheck(ItemBase):
    """Conversations: `first` must occur before `then` (e.g. identity verified before any order detail is
    revealed). Passes when `then` never occurs. Each is literal phrases separated by '|', any of which counts, or a
    predicate: {phrases, regex, entity, ask} (rubriceval/rubric/predicate.py). Turns are read in order and the check
    stops at the first decisive one (`first` found, or `then` found before it)."""

    type: Literal["before"]
    first: Match
    then: Match
    first_roles: list[TurnRole] = Field(default_factory=_assistant_only, min_length=1)
    then_roles: list[TurnRole] = Field(default_factory=_assistant_only, min_length=1)
    case_sensitive: bool = False

    @field_validator("first", "then")
    @classmethod
    def _literal(cls, value: Match) -> Match:
        return literal_or_predicate(value)


@check_kind(run="rubriceval.checks.max_count:max_count", scope="conversation", asks=(("match", "@roles"),),
            wording=("ev_count", "ev_count_where", "ev_count_over", "ev_count_under", "ev_count_ok"),
            form_fields=("phrases", "max", "min", "roles", "match"), example={"phrases": ["抱歉"], "max": 1})
class MaxCount(_PhrasesOrMatch, ItemBase):
    """Conversations: at most `max` (and at least `min`) turns of these roles contain any of the phrases or show
    `match` (e.g. apologise in at most one assistant turn)."""

    type: Literal["max_count"]
    max: int = Field(ge=0)
    min: int = Field(default=0, ge=0)
    roles: list[TurnRole] = Field(default_factory=_assistant_only, min_length=1)
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _range(self) -> MaxCount:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


@check_kind(run="rubriceval.checks.escalate:escalate_after", scope="conversation",
            asks=(("bot_failure", "assistant"), ("user_failure", "user"), ("handover", "assistant")),
            wording=("ev_escalate_ok", "ev_escalate_missed", "ev_escalate_ended", "ev_escalate_early",
                     "ev_escalate_never", "ev_failed_bot_turn", "ev_failed_user_turn"),
            form_fields=("handover", "bot_failure", "user_failure", "failures", "within"),
            example={"user_failure": "还是不行|没用", "handover": "转人工"})
class EscalateAfter(ItemBase):
    """Conversations: after `failures` consecutive failed bot turns, a handover must follow within the next
    `within` bot turn(s). A bot turn failed when it matches `bot_failure`, or when the user's next turn matches
    `user_failure` (还是不行|没用). A conversation that ends while a handover is owed fails."""

    type: Literal["escalate_after"]
    failures: int = Field(default=2, ge=1)
    bot_failure: Match | None = None      # literal phrases ('a|b'), or a predicate {phrases, regex, entity, ask}
    user_failure: Match | None = None
    handover: Match
    within: int = Field(default=1, ge=1)
    case_sensitive: bool = False

    @field_validator("bot_failure", "user_failure", "handover")
    @classmethod
    def _literal(cls, value: Match | None) -> Match | None:
        return literal_or_predicate(value)

    @model_validator(mode="after")
    def _some_failure(self) -> EscalateAfter:
        if not (self.bot_failure or self.user_failure):
            raise ValueError("say what a failed bot turn looks like: bot_failure and/or user_failure")
        return self


@check_kind(run="rubriceval.checks.final_turn:final_turn", scope="conversation",
            asks=(("match", "assistant"),), asked_turns="last",
            wording=("ev_final_turn", "ev_final_turn_says"), form_fields=("phrases", "mode", "match"),
            example={"phrases": ["还有什么可以帮您"]})
class FinalTurn(_PhrasesOrMatch, ItemBase):
    """Conversations: the last assistant turn mentions all (or any) of these phrases (e.g. 还有什么可以帮您), and
    shows `match` when given. `last: 2`: one of the assistant's last two turns does — what a lead means by "asked
    at the end" when the agent asks 还有其他问题吗 and then says goodbye (祝您生活愉快)."""

    type: Literal["final_turn"]
    mode: Literal["all", "any"] = "any"
    case_sensitive: bool = False
    last: int = Field(default=1, ge=1, le=5)

    @model_validator(mode="after")
    def _one_turn_asked(self) -> FinalTurn:
        if self.last > 1 and self.match is not None and self.match.ask:
            raise ValueError("last > 1 looks at several turns; a question (match.ask) is asked about the last one: "
                             "use phrases or a regex with last, or last: 1 with the question")
        return self


@check_kind(run="rubriceval.checks.first_turn:first_turn", scope="conversation",
            asks=(("match", "assistant"),), asked_turns="first",
            wording=("ev_first_turn", "ev_first_turn_says"), form_fields=("phrases", "mode", "match"),
            example={"phrases": ["您好|欢迎"]})
class FirstTurn(_PhrasesOrMatch, ItemBase):
    """Conversations: the first assistant turn mentions all (or any) of these phrases (a greeting: 您好|欢迎), and
    shows `match` when given."""

    type: Literal["first_turn"]
    mode: Literal["all", "any"] = "any"
    case_sensitive: bool = False


@check_kind(run="rubriceval.checks.response_time:response_time", scope="conversation",
            occurrences="rubriceval.checks.response_time:late_replies",
            wording=("ev_response_time_ok", "ev_response_time_late", "ev_response_time_late_many",
                     "ev_response_time_unknown", "ev_response_time_none"),
            form_fields=("max_seconds", "replies"), example={"max_seconds": 60})
class ResponseTime(ItemBase):
    """Conversations (首响 / 回复超时): every agent reply comes within `max_seconds` of the customer's message it
    answers — from the first customer turn since the agent last spoke to the agent's next turn, by the turn
    timestamps chat-log exports keep. `replies: first` times the first reply only (首响). Each late reply is an
    occurrence (a scorecard's `per: occurrence`); a reply whose delay a missing timestamp hides leaves the check
    undecided rather than passed."""

    type: Literal["response_time"]
    max_seconds: float = Field(gt=0)
    replies: Literal["every", "first"] = "every"


# Derived from the registry (rubric/check_kinds.py): a kind registered above is in every list below.
_CHECK_MODELS = tuple(kind.model for kind in CHECK_KINDS.values())
_ITEM_MODELS = (JudgeItem, ChecklistItem, *_CHECK_MODELS)
if TYPE_CHECKING:
    # A union built from a tuple at import is no type to a checker: to it, a check is an ItemBase (every registered
    # check model is one) and an item is one of the three.
    CheckItem = ItemBase
    Item = JudgeItem | ChecklistItem | ItemBase
else:
    CheckItem = Union[_CHECK_MODELS]  # noqa: UP007 (built from a tuple at import)
    Item = Annotated[Union[_ITEM_MODELS], Field(discriminator="type")]  # noqa: UP007
# Checks that only make sense over a conversation's turns.
CONVERSATION_CHECKS = conversation_kinds()
# Single-turn checks that have a per-turn form (`turns: assistant`).
PER_TURN_CHECKS = per_turn_kinds()


def check_level_descriptions(value: dict[int, str]) -> None:
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
