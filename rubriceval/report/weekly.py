"""The weekly QA report (周报, issue 40.4): per agent (id and name), per skill group and for everyone, a scorecard's
figures this period and the one before — conversations, the share a person reviewed, the official mean total with
its 95% CI, the change against the previous period and whether it is beyond noise, the fatal (一票否决) COUNT, and the
top deductions — in one table. A conversation whose total awaits review (an undecided item, or a machine decision
pending review: issues 39, 44) is counted apart (`awaiting`) and is in no mean until a reviewer decides it.

Totals are the official ones (audit/scorecard_official.official_pairs: reviews, adjudications and accepted appeals
applied by the card's arithmetic), the same every other surface reads; periods are the segment machinery's time
buckets (data/segment_values.field_values: ISO weeks in the report's zone); the CI and the unpaired test are the
trend's (stats/bootstrap.paired_bootstrap_ci, stats/unpaired.mean_difference), so a row here and the same segment
of `rubriceval trend --period week` agree. Several runs are pooled as the trend pools them (a conversation in several
runs counts once, with its newest run's verdict)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.audit.scorecard_official import official_pairs
from rubriceval.audit.scored_rows import dataset_keys, dataset_of
from rubriceval.common.errors import RubricEvalError
from rubriceval.data.segment_spec import SegmentField, TimeSettings
from rubriceval.data.segment_values import SampleKeys, field_values
from rubriceval.scorecard.schema import Scorecard
from rubriceval.stats.bootstrap import paired_bootstrap_ci
from rubriceval.stats.unpaired import mean_difference
from rubriceval.store.db import Database
from rubriceval.store.scorecards import ScorecardStore

NONE = "(none)"
TOP_DEDUCTIONS = 3
GROUP_KINDS = ("agent", "skill_group", "all")
AGENT_ID, AGENT_NAME, SKILL_GROUP = SegmentField(name="agent_id"), SegmentField(name="agent_name"), \
    SegmentField(name="skill_group")


class Deduction(BaseModel):
    item: str
    name: str
    count: int                        # conversations where it hit
    points: int                       # the points it took, summed (negative), 0 for a fatal item without points


class WeeklyRow(BaseModel):
    kind: str                         # agent, skill_group, all
    key: str                          # agent id, skill group, or '' for all
    name: str = ""                    # the agent's name (agents only)
    conversations: int = 0            # this period (scorecard verdicts)
    previous_conversations: int = 0
    reviewed: int = 0                 # of this period's, decided or confirmed by a person
    scored: int = 0
    awaiting: int = 0                 # this period's totals awaiting review: counted apart, in no mean
    previous_awaiting: int = 0
    mean: float | None = None         # official mean total (decided totals only)
    mean_low: float | None = None
    mean_high: float | None = None
    previous_mean: float | None = None
    change: float | None = None
    p_value: float | None = None
    test: str = ""
    beyond_noise: bool | None = None
    fatal: int = 0                    # conversations with a fatal item hit, this period
    previous_fatal: int = 0
    top_deductions: list[Deduction] = Field(default_factory=list)

    @property
    def reviewed_share(self) -> float | None:
        return self.reviewed / self.conversations if self.conversations else None


class WeeklyReport(BaseModel):
    scorecard: str
    scorecard_name: str
    language: str
    bucket: str = "week"
    period: str
    previous: str | None = None
    periods: list[str] = Field(default_factory=list)
    rows: list[WeeklyRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    # the card's automatic acceptance in the run (issue 44, report/auto_accept.py weekly_figures), with a target only
    auto_accept: dict[str, Any] | None = None

    def row(self, kind: str, key: str = "") -> WeeklyRow | None:
        return next((r for r in self.rows if r.kind == kind and r.key == key), None)


@dataclass
class _Cell:
    totals: list[float] = field(default_factory=list)
    conversations: int = 0
    reviewed: int = 0
    fatal: int = 0
    awaiting: int = 0
    deductions: Counter = field(default_factory=Counter)
    points: Counter = field(default_factory=Counter)


def _value(keys: SampleKeys, segment_field: SegmentField, settings: TimeSettings) -> str:
    values = field_values(keys, segment_field, settings)
    return values[0] if values else NONE


def _runs_with(store: Any, runs: Sequence[str], card_id: str | None) -> tuple[list[str], Scorecard]:
    """The runs (oldest first) holding the card, and the card (its newest version)."""
    from rubriceval.trend.series import ordered_runs

    db = Database(store.path, read_only=True)
    try:
        ordered = [run_id for run_id, _ in ordered_runs(store, runs, db)]
    finally:
        db.close()
    cards = ScorecardStore(store)
    found: dict[str, Scorecard] = {}
    holding = []
    for run_id in ordered:
        mine = {c.id: c for c in cards.cards(run_id)}
        if card_id is None and len(mine) == 1 and not found:
            card_id = next(iter(mine))
        if card_id in mine:
            holding.append(run_id)
            found[card_id] = mine[card_id]
    if card_id is None or card_id not in found:
        raise RubricEvalError(f"no run here scored the scorecard '{card_id}'" if card_id else
                              "these runs hold no scorecard, or several: name one", field="scorecard",
                              hint="rubriceval run … --scorecards DIR; the weekly report is a scorecard's")
    return holding, found[card_id]


def weekly_report(store: Any, runs: Sequence[str] = (), *, scorecard: str | None = None, period: str | None = None,
                  bucket: Literal["day", "week", "month"] = "week", settings: TimeSettings | None = None, lang: str | None = None,
                  n_boot: int = 2000, seed: int = 0) -> WeeklyReport:
    """The weekly report of `scorecard` (default: the runs' one scorecard) over `runs` (default every complete run
    of the store). period: the period to report (e.g. '2026-W47'; default the latest in the data), compared with
    the one before it in the data. bucket: week (default), day or month. lang: default the card's language."""
    settings = settings or TimeSettings()
    holding, card = _runs_with(store, runs, scorecard)
    when = SegmentField(name="", bucket=bucket)
    items = {i.id: i for i in card.items}
    seen: set[str] = set()
    no_time = 0
    # (period, kind, key) → cell; agent id → name
    cells: dict[tuple[str, str, str], _Cell] = {}
    names: dict[str, str] = {}
    db = Database(store.path, read_only=True)
    try:
        for run_id in reversed(holding):                # newest first: a conversation counts once, newest verdict
            keys_of = {k.sample_id: k for chunk in dataset_keys(db, dataset_of(db, run_id)) for k in chunk}
            for verdict, decided in official_pairs(store, run_id, card.id):
                if verdict.sample_id in seen or verdict.sample_id not in keys_of:
                    continue
                seen.add(verdict.sample_id)
                keys = keys_of[verdict.sample_id]
                label = field_values(keys, when, settings)
                if label is None:
                    no_time += 1
                    continue
                agent = _value(keys, AGENT_ID, settings)
                if agent != NONE:
                    names.setdefault(agent, _value(keys, AGENT_NAME, settings))
                for kind, key in (("agent", agent), ("skill_group", _value(keys, SKILL_GROUP, settings)), ("all", "")):
                    _count(cells.setdefault((label[0], kind, key), _Cell()), verdict, decided)
    finally:
        db.close()
    periods = sorted({p for p, _, _ in cells})
    if not periods:
        raise RubricEvalError("no scorecard verdict has a start time to bucket by", field=bucket,
                              hint="metadata started_at (importers write it), or turn timestamps")
    if period is not None and period not in periods:
        raise RubricEvalError(f"no conversation in period '{period}'", field="period",
                              hint=f"periods in these runs: {', '.join(periods)}")
    current = period or periods[-1]
    previous = periods[periods.index(current) - 1] if periods.index(current) > 0 else None
    report = WeeklyReport(scorecard=card.id, scorecard_name=card.name, language=lang or card.language,
                          bucket=bucket, period=current, previous=previous, periods=periods)
    if no_time:
        report.notes.append(f"{no_time} conversation(s) without a start time are left out")
    groups = sorted({(kind, key) for p, kind, key in cells if p in (current, previous)},
                    key=lambda k: (GROUP_KINDS.index(k[0]), k[1] == NONE, k[1]))
    for kind, key in groups:
        now, before = cells.get((current, kind, key), _Cell()), cells.get((previous, kind, key)) if previous else None
        report.rows.append(_row(kind, key, names.get(key, "") if kind == "agent" else "", now, before, items,
                                n_boot, seed))
    return report


