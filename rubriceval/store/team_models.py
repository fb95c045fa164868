"""Types of team audits: roles, a task's specification, queue rows, progress, opinions for adjudication."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from rubriceval.store.audit_models import AuditError

# agent: a customer-service agent (or bot owner) who sees only their own conversations' verdicts and may appeal them.
Role = Literal["expert", "lead", "admin", "agent"]
ROLES: tuple[Role, ...] = ("expert", "lead", "admin", "agent")
LEAD_ROLES: frozenset[str] = frozenset({"lead", "admin"})
SamplingMode = Literal["stratified", "least_sure", "lowest"]
SAMPLING_MODES: tuple[SamplingMode, ...] = ("stratified", "least_sure", "lowest")
AssignmentState = Literal["open", "scored", "unsure"]
Route = Literal["unsure", "disagreement", "pass_fail"]
DISAGREEMENT_GAP = 2          # experts this many points apart go to the lead


class TeamError(AuditError):
    """A team action refused: not allowed for the role, unknown task or item, bad specification."""


class TaskSpec(BaseModel):
    """What a lead asks for: `n` items per rubric from `run`, each reviewed by `overlap` of `experts`."""

    run: str
    rubrics: list[str] = Field(default_factory=list)
    # scorecards whose conversations' card verdicts are sampled (rubriceval/audit/team_cards.py)
    scorecards: list[str] = Field(default_factory=list)
    n: int | None = Field(default=None, ge=1)       # None with a plan
    # experts per item; None: 2 for rubric tasks (agreement), 1 for scorecard-only tasks (a card is long to review)
    # the None default is filled in by the model validator (2 or 1, see above): after validation it is an int
    overlap: int = Field(default=None, ge=1, validate_default=False)  # type: ignore[assignment]
    experts: list[str] = Field(min_length=1)
    sampling: SamplingMode = "stratified"
    blind: bool = True
    seed: int = 0
    name: str = ""
    # a sampling plan (rubriceval/audit/plan.SamplingPlan's fields: N or p % per segment per period, at least k,
    # risk-first additions) instead of n items per rubric
    plan: dict[str, Any] | None = None
    # appeals on the verdicts of this task's samples close this many days after the task is created (None: the
    # run's window; rubriceval/audit/appeal_deadlines.py)
    appeal_days: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _n_or_plan(self) -> TaskSpec:
        if self.n is None and self.plan is None:
            raise ValueError("give n items per rubric, or a sampling plan")
        if not self.rubrics and not self.scorecards:
            raise ValueError("name rubrics or scorecards to sample")
        if self.overlap is None:
            self.overlap = 1 if not self.rubrics else 2
        return self

    @field_validator("experts", "rubrics", "scorecards")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        cleaned = [" ".join(v.split()) for v in value if v and v.strip()]
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("names repeat")
        return cleaned


class Candidate(BaseModel):
    """A rubric verdict that may be sampled into a task."""

    sample_id: str
    scorer: str
    judge_score: float | None
    tags: list[str] = Field(default_factory=list)
    intent: str = ""
    spread: float | None = None       # several judgements: max − min
    disputed: bool = False            # several judgements disagree (spread ≥ 2 or a pass/fail split)


class TaskInfo(BaseModel):
    task_id: str
    name: str
    run_id: str
    created_by: str
    created_at: float
    sampling: SamplingMode
    overlap: int
    blind: bool
    seed: int
    rubrics: list[str]
    experts: list[str]
    n_items: int
    scorecards: list[str] = Field(default_factory=list)
    appeal_days: float | None = None  # the task's appeal deadline in days after it was created (None: the run's)


class QueueRow(BaseModel):
    """One item of an expert's share. judge_score is None while the task hides it from this expert."""

    item_no: int
    sample_id: str
    scorer: str
    state: AssignmentState
    score: int | None
    judge_score: float | None = None
    judge_shown: bool = False


class QueuePage(BaseModel):
    rows: list[QueueRow]
    total: int                        # rows matching the filter
    page: int
    page_size: int


class QueueFilter(BaseModel):
    scorer: str | None = None
    state: AssignmentState | None = None
    tag: str | None = None            # a sample tag
    intent: str | None = None
    score_min: float | None = None    # judge score bounds: refused for an expert in a blind task
    score_max: float | None = None
    after: int | None = None          # only items numbered after this one (the "next item" of a queue)


class ExpertProgress(BaseModel):
    expert: str
    assigned: int
    scored: int
    unsure: int

    @property
    def done(self) -> int:
        return self.scored + self.unsure


class Assignment(BaseModel):
    """What an expert sees of one item of their share, and the version they saw."""

    task_id: str
    item_no: int
    run_id: str
    sample_id: str
    scorer: str
    expert: str
    state: AssignmentState
    score: int | None
    note: str = ""
    tags: list[str] = Field(default_factory=list)
    version: int
    judge_shown: bool                 # False: the judge's verdict must not reach the expert's page
    failure_tags: list[str] = Field(default_factory=list)   # the rubric's declared tags, to tick
    blind_task: bool


class Opinion(BaseModel):
    expert: str
    state: AssignmentState
    score: int | None
    note: str = ""
    tags: list[str] = Field(default_factory=list)
    blind: bool | None = None         # the judge was hidden when this score was saved


class AdjudicationRow(BaseModel):
    item_no: int
    sample_id: str
    scorer: str
    judge_score: float | None
    route: Route
    scores: str                       # "alice=2, bob=4, carol=unsure" (the CLI's; the app words states itself)
    label: int | None = None          # the lead's latest final label, if any
    opinions: list[Opinion] = Field(default_factory=list)


class Adjudication(BaseModel):
    task_id: str
    item_no: int
    run_id: str
    sample_id: str
    scorer: str
    lead: str
    label: int
    reason: str
    route: str
    opinions: list[Opinion]
    saved_at: float


class TeamSaveResult(BaseModel):
    ok: bool
    version: int                      # after the save, or the current one on a conflict
    message: str = ""


def tag_field(tags: list[str]) -> str:
    """Tags as one text column instr() can search: '|退款|物流|' (the bars keep '退款' from matching '退款失败')."""
    return "|" + "|".join(tags) + "|" if tags else ""


def tags_of(field: str) -> list[str]:
    return [t for t in field.split("|") if t]
