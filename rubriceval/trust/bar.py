"""The one trust rule: a rubric's judge is trusted when κ ≥ min_kappa on ≥ min_items audited items.

The bar is the rubric's typed `trust:` block (rubric.schema.TrustBar, which owns the defaults). Both the release
gate (trust/release_gate.py, evidence from stored audits) and the CI gate's --refuse-untrusted (report/gate_trust.py,
evidence passed in) ask `check_bar`; they differ only in how they word the outcome.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from rubriceval.rubric.schema import TrustBar

# Why a rubric misses its bar, checked in this order.
BarShortfall = Literal["no_evidence", "items_unknown", "too_few_items", "kappa_undefined", "below_bar"]


class TrustEvidence(BaseModel):
    """Judge–expert agreement for one rubric: quadratic-weighted kappa and the number of audited items."""

    kappa: float | None = None
    n_items: int | None = None        # None: unknown (a bare κ was given)


class BarCheck(BaseModel):
    """trusted: True meets the bar; False measured on enough items and below it; None not known (shortfall says why)."""

    trusted: bool | None
    shortfall: BarShortfall | None = None


def check_bar(bar: TrustBar, evidence: TrustEvidence | None) -> BarCheck:
    """Whether `evidence` meets `bar`: κ ≥ min_kappa on ≥ min_items items."""
    if evidence is None:
        return BarCheck(trusted=None, shortfall="no_evidence")
    if evidence.n_items is None:
        return BarCheck(trusted=None, shortfall="items_unknown")
    if evidence.n_items < bar.min_items:
        return BarCheck(trusted=None, shortfall="too_few_items")
    if evidence.kappa is None:
        return BarCheck(trusted=None, shortfall="kappa_undefined")
    if evidence.kappa < bar.min_kappa:
        return BarCheck(trusted=False, shortfall="below_bar")
    return BarCheck(trusted=True)
