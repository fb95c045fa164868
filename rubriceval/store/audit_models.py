"""The audit store's types: what an expert saw and saved, the review queue's filter and rows, and the name rules."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample

SAMPLE_LEVEL = ""          # the scorer column value of a sample's own version row (ground truth, contexts)
GROUND_TRUTH_FIELD = "ground_truth"
MAX_EXPERT_NAME = 80

QueueStatus = Literal["all", "unscored", "unaudited", "unaudited_by_me", "disagreement", "pending_review"]
QueueOrder = Literal["judge_asc", "judge_desc", "dataset", "gap_desc", "uncertain_first"]
ResponseAction = Literal["agree", "override", "score_unscored"]


class AuditError(RubricEvalError):
    """An audit action that cannot be saved as asked (missing reason, unknown item, bad score)."""


class ItemVersions(BaseModel):
    """What the expert saw: the audit item's version and its sample's version (0 = never written)."""

    item: int = 0
    sample: int = 0


class Conflict(BaseModel):
    message: str
    current: ItemVersions
    changed_by: str = ""
    changed_at: float | None = None


class SaveResult(BaseModel):
    ok: bool
    versions: ItemVersions            # the versions after the save (or the current ones on a conflict)
    conflict: Conflict | None = None
    changes: list[str] = Field(default_factory=list)


class AuditResponse(BaseModel):
    run_id: str
    sample_id: str
    scorer: str
    expert: str
    score: int = Field(ge=1, le=5)
    action: ResponseAction
    reason: str = ""
    judge_score: float | None = None  # the judge's score when the expert answered: the suggestion they judged
    scorer_version: str = ""
    created_at: float
    updated_at: float


class GroundTruthEdit(BaseModel):
    edit_id: int
    run_id: str
    sample_id: str
    field: str                        # 'ground_truth' or 'context:<index>'
    before: Any
    after: Any
    editor: str
    edited_at: float

    @classmethod
    def from_row(cls, row: Any) -> GroundTruthEdit:
        """One `audit_gt_edits` row (before/after stored as JSON)."""
        return cls(edit_id=row["edit_id"], run_id=row["run_id"], sample_id=row["sample_id"], field=row["field"],
                   before=json.loads(row["before_json"]), after=json.loads(row["after_json"]), editor=row["editor"],
                   edited_at=row["edited_at"])


class AuditLogEntry(BaseModel):
    log_id: int
    at: float
    expert: str
    action: str
    run_id: str
    sample_id: str
    scorer: str
    outcome: Literal["saved", "conflict"]
    payload: dict[str, Any]


class QueueFilter(BaseModel):
    scorer: str | None = None
    tag: str | None = None
    intent: str | None = None
    score_min: float | None = Field(default=None, ge=1, le=5)
    score_max: float | None = Field(default=None, ge=1, le=5)
    status: QueueStatus = "all"
    order: QueueOrder = "judge_asc"
    expert: str = ""                  # whose audits "unaudited_by_me" and my_score refer to


class QueueRow(BaseModel):
    sample_id: str
    scorer: str
    position: int
    judge_score: float | None
    unscored_kind: str | None
    question: str = ""                # filled by AuditStore.with_text for the rows on screen
    intent: str = ""
    n_audits: int
    human_scores: str                 # "alice=4, bob=3"
    my_score: int | None
    gap: float | None                 # largest |judge − human| over the experts
    spread: float | None = None       # self-consistency / panel: max − min of the n scores (None: judged once)
    disputed: bool = False            # the n judgements disagree: spread ≥ 2 or a pass/fail split


class Progress(BaseModel):
    total: int                        # rubric verdicts in the run
    audited: int                      # of them, audited by at least one expert
    audited_by_me: int


class ContextMark(BaseModel):
    relevant: bool
    editor: str
    edited_at: float


class AuditItem(BaseModel):
    run_id: str
    run_name: str
    sample: Sample                    # with the experts' corrections applied
    original: Sample                  # as the run judged it
    verdict: Verdict
    rubric: dict[str, Any]            # the scorer's definition (name, criterion, score_descriptions, threshold…)
    scorer_version: str
    responses: list[AuditResponse]
    gt_history: list[GroundTruthEdit]
    context_marks: dict[int, ContextMark]
    versions: ItemVersions
    other_verdicts: list[Verdict]     # the same sample's other scorers, read-only context


class ExportSummary(BaseModel):
    path: str
    n_samples: int
    n_corrected: int


def iso_time(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")


def clean_expert_name(name: str | None) -> str:
    name = " ".join((name or "").split())
    if not name:
        raise AuditError("enter your name before saving", field="expert",
                         hint="every response and edit records who made it")
    if len(name) > MAX_EXPERT_NAME:
        raise AuditError(f"name is longer than {MAX_EXPERT_NAME} characters", field="expert")
    return name


def context_field(index: int) -> str:
    return f"context:{index}"
