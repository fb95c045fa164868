"""Types of appeals (申诉/复核): an agent's appeal against a verdict or one deduction, its states and every step."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from rubriceval.store.team_models import TeamError

AppealState = Literal["submitted", "under_review", "accepted", "rejected", "final"]
APPEAL_STATES: tuple[AppealState, ...] = ("submitted", "under_review", "accepted", "rejected", "final")
Outcome = Literal["accepted", "rejected"]
REVIEWER_ROLES = frozenset({"expert", "lead", "admin"})
DEFAULT_WINDOW_DAYS = 7.0            # appeals are taken this long after a run, unless a lead sets its window
DAY_S = 86400.0
WHOLE_VERDICT = ""                   # the `item` of an appeal against the whole verdict, not one deduction


class AppealError(TeamError):
    """An appeal step refused: not the agent's conversation, past the deadline, wrong state or role."""


class Appeal(BaseModel):
    appeal_id: str
    run_id: str
    sample_id: str
    scorer: str
    item: str = WHOLE_VERDICT         # the deduction appealed ('' = the whole verdict)
    agent: str
    reason: str
    state: AppealState
    machine_score: float | None
    official_before: float | None     # the official score when the appeal was made
    proposed_score: float | None      # the score without the appealed deduction (None: a reviewer must give one)
    reviewer: str = ""
    decision: Outcome | None = None
    decided_score: float | None = None
    decision_reason: str = ""
    final_by: str = ""
    final_outcome: Outcome | None = None
    created_at: float
    updated_at: float
    version: int


class AppealEvent(BaseModel):
    event_id: int
    appeal_id: str
    actor: str
    role: str
    action: Literal["submit", "review", "decide", "final"]
    from_state: str
    to_state: str
    outcome: Outcome | None = None
    score: float | None = None
    reason: str = ""
    at: float


class AppealResult(BaseModel):
    ok: bool
    appeal: Appeal
    message: str = ""                 # on a conflict: who moved it first, and what it is now


class AgentVerdict(BaseModel):
    """A verdict of an agent's own conversation, as the agent sees it."""

    run_id: str
    sample_id: str
    scorer: str
    machine_score: float | None
    official_score: float | None
    human_decided: bool
    deductions: list[str]             # the items the agent may appeal (a scorecard's: deductions, fatals, bonuses)
    kind: str = "rubric"              # rubric or scorecard
    scorer_name: str = ""             # a scorecard's name ('' : show the id)
    item_names: dict[str, str] = {}   # a scorecard's item names by id
    feedback: str
    appeal_closes_at: float
    appeal_deadline_task: str = ""    # the task whose deadline applies ('' : the run's window)
    appeal_days_left: float | None = None   # when the list was read (negative: closed)
    appeals: list[Appeal]


class Deadline(BaseModel):
    """When appeals on a verdict close: its sample's task deadline (the latest task with one), else the run's."""

    closes_at: float
    task: str = ""                    # the task's name ('' : the run's window)
    days: float | None = None         # the setting: days after the task (or run) was made; None: the default

    def what(self) -> str:
        return f"task '{self.task}'" if self.task else "this run"

    def days_left(self, now: float) -> float:
        return (self.closes_at - now) / DAY_S


class ItemAppealStats(BaseModel):
    """What appeals say about one rubric (item '') or one of its deductions."""

    scorer: str
    item: str
    n_verdicts: int                   # verdicts of the rubric in the run (the denominator of the appeal rate)
    n_hits: int                       # verdicts where this item deducted (whole rubric: verdicts below threshold)
    n_appealed: int
    n_decided: int                    # accepted or rejected so far
    n_accepted: int
    appeal_rate: float | None
    acceptance_rate: float | None
    precision: float | None           # (hits − accepted appeals) / hits: accepted appeals are false hits
    flagged: bool
    why: str = ""
