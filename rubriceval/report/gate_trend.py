"""The gate on a drop ("trend:qa mean drop<=0.3"): the latest period's figure against the previous period's, per
segment with "by"; periods are runs (default: the store's complete runs up to the gated one, or `trend_runs:` of
the gate file), or day/week/month buckets when "by" names one ("trend:qa mean drop<=0.3 by week")."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubriceval.data.segment_spec import Grouping, TimeSettings, parse_by
from rubriceval.report.gate_checks import GateCheck, GateConfig, GateUsageError
from rubriceval.report.gate_result import CheckResult, format_figure, meets
from rubriceval.report.gate_segments import scorecard_ids, scorer_id
from rubriceval.report.gate_sources import GateTarget, SourceResults
from rubriceval.trend.series import PeriodFigure, Statistic, compute_trend

MAX_NAMED = 10


def _runs_up_to(store: Any, run_id: str) -> list[str]:
    gated = store.run_info(run_id)
    return [i.run_id for i in store.list_runs()
            if i.run_id == run_id or (i.status == "complete" and i.created_at <= gated.created_at)]


def _split_by(check: GateCheck) -> tuple[str, Grouping | None]:
    """'week+agent_id' → period 'week', segments by agent_id; no bucket → period 'run'."""
    if not check.by:
        return "run", None
    groupings = parse_by(check.by)
    if len(groupings) > 1:
        raise GateUsageError(f"gate check '{check.label()}': a trend follows one grouping ('+', not ',')",
                             field="gate")
    buckets = [f for f in groupings[0].fields if f.bucket]
    if len(buckets) > 1:
        raise GateUsageError(f"gate check '{check.label()}': one time bucket at most", field="gate")
    others = [f for f in groupings[0].fields if not f.bucket]
    return (buckets[0].label if buckets else "run"), (Grouping(fields=others) if others else None)


def _statistic(check: GateCheck) -> Statistic:
    """The check's statistic: mean or pass_rate, the only stats the trend source registers (gate_sources.py)."""
    if check.stat == "mean":
        return "mean"
    if check.stat == "pass_rate":
        return "pass_rate"
    raise GateUsageError(f"gate check '{check.label()}': a trend follows mean or pass_rate", field="gate")


def _drop(last: PeriodFigure, previous: PeriodFigure, stat: Statistic) -> float | None:
    a, b = previous.value(stat), last.value(stat)
    return None if a is None or b is None else a - b


def evaluate_trend_checks(store: Any, run_id: str, checks: Sequence[GateCheck], config: GateConfig, *,
                          machine_only: bool = False) -> list[CheckResult]:
    settings = TimeSettings(zone=config.tz, naive_zone=config.naive_tz)
    runs = config.trend_runs or _runs_up_to(store, run_id)
    results = []
    for check in checks:
        period, grouping = _split_by(check)
        scorer = scorer_id(store.scorers(run_id), check.scorer or "", store.run_info(run_id).name,
                           scorecard_ids(store, run_id))
        statistic = _statistic(check)
        trend = compute_trend(store, runs, period=period, by=grouping, scorers=[scorer], statistic=statistic,
                              settings=settings, n_boot=0, seed=config.seed, machine_only=machine_only)
        expected = f"{check.op} {check.value:g}"
        if len(trend.periods) < 2:
            results.append(CheckResult(name=check.label(), stat=check.stat, scorer=scorer, passed=False,
                                       expected=expected, reason=f"cannot be computed: {len(trend.periods)} period(s), "
                                                                 "a drop needs two"))
            continue
        last_period, previous_period = trend.periods[-1], trend.periods[-2]
        failing, lines = [], []
        for label, figures in trend.series(scorer).items():
            by_period = {f.period: f for f in figures}
            last, previous = by_period.get(last_period), by_period.get(previous_period)
            if last is None or previous is None:
                continue
            drop = _drop(last, previous, statistic)
            if drop is None:
                failing.append(f"{label} (not computable)")
                continue
            test = last.change
            noise = "" if test is None or test.p_value is None else \
                f", p={test.p_value:.3f} {test.test}: {'beyond' if test.beyond_noise() else 'within'} noise"
            before, after = format_figure(previous.value(statistic)), format_figure(last.value(statistic))
            text = f"{label}: {before} → {after}, drop {format_figure(drop)}{noise}"
            lines.append(text)
            if not meets(drop, check.op, check.value):
                failing.append(text)
        if not lines and not failing:
            reason, passed = f"cannot be computed: no segment has rows in both {previous_period} and {last_period}", False
        elif failing:
            reason = (f"{previous_period} → {last_period}: drop fails {expected} in {len(failing)} of "
                      f"{len(lines) + sum(1 for f in failing if f.endswith('(not computable)'))}: "
                      + "; ".join(failing[:MAX_NAMED]) + (" …" if len(failing) > MAX_NAMED else ""))
            passed = False
        else:
            reason, passed = f"{previous_period} → {last_period}: " + "; ".join(lines[:MAX_NAMED]), True
        results.append(CheckResult(name=check.label(), stat=check.stat, scorer=scorer, passed=passed,
                                   expected=expected, reason=reason))
    return results


def evaluate_source(target: GateTarget, checks: Sequence[GateCheck]) -> SourceResults:
    """The trend source's checks, on the periods up to the gated run."""
    return SourceResults(evaluate_trend_checks(target.store, target.info().run_id, checks, target.config,
                                               machine_only=target.machine_only))
