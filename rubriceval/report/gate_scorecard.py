"""Gate figures of scorecards: `scorecard:<id> total mean>=90`, `scorecard:<id> fatal_rate<=0.01`, and the bare
run-level `fatal_rate<=0.01` (every scorecard of the run: fatal conversations over all conversations they scored).
Items awaiting review (issues 39, 44): `scorecard:<id> awaiting_review_rate<=0.1`, `… n_awaiting_review<=5`, and the
bare run-level `awaiting_review_rate<=0.1` — a gate fails when too many totals still wait for a reviewer (the means
it reads are over decided totals only).
Parsed in report/gate_checks.py (source "scorecard"); read here from the run's scorecard summaries."""
from __future__ import annotations

from collections.abc import Sequence

from rubriceval.report.gate_checks import GateCheck, GateUsageError
from rubriceval.report.gate_sources import GATE_SOURCES, GateTarget, SourceResults
from rubriceval.report.scorecard_summary import ScorecardSummary

SCORECARD_PREFIX = GATE_SOURCES["scorecard"].prefixes[0]
SCORECARD_STATS = GATE_SOURCES["scorecard"].stats


def parse_scorecard(lhs: str, text: str) -> tuple[str, str | None]:
    """The scorecard source's left-hand side: 'scorecard:<id> [total] [stat]', or the bare 'fatal_rate'."""
    parsed = split_scorecard(lhs[len(SCORECARD_PREFIX):]) if lhs.lower().startswith(SCORECARD_PREFIX) else \
        (lhs.strip().lower(), None)             # a bare run-level figure (gate_sources: fatal_rate, …)
    if parsed is None:
        raise GateUsageError(f"gate check {text!r} names no scorecard", field="gate",
                             hint="write e.g. 'scorecard:ecommerce_qa_zh total mean>=90' or 'fatal_rate<=0.01'")
    return parsed


def evaluate_source(target: GateTarget, checks: Sequence[GateCheck]) -> SourceResults:
    """Checks on the run's scorecard totals."""
    from rubriceval.report.gate_result import check_result
    from rubriceval.report.scorecard_summary import run_scorecard_summaries

    summaries = run_scorecard_summaries(target.store, target.info().run_id, machine_only=target.machine_only)
    results = []
    for check in checks:
        try:
            actual, why, extra = scorecard_figure(summaries, check.scorer, check.stat)
        except LookupError as exc:
            raise GateUsageError(str(exc), field="gate") from None
        results.append(check_result(check, check.label(), actual, why, [], False, check.scorer, extra))
    return SourceResults(results)


def split_scorecard(rest: str) -> tuple[str, str] | None:
    """'qa total mean' → ('mean', 'qa'); 'qa fatal_rate' → ('fatal_rate', 'qa'); the statistic defaults to the
    total's mean ('total' may be written or not). None when no scorecard id is named."""
    words = rest.split()
    stat = "mean"
    if words and words[-1].lower() in SCORECARD_STATS + ("avg", "average"):
        stat = {"avg": "mean", "average": "mean"}.get(words[-1].lower(), words[-1].lower())
        words = words[:-1]
    if words and words[-1].lower() == "total":
        words = words[:-1]
    return (stat, " ".join(words)) if words else None


def scorecard_figure(summaries: Sequence[ScorecardSummary], scorecard: str | None, stat: str
                     ) -> tuple[float | None, str | None, str]:
    """(value, why it is missing, what it was read from) for one check."""
    if scorecard is None:                       # a bare run-level rate over every scorecard
        n = sum(s.n for s in summaries)
        if not n:
            return None, "the run has no scorecard verdicts", ""
        if stat == "awaiting_review_rate":
            waiting = sum(s.n_awaiting for s in summaries)
            return waiting / n, None, f" ({waiting}/{n} conversations awaiting review)"
        fatal = sum(len(s.fatal) for s in summaries)
        return fatal / n, None, f" ({fatal}/{n} conversations fatal)"
    found = [s for s in summaries if s.scorecard == scorecard or s.name == scorecard]
    if not found:
        available = ", ".join(s.scorecard for s in summaries) or "none"
        raise LookupError(f"the run has no scorecard '{scorecard}' (available: {available})")
    summary = found[0]
    value = summary.stat(stat)
    why = None if value is not None else ("no scored total" if stat != "pass_rate" else
                                          "the scorecard declares no pass_total" if summary.pass_total is None
                                          else "no scored total")
    awaiting = f", {summary.n_awaiting} awaiting review" if summary.n_awaiting else ""
    extra = (f" ({summary.n_scored} scored, {summary.n_unscored} unscored{awaiting}, {len(summary.fatal)} fatal of "
             f"{summary.n})")
    if summary.note:
        extra += f" ({summary.note})"
    return value, why, extra
