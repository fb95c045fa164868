"""The result of judging one sample with one scorer: a score with its feedback, or unscored with a reason.

Never NaN, never a silent 0: `score is None` ⇔ `unscored_reason` says why. Aggregates count unscored rows
separately instead of averaging them in.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from rubriceval.i18n.catalogue import Message

UnscoredKind = Literal[
    "parse_error",      # the judge answered, but no unambiguous score could be read
    "provider_error",   # HTTP 4xx/5xx after retries
    "timeout",          # the call timed out after retries
    "missing_field",    # the sample lacks a field the scorer needs
    "not_applicable",   # the rubric does not apply to this sample
    "invalid_output",   # structured output did not match the schema
    "no_statements",    # a metric found nothing to score (e.g. no statements extracted)
    "input_too_long",   # the prompt would exceed the judge's input limit
    "undecided",        # the judge answered but cannot tell on this item (its calibration says so; issue 39)
    "error",            # anything else, with its message
]


class Usage(BaseModel):
    """What it cost to produce a verdict. `calls` and `cache_hits` count judge requests (a retried request once; a
    re-ask is a request of its own): answered by the provider, or served from the judge cache with no tokens or cost.
    Embedding requests are counted apart, so the judge's numbers agree wherever they are shown."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    embedding_calls: int = 0
    embedding_cache_hits: int = 0
    cached_prompt_tokens: int = 0     # of prompt_tokens, reused from the judge server's prefix cache

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})


class Evidence(BaseModel):
    """Why a check or item scored as it did: the quoted span found, or the thing that is missing."""

    item: str
    passed: bool | None = None
    score: float | None = None
    detail: str = ""
    span: str | None = None          # quoted text from the answer
    start: int | None = None         # character offset of span in the answer
    turn: int | None = None          # conversations: the turn (from 1) the span is quoted from, or where it failed
    missing: list[str] = Field(default_factory=list)
    other_turn: int | None = None    # `before`: the turn of `first` compared with `then`'s turn (`turn`)
    question: str | None = None      # a per-turn question that decided the check, and the judge's p(yes) to it
    p_yes: float | None = None
    # What `detail` says, as a catalogue message: the report and the audit app say it in their own language.
    message: Message | None = None


class Verdict(BaseModel):
    sample_id: str
    scorer: str                       # rubric id or metric name
    scorer_version: str = ""          # rubric version + content hash, or metric version
    kind: Literal["rubric", "metric"] = "rubric"
    score: float | None = None        # rubrics: integer 1–5; metrics: 0–1
    unscored_reason: str | None = None
    unscored_kind: UnscoredKind | None = None
    feedback: str = ""
    evidence: list[Evidence] = Field(default_factory=list)
    passed: bool | None = None        # score ≥ threshold, when a threshold exists
    usage: Usage = Field(default_factory=Usage)
    details: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _scored_xor_unscored(self) -> Verdict:
        if self.score is None and not self.unscored_reason:
            raise ValueError("a verdict without a score must say why (unscored_reason)")
        if self.score is not None:
            if self.score != self.score:  # NaN
                raise ValueError("NaN is not a score; use unscored_reason")
            if self.unscored_reason:
                raise ValueError("a scored verdict cannot carry an unscored_reason")
        if self.score is None and self.unscored_kind is None:
            self.unscored_kind = "error"
        return self

    @property
    def scored(self) -> bool:
        return self.score is not None

    @classmethod
    def unscored(cls, sample_id: str, scorer: str, why: UnscoredKind, reason: str, **extra: Any) -> Verdict:
        return cls(sample_id=sample_id, scorer=scorer, unscored_kind=why, unscored_reason=reason, **extra)
