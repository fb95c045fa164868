"""A trend: per period and segment, each rubric/metric's mean (bootstrap CI) and pass rate (Wilson CI), and the
change against the previous period with an unpaired test (periods hold different conversations, so the paired
`compare` does not apply).

Periods are runs (each run one period, in the order of their increment period when an incremental run recorded one,
else of creation), or day/week/month buckets of the samples' start times pooled over the runs (a conversation in
several runs counts once, with its newest run's verdicts).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, Field

from rubriceval.audit.scored_rows import official_view, run_rows, scorecard_thresholds
from rubriceval.common.errors import RubricEvalError
from rubriceval.data.segment_spec import Grouping, SegmentField, TimeSettings, parse_field
from rubriceval.data.segment_values import field_values
from rubriceval.segments.table import Cell, SegmentCells, scorer_thresholds
from rubriceval.stats.bootstrap import paired_bootstrap_ci
from rubriceval.stats.unpaired import Difference, mean_difference, wilson_interval
from rubriceval.store.db import Database

Statistic = Literal["mean", "pass_rate"]


class PeriodFigure(BaseModel):
    period: str
    segment: dict[str, str] = Field(default_factory=dict)   # {} without --by
    scorer: str
    n_samples: int
    n_scored: int
    n_unscored: int
    n_awaiting: int = 0                       # scorecard totals awaiting review: counted apart, in no mean
    mean: float | None = None
    mean_low: float | None = None
    mean_high: float | None = None
    pass_rate: float | None = None
    pass_low: float | None = None
    pass_high: float | None = None
    change: Difference | None = None          # of the trend's statistic, against the previous period
    # Official scores (audit/official.py): of the period's rows, n_human are human decisions; the judge's mean beside
    n_human: int = 0
    machine_mean: float | None = None

    @property
    def segment_label(self) -> str:
        return " · ".join(self.segment.values()) or "all"

    def value(self, statistic: Statistic) -> float | None:
        return self.mean if statistic == "mean" else self.pass_rate


class Trend(BaseModel):
    statistic: Statistic = "mean"
    period_kind: str = "run"                  # run, day, week, month
    periods: list[str] = Field(default_factory=list)
    grouping: str = "all"
    machine_only: bool = False                # the judge's scores, human decisions left out
    rows: list[PeriodFigure] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def series(self, scorer: str) -> dict[str, list[PeriodFigure]]:
        """segment label → its figures in period order (periods where it has no rows are absent)."""
        out: dict[str, list[PeriodFigure]] = {}
        for row in self.rows:
            if row.scorer == scorer:
                out.setdefault(row.segment_label, []).append(row)
        return out

    @property
    def scorers(self) -> list[str]:
        return list(dict.fromkeys(r.scorer for r in self.rows))

    def to_pandas(self) -> pd.DataFrame:
        return pd.DataFrame([{"period": r.period, **r.segment, "scorer": r.scorer,
                              **r.model_dump(exclude={"period", "segment", "scorer", "change"}),
                              "change": r.change.delta if r.change else None,
                              "p_value": r.change.p_value if r.change else None,
                              "test": r.change.test if r.change else None} for r in self.rows], dtype=object)


def increment_periods(db: Database) -> dict[str, tuple[str, str]]:
    """run id → (period label, period end) of the runs an incremental run recorded (rubriceval/incremental/)."""
    try:
        rows = db.execute("SELECT run_id, label, period_end FROM increments").fetchall()
    except Exception:                   # a store without incremental runs has no such table
        return {}
    return {r[0]: (r[1], r[2] or "") for r in rows}


def ordered_runs(store: Any, runs: Sequence[str], db: Database) -> list[tuple[str, str]]:
    """(run id, period label) of the given runs (default: every complete run), in period order."""
    infos = [store.run_info(r) for r in runs] if runs else [i for i in store.list_runs() if i.status == "complete"]
    if not infos:
        raise RubricEvalError("no runs to follow", file=store.location, hint="pass run names, or run some first")
    periods = increment_periods(db)

    def key(info: Any) -> tuple[str, float]:
        return (periods[info.run_id][1] if info.run_id in periods else "", info.created_at)
    ordered = sorted(infos, key=key)
    return [(i.run_id, periods[i.run_id][0] if i.run_id in periods else i.name) for i in ordered]


def compute_trend(store: Any, runs: Sequence[str] = (), *, period: str = "run", by: Grouping | None = None,
                  scorers: Sequence[str] = (), statistic: Statistic = "mean", settings: TimeSettings | None = None,
                  n_boot: int = 2000, seed: int = 0, machine_only: bool = False) -> Trend:
    """The trend over `runs` (default every complete run of the store); period 'run' or day/week/month[:field].
    On official scores (each point says how many of its rows are human-decided); machine_only: the judge's."""
    settings = settings or TimeSettings()
    grouping = by or Grouping()
    bucket: SegmentField | None = None
    if period != "run":
        bucket = parse_field(period, period)
        if bucket.bucket is None:
            raise RubricEvalError(f"--period {period!r} is not run, day, week or month[:timestamp field]",
                                  field="period")
    db = Database(store.path, read_only=True)
    try:
        ordered = ordered_runs(store, runs, db)
        cells = SegmentCells([grouping], settings)
        thresholds: dict[str, float | None] = {}
        seen: set[str] = set()
        no_time = 0
        # newest run first: a conversation judged in several runs counts once, with its newest verdicts
        for run_id, label in reversed(ordered):
            thresholds = {**scorer_thresholds(store.scorers(run_id)), **scorecard_thresholds(db, run_id),
                          **thresholds}
            for chunk in run_rows(db, run_id, view=official_view(store, run_id, machine_only=machine_only)):
                for keys, rows in chunk:
                    if bucket is not None:
                        if keys.sample_id in seen:
                            continue
                        seen.add(keys.sample_id)
                        values = field_values(keys, bucket, settings)
                        if values is None:
                            no_time += 1
                            continue
                        label = values[0]
                    wanted = [r for r in rows if not scorers or r.scorer in scorers]
                    cells.add(keys, wanted, extra=(label,))
    finally:
        db.close()
    if grouping.fields:
        cells.check_fields()
    trend = Trend(statistic=statistic, period_kind="run" if bucket is None else bucket.label, grouping=grouping.label,
                  machine_only=machine_only)
    if machine_only:
        trend.notes.append("machine-only: the judge's scores, human decisions left out")
    if bucket is not None:
        if no_time and no_time == len(seen):
            raise RubricEvalError("no sample has a start time to bucket by", field=bucket.label,
                                  hint="metadata started_at (importers write it), a named field, or turn timestamps")
        if no_time:
            trend.notes.append(f"{no_time} sample(s) without a start time are left out of the periods")
        trend.periods = sorted({key[1][0] for key in cells.cells})
    else:
        trend.periods = [label for _, label in ordered]
    trend.rows = _figures(cells.cells, trend.periods, thresholds, statistic, n_boot, seed)
    if scorers:
        missing = [s for s in scorers if s not in {r.scorer for r in trend.rows}]
        if missing:
            raise RubricEvalError(f"no verdicts of {', '.join(missing)} in these runs", field="scorer",
                                  hint="available: " + ", ".join(sorted(thresholds)))
    return trend


