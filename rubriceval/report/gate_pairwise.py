"""Gate checks on a pairwise A/B comparison: "pairwise:emotional_soothing win_rate>=0.5" (syntax: gate_checks.py).

Which comparison: the gate file's `pairwise:` (a comparison name or id); else the gated RUN argument when it names
a comparison; else the newest comparison that includes the gated run (`latest`: the latest run, or failing that
the latest comparison). Which versions: the gated run when it is one of the compared versions, else the last
version, against the baseline — the first version compared.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubriceval.common.errors import RubricEvalError
from rubriceval.pairwise.store import ComparisonInfo, PairwiseStore
from rubriceval.pairwise.summary import PairStats, summarize_pairwise
from rubriceval.report.gate_checks import GateCheck, GateUsageError
from rubriceval.report.gate_sources import GateTarget, SourceResults


def resolve_comparison(store: PairwiseStore, runs: Any, run: str, explicit: str | None) -> ComparisonInfo:
    if explicit:
        return store.info(explicit)
    if run != "latest" and store.find(run):
        return store.info(run)
    try:
        run_id = runs.resolve(run)
    except RubricEvalError:
        run_id = None
    found = store.latest_with_runs([run_id]) if run_id else None
    if found is None and run == "latest":
        found = store.info("latest") if store.find("latest") else None
    if found is None:
        raise GateUsageError(f"no pairwise comparison includes run '{run}'", field="gate",
                             hint="run `rubriceval pairwise BASELINE CANDIDATE --rubrics DIR` first, or name the "
                                  "comparison with 'pairwise:' in the gate file")
    return found


def _candidate(info: ComparisonInfo, runs: Any, run: str) -> tuple[str, str]:
    """(candidate, baseline) labels."""
    baseline = info.versions[0].label
    try:
        run_id = runs.resolve(run)
    except RubricEvalError:
        run_id = None
    gated = next((v.label for v in info.versions if run_id and v.run_id == run_id), None)
    candidate = gated if gated and gated != baseline else info.versions[-1].label
    return candidate, baseline


def _scorer(info: ComparisonInfo, scorers: Sequence[str], wanted: str) -> str:
    names = {d.get("name"): d.get("id") for d in info.config.rubric_definitions}
    for candidate in (wanted, names.get(wanted)):
        if candidate is not None and candidate in scorers:
            return candidate
    raise GateUsageError(f"comparison '{info.name}' has no pairwise verdicts for '{wanted}'", field="gate",
                         hint=f"available: {', '.join(scorers) or 'none'}")


def _value(pair: PairStats, stat: str, candidate: str) -> tuple[float | None, str | None]:
    rate, low, _high = pair.rates_for(candidate)
    values = {"win_rate": rate, "win_rate_low": low, "loss_rate": pair.share("loss", candidate),
              "tie_rate": pair.share("tie", candidate), "unscored_rate": pair.unscored_rate,
              "n_scored": float(pair.n_scored)}
    value = values[stat]
    if value is None:
        return None, pair.note or f"{stat} is undefined (no scored judgement, or too few for a CI)"
    return value, None


def evaluate_pairwise_checks(store_path: Any, runs: Any, run: str, checks: Sequence[GateCheck],
                             explicit: str | None = None) -> tuple[list[Any], ComparisonInfo]:
    """The CheckResults of pairwise checks, and the comparison they were read from."""
    from rubriceval.report.gate_result import check_result

    with PairwiseStore(store_path) as store:
        info = resolve_comparison(store, runs, run, explicit)
        verdicts = store.verdicts(info.comparison_id)
    summary = summarize_pairwise(info, verdicts)
    candidate, baseline = _candidate(info, runs, run)
    results = []
    for check in checks:
        scorer = _scorer(info, summary.scorers, check.scorer or "")
        pair = summary.pair(scorer, candidate, baseline)
        actual, why = _value(pair, check.stat, candidate)
        rate, low, high = pair.rates_for(candidate)
        wins = pair.wins_b if candidate == pair.version_b else pair.wins_a
        losses = pair.wins_a if candidate == pair.version_b else pair.wins_b
        extra = (f" ({candidate} vs {baseline} in '{info.name}': {wins} won, {pair.ties} tied, {losses} lost of "
                 f"{pair.n_scored} scored, {pair.n_unscored} unscored"
                 + ("" if low is None else f"; win rate 95% CI [{low:.2f}, {high:.2f}]") + ")")
        results.append(check_result(check, check.label(), actual, why, [], False, scorer, extra))
    return results, info


def evaluate_source(target: GateTarget, checks: Sequence[GateCheck]) -> SourceResults:
    """The pairwise source's checks; a gate of them alone is reported under the comparison's name."""
    results, info = evaluate_pairwise_checks(target.store.path, target.store, target.run, checks,
                                             target.config.pairwise)
    return SourceResults(results, run=info.name, run_id=info.comparison_id)
