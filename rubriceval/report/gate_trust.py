"""--refuse-untrusted: which gated rubrics miss their trust bar, by the one rule in rubriceval.trust.bar.

The agreement may be passed in (an AgreementReport, {kappa, n_items}, (kappa, n), a bare kappa, or a release-gate
TrustStatus per rubric id or name) or read from the audits kept beside the runs (`trust_from_store`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rubriceval.report.gate_checks import GateUsageError
from rubriceval.report.summary_models import ScorerSummary
from rubriceval.rubric.schema import Rubric, TrustBar
from rubriceval.trust.bar import TrustEvidence, check_bar
from rubriceval.trust.release_gate import TrustStatus, trust_status

AgreementSource = Mapping[str, Any] | Callable[[str], Any] | None


def as_trust_evidence(value: Any) -> TrustEvidence | None:
    """Accepts a TrustEvidence, an AgreementReport (kappa_quadratic, n), a dict {kappa, n_items|n}, a (kappa, n)
    pair, or a bare kappa (item count unknown). (A release-gate TrustStatus is handled by `untrusted_reason`.)"""
    if value is None or isinstance(value, TrustEvidence):
        return value
    if hasattr(value, "kappa_quadratic") and hasattr(value, "n"):
        return TrustEvidence(kappa=value.kappa_quadratic.value, n_items=value.n)
    if isinstance(value, Mapping):
        return TrustEvidence(kappa=value.get("kappa"), n_items=value.get("n_items", value.get("n")))
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return TrustEvidence(kappa=value[0], n_items=value[1])
    if isinstance(value, (int, float)):
        return TrustEvidence(kappa=float(value))
    raise GateUsageError(f"cannot read agreement value {value!r}", field="agreement",
                         hint="pass an AgreementReport, {'kappa': 0.7, 'n_items': 120} or (0.7, 120)")


def _lookup(agreement: AgreementSource, rubric: ScorerSummary) -> Any:
    if agreement is None:
        return None
    for key in (rubric.scorer, rubric.name):
        value = agreement(key) if callable(agreement) else agreement.get(key)
        if value is not None:
            return value
    return None


def untrusted_reason(rubric: ScorerSummary, agreement: AgreementSource) -> str | None:
    """Why a rubric's scores cannot be trusted for gating, or None when it has no trust bar or meets it."""
    if rubric.kind != "rubric" or not rubric.trust:
        return None
    bar = TrustBar.model_validate(rubric.trust)
    raw = _lookup(agreement, rubric)
    if isinstance(raw, TrustStatus):
        # The release gate already judged this exact rubric version against its bar.
        return None if raw.trusted is True else f"rubric '{rubric.name}': {raw.reason}"
    evidence = as_trust_evidence(raw)
    check = check_bar(bar, evidence)
    if check.trusted is True or check.shortfall is None:      # no shortfall: trusted (trust/bar.py)
        return None
    need = f"needs κ ≥ {bar.min_kappa} on ≥ {bar.min_items} audited items"
    if evidence is None:
        return f"rubric '{rubric.name}' has no judge–expert agreement measured ({need})"
    kappa = "κ is undefined" if evidence.kappa is None else f"κ = {evidence.kappa:.2f}"
    return {
        "items_unknown": f"rubric '{rubric.name}': {kappa} but the number of audited items is unknown ({need})",
        "too_few_items": f"rubric '{rubric.name}': only {evidence.n_items} audited items ({need}; {kappa})",
        "kappa_undefined": f"rubric '{rubric.name}': {kappa} ({need})",
        "below_bar": f"rubric '{rubric.name}': {kappa} < {bar.min_kappa} on {evidence.n_items} items ({need})",
    }[check.shortfall]


def trust_from_store(store: Any, run: str) -> dict[str, Any]:
    """rubric id → TrustStatus of the exact rubric version the run used, from the expert audits and agreement
    results kept beside the runs (rubriceval.trust.release_gate), for the run's judge model."""
    judge_model = (store.run_info(run).config.judge or {}).get("model") or None
    out = {}
    for row in store.scorers(run):
        if row["kind"] == "rubric" and (row.get("definition") or {}).get("trust"):
            rubric = Rubric.model_validate(row["definition"])
            out[rubric.id] = trust_status(store.path, rubric, judge_model=judge_model)
    return out


