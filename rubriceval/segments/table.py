"""Per-segment results of a run: for each grouping (`--by`), each segment × rubric/metric's samples, scored and
unscored rows, mean and pass rate — unscored rows counted, never averaged in.

A run's scorecards (rubriceval/scorecard/) are rows of their own: the mean total (also in the scorecard-total
column), the pass rate at the scorecard's pass_total, and the share of conversations with a fatal item hit.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

from rubriceval.audit.scored_rows import (
    AWAITING,
    FATAL,
    SCORECARD,
    ScoredRow,
    official_view,
    run_rows,
    scorecard_thresholds,
)
from rubriceval.data.segment_spec import Grouping, SegmentError, TimeSettings
from rubriceval.data.segment_values import SampleKeys, segment_keys
from rubriceval.standard_metrics.thresholds import metric_threshold
from rubriceval.stats.describe import describe


class SegmentStats(BaseModel):
    """One scorer's results on the samples of one segment."""

    grouping: str                       # the grouping's label: agent_id, agent_id+week …
    values: dict[str, str]              # field label → value ('(none)': samples without it)
    scorer: str
    n_samples: int
    n_scored: int
    n_unscored: int
    mean: float | None
    pass_rate: float | None
    threshold: float | None = None
    n_awaiting: int = 0                    # a scorecard's row: totals awaiting review (counted apart, in no mean)
    scorecard_total: float | None = None   # a scorecard's row: its mean total (rubrics and metrics: None)
    fatal_rate: float | None = None        # a scorecard's row: share of conversations with a fatal item hit
    # Official scores (audit/official.py): of the rows, n_human are human decisions; the judge's mean beside them
    n_human: int = 0
    machine_mean: float | None = None

    @property
    def segment(self) -> str:
        return " · ".join(self.values.values())


class SegmentTable(BaseModel):
    grouping: str
    fields: list[str]
    rows: list[SegmentStats] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def to_pandas(self) -> pd.DataFrame:
        return pd.DataFrame([{**r.values, **r.model_dump(exclude={"values", "grouping"})} for r in self.rows],
                            dtype=object)

    def for_scorer(self, scorer: str) -> list[SegmentStats]:
        return [r for r in self.rows if r.scorer == scorer]


class Cell:
    """What one (segment, scorer) accumulates: rows, unscored rows, scored values; and of the rows a human
    decided, how many, and the judge's scored values in their place (so the judge's mean can be said beside)."""

    __slots__ = ("n_rows", "n_unscored", "n_awaiting", "n_fatal", "scores", "n_human", "machine_sum", "machine_n")

    def __init__(self) -> None:
        self.n_rows = 0
        self.n_unscored = 0
        self.n_awaiting = 0             # awaiting review (scorecard totals, pending rubric verdicts): not unscored
        self.n_fatal = 0
        self.scores = array("d")
        self.n_human = 0
        self.machine_sum = 0.0          # the judge's scores, summed over all rows (human-decided or not)
        self.machine_n = 0

    def add(self, score: float | None, fatal: bool = False, human: bool = False, machine: float | None = None,
            awaiting: bool = False) -> None:
        self.n_rows += 1
        self.n_fatal += fatal
        if score is None and awaiting:
            self.n_awaiting += 1
        elif score is None:
            self.n_unscored += 1
        else:
            self.scores.append(score)
        judged = machine if human else score
        self.n_human += human
        if judged is not None:
            self.machine_sum += judged
            self.machine_n += 1

    @property
    def machine_mean(self) -> float | None:
        return self.machine_sum / self.machine_n if self.n_human and self.machine_n else None


