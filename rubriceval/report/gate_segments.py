"""Gate checks per segment ("qa mean>=4 by agent_id"): the check holds in every segment, or fails naming the
segments where it does not (a segment whose rows are all unscored cannot be computed, and fails)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubriceval.data.segment_spec import TimeSettings, parse_by
from rubriceval.report.gate_checks import GateCheck, GateConfig, GateUsageError
from rubriceval.report.gate_result import CheckResult, format_figure, meets
from rubriceval.report.gate_sources import GateTarget, SourceResults
from rubriceval.segments.table import SegmentStats, segment_tables

SEGMENT_STATS = ("mean", "pass_rate", "n_scored", "unscored_rate")
MAX_NAMED = 10               # failing segments named in a check's reason (the count says how many in all)


def _value(row: SegmentStats, stat: str) -> float | None:
    if stat == "unscored_rate":
        return row.n_unscored / row.n_samples if row.n_samples else None
    if stat == "n_scored":
        return float(row.n_scored)
    return getattr(row, stat)


def scorecard_ids(store: Any, run_id: str) -> list[str]:
    from rubriceval.audit.scored_rows import scorecard_thresholds
    from rubriceval.store.db import Database

    db = Database(store.path, read_only=True)
    try:
        return list(scorecard_thresholds(db, run_id))
    finally:
        db.close()


def scorer_id(scorers: Sequence[dict[str, Any]], name: str, run: str, scorecards: Sequence[str] = ()) -> str:
    """A rubric/metric id or display name, or a scorecard id ("qa" or "qa total") → the id its rows carry."""
    for row in scorers:
        if row["scorer"] == name:
            return name
    for card in scorecards:
        if name in (card, f"{card} total"):
            return card
    named = [row["scorer"] for row in scorers if (row.get("definition") or {}).get("name") == name]
    if len(named) == 1:
        return named[0]
    raise GateUsageError(f"run '{run}' has no rubric, metric or scorecard '{name}' (or the name is ambiguous)",
                         field="gate", hint="available: " + ", ".join([*(r["scorer"] for r in scorers), *scorecards]))


def evaluate_segment_checks(store: Any, run: str, checks: Sequence[GateCheck], config: GateConfig, *,
                            machine_only: bool = False) -> list[CheckResult]:
    """One result per check: passed when every segment of its groupings passes (official scores; machine_only: the
    judge's)."""
    settings = TimeSettings(zone=config.tz, naive_zone=config.naive_tz)
    info = store.run_info(run)
    scorers = store.scorers(info.run_id)
    results = []
    for check in checks:
        if check.scorer is None or check.stat not in SEGMENT_STATS:
            raise GateUsageError(f"gate check '{check.label()}': per segment, gate a rubric or metric's "
                                 f"{', '.join(SEGMENT_STATS)}", field="gate")
        scorer = scorer_id(scorers, check.scorer, info.name, scorecard_ids(store, info.run_id))
        tables = segment_tables(store, info.run_id, parse_by(check.by), settings, config.metric_thresholds or None,
                                machine_only=machine_only)
        rows = [(table.grouping, row) for table in tables for row in table.for_scorer(scorer)]
        failing, missing = [], []
        for _grouping, row in rows:
            actual = _value(row, check.stat)
            if actual is None:
                missing.append(row.segment)
            elif not meets(actual, check.op, check.value):
                failing.append(f"{row.segment} ({format_figure(actual)}, n={row.n_scored})")
        expected = f"{check.op} {check.value:g}"
        if not rows:
            reason, passed = f"cannot be computed: no segment has '{scorer}' rows", False
        elif failing or missing:
            passed = False
            parts = []
            if failing:
                parts.append(f"fails {expected} in {len(failing)} of {len(rows)} segments: "
                             + ", ".join(failing[:MAX_NAMED]) + (" …" if len(failing) > MAX_NAMED else ""))
            if missing:
                parts.append(f"cannot be computed (no scored rows) in {len(missing)}: "
                             + ", ".join(missing[:MAX_NAMED]) + (" …" if len(missing) > MAX_NAMED else ""))
            reason = "; ".join(parts)
        else:
            worst = min(_value(row, check.stat) or 0 for _, row in rows) if check.op in (">=", ">") else \
                max(_value(row, check.stat) or 0 for _, row in rows)
            reason, passed = f"all {len(rows)} segments {expected} (worst {format_figure(worst)})", True
        results.append(CheckResult(name=check.label(), stat=check.stat, scorer=scorer, passed=passed,
                                   actual=None, expected=expected, reason=reason))
    return results


def evaluate_source(target: GateTarget, checks: Sequence[GateCheck]) -> SourceResults:
    """The run source's "… by <fields>" checks."""
    return SourceResults(evaluate_segment_checks(target.store, target.info().run_id, checks, target.config,
                                                 machine_only=target.machine_only))
