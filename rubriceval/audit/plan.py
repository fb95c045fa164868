"""Sampling plans for human review: "5% per agent_id per week, at least 3" — a random part drawn per stratum
(segment × period), and risk-first additions (fatal hits, low judge confidence, judge disagreement) kept apart.

Each random item carries its inverse-probability weight N_h / n_h (N_h verdicts in its stratum, n_h drawn), so rates
and agreement estimated from the random part are unbiased for the run even though small agents are over-sampled
(a Hájek estimate: Σ w·x / Σ w). Risk additions are chosen because they look wrong: they are reviewed, counted and
shown apart, never in the estimates (estimate.py states this in its output).
"""
from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, model_validator

from rubriceval.data.segment_spec import TimeSettings, parse_field
from rubriceval.data.segment_values import SampleKeys, field_values
from rubriceval.scoring.score_probs import stored_distributions
from rubriceval.store.team_models import Candidate, TeamError

RiskKind = Literal["fatal", "low_confidence", "disagreement"]
RISK_KINDS: tuple[RiskKind, ...] = get_args(RiskKind)
RANDOM = "random"
_PLAN = re.compile(r"^\s*(?P<amount>\d+(?:\.\d+)?)\s*(?P<pct>%)?\s*(?P<rest>.*)$")


class SamplingPlan(BaseModel):
    """N or p % per stratum (per segment fields, per period), at least k; plus risk-first additions."""

    n: int | None = Field(default=None, ge=1)
    share: float | None = Field(default=None, gt=0, le=1)
    per: list[str] = Field(default_factory=list)      # segment fields: metadata keys, tag, intent
    period: str | None = None                         # day, week, month[:timestamp field]
    at_least: int = Field(default=0, ge=0)
    risk: list[RiskKind] = Field(default_factory=list)
    low_margin: float = Field(default=0.2, gt=0, le=1)   # P(first) − P(second) below this: low confidence
    # scorecards: each judgement item's k highest-p(yes) conversations of each period the machine did not hit go to
    # review whatever the cut-off, as do items awaiting review (audit/review_priority.py); 0: none by rank
    top_p_yes: int = Field(default=2, ge=0)
    zone: str = "UTC"

    @model_validator(mode="after")
    def _n_or_share(self) -> SamplingPlan:
        if (self.n is None) == (self.share is None):
            raise ValueError("a plan takes N items or p % per stratum (one of them)")
        return self

    def describe(self) -> str:
        amount = f"{self.n}" if self.n is not None else f"{(self.share or 0) * 100:g}%"   # share is set without n
        per = "".join(f" per {p}" for p in [*self.per, *([self.period] if self.period else [])])
        return f"{amount}{per}" + (f", at least {self.at_least}" if self.at_least else "") + \
            (f"; risk-first: {', '.join(self.risk)}" if self.risk else "")


def parse_plan(text: str, *, risk: Sequence[str] = (), zone: str = "UTC", top_p_yes: int | None = None
               ) -> SamplingPlan:
    """'5% per agent_id per week, min 3' / '10 per agent_id,skill_group' / '20%' → SamplingPlan."""
    match = _PLAN.match(text)
    if not match:
        raise TeamError(f"cannot read the sampling plan {text!r}", field="plan",
                        hint="e.g. '5% per agent_id per week, min 3' or '10 per skill_group'")
    rest = match["rest"]
    at_least = 0
    minimum = re.search(r",?\s*(?:min|at least|至少)\s*(\d+)\s*$", rest)
    if minimum:
        at_least, rest = int(minimum[1]), rest[:minimum.start()]
    words = [w.strip() for w in re.split(r"\bper\b|每", rest) if w.strip()]
    if rest.strip() and not re.match(r"^\s*(per\b|每)", rest):
        raise TeamError(f"cannot read the sampling plan {text!r}: expected 'per <field>' after the amount",
                        field="plan", hint="e.g. '5% per agent_id per week, min 3'")
    per, period = [], None
    for word in words:
        for name in (n.strip() for n in word.split(",") if n.strip()):
            field = parse_field(name, text)
            if field.bucket is not None:
                if period is not None:
                    raise TeamError(f"plan {text!r}: one period at most", field="plan")
                period = field.label
            else:
                per.append(field.name)
    unknown = [r for r in risk if r not in RISK_KINDS]
    if unknown:
        raise TeamError(f"unknown risk-first addition {', '.join(unknown)}", field="risk",
                        hint=f"use {', '.join(RISK_KINDS)}")
    amount = float(match["amount"])
    risks = [kind for r in risk for kind in RISK_KINDS if kind == r]       # as given (all known: checked above)
    try:
        return SamplingPlan(n=None if match["pct"] else int(amount), share=amount / 100 if match["pct"] else None,
                            per=per, period=period, at_least=at_least, risk=risks, zone=zone,
                            **({} if top_p_yes is None else {"top_p_yes": top_p_yes}))
    except ValueError as exc:
        raise TeamError(f"sampling plan {text!r}: {exc}", field="plan") from None