def _count(cell: _Cell, verdict: Any, decided: bool) -> None:
    cell.conversations += 1
    cell.reviewed += decided
    totals = verdict.totals
    if totals.total is not None:
        cell.totals.append(float(totals.total))
    cell.awaiting += totals.awaiting_review
    cell.fatal += bool(totals.fatal)
    points = {p.item: p.points for p in totals.items}
    for o in verdict.outcomes:
        if o.status == "hit" and (points.get(o.item, 0) < 0 or o.item in totals.fatal):
            cell.deductions[o.item] += 1
            cell.points[o.item] += points.get(o.item, 0)


def _row(kind: str, key: str, name: str, now: _Cell, before: _Cell | None, items: dict[str, Any], n_boot: int,
         seed: int) -> WeeklyRow:
    row = WeeklyRow(kind=kind, key=key, name=name, conversations=now.conversations, reviewed=now.reviewed,
                    scored=len(now.totals), fatal=now.fatal, awaiting=now.awaiting)
    if now.totals:
        row.mean = sum(now.totals) / len(now.totals)
        row.mean_low, row.mean_high = paired_bootstrap_ci(now.totals, n_boot, seed)
    if before is not None:
        row.previous_conversations, row.previous_fatal = before.conversations, before.fatal
        row.previous_awaiting = before.awaiting
        if before.totals:
            row.previous_mean = sum(before.totals) / len(before.totals)
        if before.totals and now.totals:
            difference = mean_difference(before.totals, now.totals, seed=seed)
            row.change, row.p_value, row.test = difference.delta, difference.p_value, difference.test
            row.beyond_noise = difference.beyond_noise()
    row.top_deductions = [Deduction(item=item, name=items[item].label if item in items else item, count=count,
                                    points=now.points[item])
                          for item, count in sorted(now.deductions.items(),
                                                    key=lambda kv: (-kv[1], now.points[kv[0]], kv[0]))[:TOP_DEDUCTIONS]]
    return row