def _figures(cells: Mapping[tuple[str, tuple[str, ...], str], Cell], periods: Sequence[str],
             thresholds: Mapping[str, float | None], statistic: Statistic, n_boot: int, seed: int
             ) -> list[PeriodFigure]:
    order = {p: i for i, p in enumerate(periods)}
    by_series: dict[tuple[str, tuple[str, ...]], list[tuple[str, Cell]]] = {}
    fields: dict[tuple[str, ...], dict[str, str]] = {}
    for (grouping, key, scorer), cell in cells.items():
        by_series.setdefault((scorer, key[1:]), []).append((key[0], cell))
        fields[key[1:]] = dict(zip(grouping.split("+"), key[1:])) if grouping != "all" else {}
    out = []
    for (scorer, segment), points in sorted(by_series.items()):
        previous: list[float] | None = None
        threshold = thresholds.get(scorer)
        for period, cell in sorted(points, key=lambda p: order.get(p[0], 1 << 30)):
            scores = list(cell.scores)
            figure = PeriodFigure(period=period, segment=fields[segment], scorer=scorer, n_samples=cell.n_rows,
                                  n_scored=len(scores), n_unscored=cell.n_unscored, n_awaiting=cell.n_awaiting,
                                  n_human=cell.n_human,
                                  machine_mean=cell.machine_mean)
            if scores:
                figure.mean = sum(scores) / len(scores)
                figure.mean_low, figure.mean_high = paired_bootstrap_ci(scores, n_boot, seed)
            passed = [1.0 if s >= threshold else 0.0 for s in scores] if threshold is not None else None
            if passed:
                figure.pass_rate = sum(passed) / len(passed)
                figure.pass_low, figure.pass_high = wilson_interval(int(sum(passed)), len(passed))
            current = scores if statistic == "mean" else passed
            if previous is not None and current is not None:
                figure.change = mean_difference(previous, current, seed=seed)
            if current:
                previous = current
            out.append(figure)
    return out