class PlannedItem(BaseModel):
    """An item of a planned task: the random part with its stratum and weight, or a risk-first addition."""

    candidate: Candidate
    selection: str                        # 'random' or 'risk:<kind>'
    stratum: str
    stratum_size: int | None = None       # N_h: the stratum's verdicts (random part)
    stratum_drawn: int | None = None      # n_h
    weight: float | None = None           # N_h / n_h; None for risk additions (not in the estimates)


def stratum_of(keys: SampleKeys | None, plan: SamplingPlan, settings: TimeSettings) -> str:
    """'a1|2026-W46': the first value of each plan field, then the period; '(none)' where a sample lacks one."""
    if keys is None:
        return "(none)"
    parts = []
    for name in [*plan.per, *([plan.period] if plan.period else [])]:
        values = field_values(keys, parse_field(name, name), settings)
        parts.append(values[0] if values else "(none)")
    return "|".join(parts) or "all"


def allocation(size: int, plan: SamplingPlan) -> int:
    """n_h for a stratum of `size`: N or ceil(p·N_h), at least k, never more than the stratum holds."""
    wanted = plan.n if plan.n is not None else math.ceil((plan.share or 0) * size - 1e-9)
    return min(size, max(plan.at_least, wanted))


def risk_reasons(details: Mapping[str, Any], evidence: Sequence[Mapping[str, Any]], candidate: Candidate,
                 must_items: set[str], fatal_samples: set[str], plan: SamplingPlan,
                 disputed_reviews: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Why a verdict is a risk-first addition (in the plan's order): a fatal hit (a scorecard's fatal item, or a
    failed `must` item of the rubric), low judge confidence (a holistic tie or margin below `low_margin`, a
    checklist answer near 50/50), or disagreement (a judge panel or self-consistency split, or reviewers of an
    earlier task who differ by 2 levels or more from each other or from the judge: `disputed_reviews`)."""
    reasons: list[str] = []
    for kind in plan.risk:
        if kind == "fatal" and (candidate.sample_id in fatal_samples or any(
                e.get("item") in must_items and e.get("passed") is False for e in evidence)):
            reasons.append(kind)
        elif kind == "low_confidence":
            unsure = any(p.tie or p.margin < plan.low_margin for p in stored_distributions(details).values())
            unsure = unsure or any(e.get("p_yes") is not None and abs(e["p_yes"] - 0.5) < plan.low_margin / 2
                                   for e in evidence)
            if unsure:
                reasons.append(kind)
        elif kind == "disagreement" and (candidate.disputed or candidate.sample_id in disputed_reviews):
            reasons.append(kind)
    return reasons


def draw(candidates: Sequence[Candidate], strata: Mapping[str, str], plan: SamplingPlan, seed: int,
         risks: Mapping[str, list[str]]) -> list[PlannedItem]:
    """The random part per stratum (seeded), then the risk additions not already drawn, each kept apart."""
    rng = random.Random(seed)
    cells: dict[str, list[Candidate]] = defaultdict(list)
    for c in sorted(candidates, key=lambda c: c.sample_id):           # reproducible whatever the store's order
        cells[strata.get(c.sample_id, "(none)")].append(c)
    items: list[PlannedItem] = []
    for name, pool in sorted(cells.items()):
        n_h = allocation(len(pool), plan)
        for c in rng.sample(pool, n_h):
            items.append(PlannedItem(candidate=c, selection=RANDOM, stratum=name, stratum_size=len(pool),
                                     stratum_drawn=n_h, weight=len(pool) / n_h))
    rng.shuffle(items)
    drawn = {i.candidate.sample_id for i in items}
    for c in sorted(candidates, key=lambda c: c.sample_id):
        reasons = risks.get(c.sample_id)
        if reasons and c.sample_id not in drawn:
            items.append(PlannedItem(candidate=c, selection="risk:" + ",".join(reasons),
                                     stratum=strata.get(c.sample_id, "(none)")))
    return items