class SegmentCells:
    """(grouping, segment, scorer) → Cell, filled sample by sample; checks each field appears somewhere."""

    def __init__(self, groupings: Sequence[Grouping], settings: TimeSettings):
        self.groupings = list(groupings)
        self.settings = settings
        self.cells: dict[tuple[str, tuple[str, ...], str], Cell] = {}
        self.seen: set[str] = set()
        self.kinds: dict[str, str] = {}          # scorer → rubric, metric or scorecard
        self.n_samples = 0

    def add(self, keys: SampleKeys, rows: Iterable[ScoredRow], extra: tuple[str, ...] = ()) -> None:
        """One sample's verdicts; `extra` prefixes every segment (trend: the period)."""
        self.n_samples += 1
        rows = list(rows)
        for grouping in self.groupings:
            for segment in segment_keys(keys, grouping, self.settings, self.seen):
                for row in rows:
                    key = (grouping.label, extra + segment, row.scorer)
                    cell = self.cells.get(key)
                    if cell is None:
                        cell = self.cells[key] = Cell()
                        self.kinds.setdefault(row.scorer, row.kind)
                    cell.add(row.score, row.details_json == FATAL, row.human, row.machine,
                             row.details_json == AWAITING or row.pending)

    def check_fields(self, where: str = "") -> None:
        """A field that no sample has is a mistake (a typo, an import without that column): say which."""
        if not self.n_samples:
            return
        for grouping in self.groupings:
            for field in grouping.fields:
                if field.label not in self.seen:
                    what = f"the timestamp '{field.name}'" if field.bucket and field.name else \
                        "a start time (metadata started_at/timestamp … or turn timestamps)" if field.bucket else \
                        f"the field '{field.name}'"
                    raise SegmentError(f"no sample{' of ' + where if where else ''} has {what}", field=field.label,
                                       hint="segments read a sample's metadata keys, 'tag' and 'intent'")


def scorer_thresholds(scorers: Sequence[Mapping[str, Any]],
                      metric_thresholds: Mapping[str, float] | None = None) -> dict[str, float | None]:
    """Each scorer's pass threshold, as the run's summary reads it (report/aggregate.py)."""
    out: dict[str, float | None] = {}
    for row in scorers:
        definition = row.get("definition") or {}
        if row.get("kind") == "rubric":
            threshold = definition.get("threshold")
            out[row["scorer"]] = None if threshold is None else float(threshold)
        else:
            out[row["scorer"]] = metric_threshold(row["scorer"], definition, metric_thresholds)[0]
    return out


def tables_from_cells(cells: SegmentCells, thresholds: Mapping[str, float | None],
                      scorer_order: Sequence[str] = ()) -> list[SegmentTable]:
    order = {s: i for i, s in enumerate(scorer_order)}
    tables = []
    for grouping in cells.groupings:
        labels = [f.label for f in grouping.fields]
        table = SegmentTable(grouping=grouping.label, fields=labels)
        keys = sorted((k for k in cells.cells if k[0] == grouping.label),
                      key=lambda k: (order.get(k[2], 1 << 30), k[2], k[1]))
        for key in keys:
            cell = cells.cells[key]
            threshold = thresholds.get(key[2])
            stats = describe(cell.scores, threshold)
            scorecard = cells.kinds.get(key[2]) == SCORECARD      # its total's mean, and the share of fatal hits
            table.rows.append(SegmentStats(grouping=grouping.label, values=dict(zip(labels, key[1])), scorer=key[2],
                                           n_samples=cell.n_rows, n_scored=stats.n_scored, n_unscored=cell.n_unscored,
                                           mean=stats.mean, pass_rate=stats.pass_rate, threshold=threshold,
                                           scorecard_total=stats.mean if scorecard else None,
                                           fatal_rate=cell.n_fatal / cell.n_rows if scorecard and cell.n_rows
                                           else None, n_human=cell.n_human, machine_mean=cell.machine_mean,
                                           n_awaiting=cell.n_awaiting))
        tables.append(table)
    return tables


def segment_tables(store: Any, run: str, groupings: Sequence[Grouping], settings: TimeSettings | None = None,
                   metric_thresholds: Mapping[str, float] | None = None, *, machine_only: bool = False
                   ) -> list[SegmentTable]:
    """The run's per-segment tables, one per grouping, read from the store a span at a time; on official scores
    (each row says how many are human-decided), machine_only: the judge's."""
    from rubriceval.store.db import Database

    settings = settings or TimeSettings()
    run_id = store.resolve(run)
    scorers = store.scorers(run_id)
    cells = SegmentCells(groupings, settings)
    view = official_view(store, run_id, machine_only=machine_only)
    db = Database(store.path, read_only=True)
    try:
        for chunk in run_rows(db, run_id, view=view):
            for keys, rows in chunk:
                cells.add(keys, rows)
        thresholds = {**scorer_thresholds(scorers, metric_thresholds), **scorecard_thresholds(db, run_id)}
    finally:
        db.close()
    cells.check_fields(f"run '{store.run_info(run_id).name}'")
    return tables_from_cells(cells, thresholds, [s["scorer"] for s in scorers])