def weekly_reports_for_run(store: Any, run_id: str, settings: TimeSettings | None = None, lang: str | None = None
                           ) -> list[WeeklyReport]:
    """The report section's data: one weekly report per scorecard of the run, over the run and the store's earlier
    complete runs of that card (an incremental W47 run is compared with W46's); [] when its conversations carry no
    agent or skill group, or no start time."""
    from rubriceval.report.auto_accept import weekly_figures

    cards = ScorecardStore(store).cards(run_id)
    if not cards or not _has_groups(store, run_id):
        return []
    info = store.run_info(run_id)
    earlier = [i.run_id for i in store.list_runs() if i.status == "complete" and i.created_at <= info.created_at
               and i.run_id != run_id]
    out = []
    for card in cards:
        try:
            out.append(weekly_report(store, [*earlier, run_id], scorecard=card.id, settings=settings, lang=lang))
        except RubricEvalError:             # no start times: a weekly table has nothing to say
            continue
        out[-1].auto_accept = weekly_figures(store, run_id, card)   # issue 44: coverage, guarantee, pending
    return out


def _has_groups(store: Any, run_id: str) -> bool:
    db = Database(store.path, read_only=True)
    try:
        for chunk in dataset_keys(db, dataset_of(db, run_id)):
            if any(k.metadata.get("agent_id") or k.metadata.get("skill_group") for k in chunk):
                return True
        return False
    finally:
        db.close()
