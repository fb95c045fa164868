"""What the reports, compare and gate read of a run's scorecard verdicts: totals distribution, mean per dimension,
deduction and bonus frequency per item ("top deductions"), per-item hit rate with N/A left out of the denominator,
fatal conversations first. Unscored totals are counted, never averaged; a run holding two versions of one scorecard
says so (`versions`, `note`) instead of mixing them silently. A conversation awaiting review (an item undecided, or a
machine decision pending review: issues 39, 44) is counted apart with the range its total can still reach, never
averaged nor counted as unscored or clear; each judgement item says how its outcomes were decided (`how`)."""
from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, Field

from rubriceval.audit.scorecard_reviews import ItemTrustStats, Review, item_trust
from rubriceval.core.verdict import Usage
from rubriceval.scorecard.decided import How, how_counts
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import ScorecardVerdict

# Total bands of the distribution, as QA teams read them.
BANDS = ((100, 100, "100"), (90, 99, "90–99"), (80, 89, "80–89"), (60, 79, "60–79"), (1, 59, "1–59"), (0, 0, "0"))


class ItemStats(BaseModel):
    item: str
    name: str
    dimension: str
    points: int | None
    fatal: bool
    kind: str                        # check | question | rubric
    n_hit: int = 0
    n_clear: int = 0
    n_na: int = 0
    n_unscored: int = 0
    n_undecided: int = 0             # the judge answered but cannot tell: awaiting review
    n_pending: int = 0               # a machine hit/clear not accepted automatically: awaiting review
    how: dict[How, int] | None = None     # judgement items: the judge's outcomes by how decided (scorecard/decided.py)
    points_total: int = 0            # signed, summed over the conversations
    trust: ItemTrustStats | None = None   # reviewers' precision/recall and the bar (rubriceval/audit/scorecard_reviews.py)
    # Official outcomes (audit/scorecard_official.py): conversations where a person changed this item's outcome (a
    # deduction removed by an accepted appeal, a reviewer's rejected or added hit), and the judge's hit rate
    n_human: int = 0
    machine_hit_rate: float | None = None

    @property
    def n_decided(self) -> int:
        """The hit rate's denominator: the conversations where the item applied and was decided (N/A left out)."""
        return self.n_hit + self.n_clear

    @property
    def hit_rate(self) -> float | None:
        return self.n_hit / self.n_decided if self.n_decided else None

    @property
    def n_awaiting(self) -> int:
        return self.n_undecided + self.n_pending


class DimensionStats(BaseModel):
    dimension: str
    name: str
    mean: float | None = None        # mean subtotal over the scored conversations
    n_clamped: int = 0


class FatalRow(BaseModel):
    sample_id: str
    items: list[str]


class AwaitingRow(BaseModel):
    """A conversation whose total waits for a reviewer: the items undecided and pending, the total's reachable range."""

    sample_id: str
    undecided: list[str] = Field(default_factory=list)
    pending: list[str] = Field(default_factory=list)
    total_range: tuple[int, int] | None = None


