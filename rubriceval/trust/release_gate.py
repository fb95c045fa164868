"""The release gate: is this rubric version's judge trusted, by its own bar (`trust: {min_kappa, min_items}`)?
The rule itself is trust/bar.py; this module gathers the evidence and says why.

trusted = True   κ ≥ min_kappa on ≥ min_items audited items
trusted = False  κ < min_kappa on ≥ min_items items: measured, and not good enough
trusted = None   unknown: no bar, no audits, fewer than min_items items, or κ undefined (everyone gave one score)

The evidence is for the exact version tag (version + content hash): editing a rubric resets its trust until it is
audited again. Candidates are the live expert audits of that version (pooled over runs, recomputed each time so
new audits count at once) and stored results from labels files or calibration held-out sets; the one with the most
items is used (most evidence — never the best κ). `judge_model` limits the evidence to one judge model, since a
rubric trusted with one judge says little about another.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, TypedDict

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Message, msg
from rubriceval.rubric.schema import Rubric
from rubriceval.store.location import display_location, store_target
from rubriceval.trust.bar import TrustEvidence, check_bar
from rubriceval.trust.human_scores import audit_agreement, audited_items
from rubriceval.trust.store import TrustStore


class TrustStatus(BaseModel):
    rubric_id: str
    version_tag: str
    trusted: bool | None
    kappa: float | None = None
    kappa_ci_low: float | None = None
    kappa_ci_high: float | None = None
    n: int = 0
    min_kappa: float | None = None
    min_items: int | None = None
    source: str = ""                   # where the κ comes from
    reason: str

    @property
    def label(self) -> Literal["trusted", "untrusted", "unknown"]:
        return "unknown" if self.trusted is None else "trusted" if self.trusted else "untrusted"

    def summary(self) -> str:
        return f"{self.rubric_id} {self.version_tag}: {self.label} — {self.reason}"


class _BarFields(TypedDict):
    """The TrustStatus fields every answer carries: which rubric version, and its bar."""
    rubric_id: str
    version_tag: str
    min_kappa: float | None
    min_items: int | None


class _MeasuredFields(_BarFields):
    """…and, once some evidence is found, the numbers measured and where they come from."""
    kappa: float | None
    kappa_ci_low: float | None
    kappa_ci_high: float | None
    n: int
    source: str


class _Evidence(BaseModel):
    n: int
    kappa: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    kappa_note: str | None = None
    source: str


def _kappa_text(kappa: float | None, ci_low: float | None, ci_high: float | None) -> str:
    if kappa is None:
        return "κ undefined"
    ci = f" [{ci_low:.2f}, {ci_high:.2f}]" if ci_low is not None and ci_high is not None else ""
    return f"κ = {kappa:.2f}{ci}"


def _audit_evidence(store_path: str | Path, rubric: Rubric, judge_model: str | None, n_boot: int) -> _Evidence | None:
    try:
        audited = audited_items(store_path, rubric.id, version_tag=rubric.version_tag)
    except RubricEvalError:
        return None                     # no run used this version: nothing audited
    if judge_model is not None:
        audited = audited.model_copy(update={
            "items": [i for i in audited.items if audited.run_models.get(i.run_id) == judge_model]})
    if not audited.items:
        return None
    report = audit_agreement(audited, n_boot=n_boot)
    runs = sorted({i.run_name for i in audited.items})
    kappa = report.kappa_quadratic
    return _Evidence(n=report.n, kappa=kappa.value, ci_low=kappa.ci_low, ci_high=kappa.ci_high,
                     kappa_note=kappa.note, source=f"expert audits in run(s) {', '.join(runs)}")


def _stored_evidence(store_path: str | Path, rubric: Rubric, judge_model: str | None) -> list[_Evidence]:
    with TrustStore(store_path) as trust:
        results = trust.agreement_results(rubric.id, rubric.version_tag)
    return [_Evidence(n=r.n, kappa=r.kappa, ci_low=r.kappa_ci_low, ci_high=r.kappa_ci_high,
                      kappa_note=r.report.get("kappa_quadratic", {}).get("note"),
                      source=f"{r.source} ({r.source_detail})")
            for r in results
            if r.source != "audit" and (judge_model is None or r.judge_model == judge_model)]


def trust_status(store_path: str | Path, rubric: Rubric, *, judge_model: str | None = None,
                 n_boot: int = 1000) -> TrustStatus:
    """Whether `rubric` (this exact version) meets its trust bar, with the numbers and the reason."""
    store_path = store_target(store_path)
    bar = rubric.trust
    base: _BarFields = {"rubric_id": rubric.id, "version_tag": rubric.version_tag,
                        "min_kappa": bar.min_kappa if bar else None, "min_items": bar.min_items if bar else None}
    if isinstance(store_path, Path) and not store_path.is_file():
        return TrustStatus(**base, trusted=None,
                           reason=f"no run store at {display_location(store_path)}, so no audits")
    candidates = [e for e in [_audit_evidence(store_path, rubric, judge_model, n_boot)] if e is not None]
    candidates += _stored_evidence(store_path, rubric, judge_model)
    if not candidates or max(e.n for e in candidates) == 0:
        who = f" with judge {judge_model}" if judge_model else ""
        return TrustStatus(**base, trusted=None, reason=f"no audited items for this version{who} yet "
                                                        f"(audit it in the app, or import human labels)")
    best = max(candidates, key=lambda e: e.n)     # stable: live audits win a tie
    numbers: _MeasuredFields = {**base, "kappa": best.kappa, "kappa_ci_low": best.ci_low, "kappa_ci_high": best.ci_high,
                                "n": best.n, "source": best.source}
    measured = f"{_kappa_text(best.kappa, best.ci_low, best.ci_high)} on {best.n} item{'s' if best.n != 1 else ''} ({best.source})"
    if bar is None:
        return TrustStatus(**numbers, trusted=None, reason=f"{measured}; the rubric sets no trust bar "
                                                           f"(add trust: {{min_kappa: …, min_items: …}})")
    check = check_bar(bar, TrustEvidence(kappa=best.kappa, n_items=best.n))
    reason = {
        "too_few_items": f"{measured}; the bar needs at least {bar.min_items} audited items",
        "kappa_undefined": f"{measured}: {best.kappa_note or 'undefined'}",
        "below_bar": f"{measured} is below the bar κ ≥ {bar.min_kappa:g}",
        None: f"{measured} meets the bar κ ≥ {bar.min_kappa:g}",
    }[check.shortfall]
    return TrustStatus(**numbers, trusted=check.trusted, reason=reason)


class ReleaseGateResult(BaseModel):
    passed: bool
    statuses: list[TrustStatus]
    blocking: list[TrustStatus]

    def summary(self) -> str:
        head = "trust gate: passed" if self.passed else f"trust gate: FAILED ({len(self.blocking)} rubric(s))"
        return "\n".join([head, *(f"  {s.summary()}" for s in self.statuses)])


def release_gate(store_path: str | Path, rubrics: Sequence[Rubric], *, require_known: bool = False,
                 judge_model: str | None = None) -> ReleaseGateResult:
    """For CI: fail on any rubric measured below its bar; with require_known, also on any rubric with a bar whose
    trust is still unknown. Rubrics without a bar never block."""
    statuses = [trust_status(store_path, rubric, judge_model=judge_model) for rubric in rubrics]
    blocking = [s for s in statuses if s.min_kappa is not None
                and (s.trusted is False or (require_known and s.trusted is None))]
    return ReleaseGateResult(passed=not blocking, statuses=statuses, blocking=blocking)


def run_warnings(store_path: str | Path, rubrics: Iterable[Rubric], *, judge_model: str | None = None) -> list[str]:
    """One line per rubric that has a trust bar it does not (yet) meet — for `rubriceval run` to print."""
    warnings = []
    for rubric in rubrics:
        if rubric.trust is None:
            continue
        status = trust_status(store_path, rubric, judge_model=judge_model)
        if status.trusted is not True:
            verb = "is below" if status.trusted is False else "has not yet met"
            warnings.append(f"warning: rubric {rubric.id} {rubric.version_tag} {verb} its trust bar: {status.reason}")
    return warnings


def agreement_lines(store_path: str | Path, rubrics: Iterable[Rubric], *, judge_model: str | None = None,
                    n_boot: int = 200) -> dict[str, Message]:
    """rubric id → one short line for reports, in plain words and either language (`rubriceval.i18n.render`), e.g.
    'v3@…: agreement 0.71 [0.58, 0.80] on 120 audited item(s) — trusted (needs ≥ 0.6 on ≥ 50 items)'."""
    return {rubric.id: agreement_line(trust_status(store_path, rubric, judge_model=judge_model, n_boot=n_boot))
            for rubric in rubrics}


def agreement_line(status: TrustStatus) -> Message:
    bar = {"min_kappa": f"{status.min_kappa:g}", "min_items": status.min_items} if status.min_kappa is not None else {}
    if status.n == 0:
        return msg("trust_not_audited_bar", version=status.version_tag, **bar) if bar else \
            msg("trust_not_audited", version=status.version_tag)
    if status.trusted is not None:
        verdict = msg("trust_trusted" if status.trusted else "trust_untrusted", **bar)
    elif not bar:
        verdict = msg("trust_no_bar")
    elif status.kappa is None:
        verdict = msg("trust_undefined")
    else:
        verdict = msg("trust_too_few", min_items=status.min_items)
    kappa = "—" if status.kappa is None else _kappa_text(status.kappa, status.kappa_ci_low,
                                                         status.kappa_ci_high).removeprefix("κ = ")
    return msg("trust_line", version=status.version_tag, kappa=kappa, n=status.n, verdict=verdict)