class ScorecardSummary(BaseModel):
    scorecard: str
    name: str
    base: int
    pass_total: int | None = None
    versions: list[str]
    note: str = ""
    n: int = 0
    n_scored: int = 0
    n_unscored: int = 0
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    totals: list[int] = Field(default_factory=list)     # the scored (decided) totals, in dataset order
    awaiting: list[AwaitingRow] = Field(default_factory=list)   # counted apart: never in the totals above
    n_clamped: int = 0
    fatal: list[FatalRow] = Field(default_factory=list)
    dimensions: list[DimensionStats] = Field(default_factory=list)
    items: list[ItemStats] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)          # the judge calls of these verdicts (questions only)
    # Official totals: the figures above; of the conversations, n_human were changed by a person (an appeal, a
    # lead's total, reviewers' item decisions), with the judge's figures kept beside them when any was.
    machine_only: bool = False
    n_human: int = 0
    machine_mean: float | None = None
    machine_fatal_rate: float | None = None
    machine_pass_rate: float | None = None

    def _stat(self, fn) -> float | None:
        return float(fn(self.totals)) if self.totals else None

    @property
    def mean(self) -> float | None:
        return self._stat(statistics.fmean)

    @property
    def median(self) -> float | None:
        return self._stat(statistics.median)

    @property
    def min(self) -> float | None:
        return self._stat(min)

    @property
    def max(self) -> float | None:
        return self._stat(max)

    @property
    def std(self) -> float | None:
        return float(statistics.stdev(self.totals)) if len(self.totals) > 1 else None

    @property
    def fatal_rate(self) -> float | None:
        """Fatal conversations over all conversations scored by the card (a fatal total is scored: 0)."""
        return len(self.fatal) / self.n if self.n else None

    @property
    def pass_rate(self) -> float | None:
        if self.pass_total is None or not self.totals:
            return None
        return sum(1 for t in self.totals if t >= self.pass_total) / len(self.totals)

    @property
    def unscored_rate(self) -> float | None:
        return self.n_unscored / self.n if self.n else None

    @property
    def n_awaiting(self) -> int:
        return len(self.awaiting)

    @property
    def awaiting_review_rate(self) -> float | None:
        return self.n_awaiting / self.n if self.n else None

    @property
    def awaiting_range(self) -> tuple[int, int] | None:
        """The lowest and highest total among the waiting conversations' ranges (None: none waits)."""
        ranges = [a.total_range for a in self.awaiting if a.total_range is not None]
        return (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else None

    def distribution(self) -> list[tuple[str, int]]:
        return [(label, sum(1 for t in self.totals if low <= t <= high)) for low, high, label in BANDS]

    def top_deductions(self, n: int = 10) -> list[ItemStats]:
        hit = [i for i in self.items if i.n_hit and (i.fatal or (i.points or 0) < 0)]
        return sorted(hit, key=lambda i: (-i.n_hit, i.points_total))[:n]

    def bonuses(self) -> list[ItemStats]:
        return [i for i in self.items if (i.points or 0) > 0]

    def untrusted(self) -> list[ItemStats]:
        """Items below their trust bar (every report flags them)."""
        return [i for i in self.items if i.trust is not None and i.trust.untrusted]

    def stat(self, name: str) -> float | None:
        """A gate figure: total mean/median/min/max/std, pass_rate, fatal_rate, unscored_rate, n_scored,
        awaiting_review_rate, n_awaiting_review."""
        if name == "n_scored":
            return float(self.n_scored)
        if name == "n_awaiting_review":
            return float(self.n_awaiting)
        return getattr(self, name)


def summarize_scorecard(card: Scorecard, verdicts: Sequence[ScorecardVerdict], reviews: Sequence[Review] = ()
                        ) -> ScorecardSummary:
    mine = [v for v in verdicts if v.scorecard == card.id]
    versions = sorted({v.version for v in mine})
    summary = ScorecardSummary(scorecard=card.id, name=card.name, base=card.base, pass_total=card.pass_total,
                               versions=versions, n=len(mine))
    if len(versions) > 1:
        summary.note = (f"verdicts of {len(versions)} versions ({', '.join(versions)}); figures are for "
                        f"{card.version_tag} only")
        mine = [v for v in mine if v.version == card.version_tag]
        summary.n = len(mine)
    items = {i.id: ItemStats(item=i.id, name=i.label, dimension=i.dimension, points=i.points, fatal=i.fatal,
                             kind=i.kind) for i in card.items}
    subtotals: dict[str, list[int]] = {d.id: [] for d in card.dimensions}
    clamped: dict[str, int] = {d.id: 0 for d in card.dimensions}
    for v in mine:
        summary.usage = summary.usage + v.usage
        t = v.totals
        if t.fatal:
            summary.fatal.append(FatalRow(sample_id=v.sample_id, items=t.fatal))
        if t.awaiting_review:         # counted apart: not unscored, not averaged
            summary.awaiting.append(AwaitingRow(sample_id=v.sample_id, undecided=t.undecided, pending=t.pending,
                                                total_range=t.total_range))
        elif t.total is None:
            summary.n_unscored += 1
            key = (t.unscored_reason or "unscored").split(";")[0]
            summary.unscored_reasons[key] = summary.unscored_reasons.get(key, 0) + 1
        else:
            summary.n_scored += 1
            summary.totals.append(t.total)
            summary.n_clamped += t.clamped
            for d in t.dimensions:
                subtotals[d.dimension].append(d.points)
                clamped[d.dimension] += d.clamped
        points = {p.item: p.points for p in t.items}
        for o in v.outcomes:
            stats = items.get(o.item)
            if stats is None:
                continue
            if o.status == "undecided":
                stats.n_undecided += 1
            elif o.awaiting_review:
                stats.n_pending += 1
            elif o.status == "hit":
                stats.n_hit += 1
                stats.points_total += points.get(o.item, 0)
            elif o.status == "clear":
                stats.n_clear += 1
            elif o.status == "not_applicable":
                stats.n_na += 1
            else:
                stats.n_unscored += 1
    trust = item_trust(card, reviews)
    how = how_counts(card, [v.outcomes for v in mine])
    for stats in items.values():
        stats.trust = trust[stats.item]
        stats.how = how.get(stats.item)
    summary.items = list(items.values())
    summary.dimensions = [DimensionStats(dimension=d.id, name=d.label, n_clamped=clamped[d.id],
                                         mean=statistics.fmean(subtotals[d.id]) if subtotals[d.id] else None)
                          for d in card.dimensions]
    return summary


def official_summary(card: Scorecard, pairs: Sequence[tuple[ScorecardVerdict, bool]],
                     machine: Sequence[ScorecardVerdict], reviews: Sequence[Review] = (), *,
                     machine_only: bool = False) -> ScorecardSummary:
    """The summary of the official verdicts (`pairs`: official verdict, whether a person changed it, as
    audit/scorecard_official.official_pairs gives them), with the count of human-decided conversations and the judge's
    figures (`machine`: the stored verdicts) beside the total mean, fatal rate, pass rate and each item's hit rate."""
    summary = summarize_scorecard(card, [v for v, _ in pairs], reviews)
    summary.machine_only = machine_only
    decided = [v for v, human in pairs if human and v.scorecard == card.id and v.version == card.version_tag]
    if not decided:
        return summary
    judge = summarize_scorecard(card, machine)
    summary.n_human = len(decided)
    summary.machine_mean, summary.machine_fatal_rate = judge.mean, judge.fatal_rate
    summary.machine_pass_rate = judge.pass_rate
    before = {v.sample_id: {o.item: o.status for o in v.outcomes} for v in machine
              if v.scorecard == card.id and v.version == card.version_tag}
    items = {i.item: i for i in summary.items}
    for v in decided:
        for o in v.outcomes:
            if o.item in items and before.get(v.sample_id, {}).get(o.item) != o.status:
                items[o.item].n_human += 1
    machine_items = {i.item: i for i in judge.items}
    for item in summary.items:
        item.how = machine_items[item.item].how          # how the judge decided, before any person
        if item.n_human:
            item.machine_hit_rate = machine_items[item.item].hit_rate
    return summary


def run_scorecard_summaries(runs, run: str, *, machine_only: bool = False) -> list[ScorecardSummary]:
    """Every scorecard of a stored run, summarized on official verdicts (machine_only: the judge's); empty when
    the run has none."""
    from rubriceval.audit.scorecard_official import official_pairs
    from rubriceval.audit.scorecard_reviews import ReviewStore
    from rubriceval.store.scorecards import ScorecardStore

    store = ScorecardStore(runs)
    cards = store.cards(run)
    if not cards:
        return []
    pairs = official_pairs(runs, run, machine_only=machine_only)     # human decisions applied (official.py)
    machine = store.verdicts(run) if any(human for _, human in pairs) else []
    reviews = ReviewStore(runs).reviews(run)
    return [official_summary(card, pairs, machine, reviews, machine_only=machine_only) for card in cards]
