"""Pairwise verdicts → win rates per rubric and pair of versions, with bootstrap CIs, and a Bradley–Terry ranking
per rubric when three or more versions were compared.

Win rate of b over a = (b's wins + half the ties) / scored judgements; its 95% CI is the percentile bootstrap over
samples (`rubriceval.report.compare.paired_bootstrap_ci` on the per-sample values 1 / ½ / 0). Unscored
judgements are counted by kind and left out of the rate — never read as ties. Inconsistent judgements (the choice
changed when the answers swapped places) are ties, and counted, since many of them say the judge reads position,
not content.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from rubriceval.pairwise.bradley_terry import BradleyTerryFit, fit_bradley_terry
from rubriceval.pairwise.models import PairwiseVerdict
from rubriceval.pairwise.store import ComparisonInfo, PairwiseStore

OUTCOME_VALUE = {"b": 1.0, "tie": 0.5, "a": 0.0}   # one judgement's share of a win for b


class PairStats(BaseModel):
    """One rubric, versions a (the earlier) and b: how often each won."""

    scorer: str
    version_a: str
    version_b: str
    n_total: int = 0
    n_scored: int = 0
    wins_a: int = 0
    wins_b: int = 0
    ties: int = 0
    n_inconsistent: int = 0          # ties because the choice flipped with the order
    n_unscored: int = 0
    unscored_by_kind: dict[str, int] = Field(default_factory=dict)
    win_rate: float | None = None    # of b over a
    ci_low: float | None = None
    ci_high: float | None = None
    note: str | None = None

    def rates_for(self, label: str) -> tuple[float | None, float | None, float | None]:
        """(win rate, CI low, CI high) of version `label` against the other one."""
        if label == self.version_b:
            return self.win_rate, self.ci_low, self.ci_high
        if label != self.version_a:
            raise KeyError(label)
        def flip(x: float | None) -> float | None:
            return None if x is None else 1 - x

        return flip(self.win_rate), flip(self.ci_high), flip(self.ci_low)

    def share(self, what: str, label: str) -> float | None:
        """Share of scored judgements that `label` lost ("loss") or that were ties ("tie")."""
        if not self.n_scored:
            return None
        if what == "tie":
            return self.ties / self.n_scored
        lost = self.wins_a if label == self.version_b else self.wins_b
        return lost / self.n_scored

    @property
    def unscored_rate(self) -> float | None:
        return self.n_unscored / self.n_total if self.n_total else None


class PairwiseSummary(BaseModel):
    comparison: str                  # name
    comparison_id: str
    versions: list[str]              # labels, the first is the baseline
    scorers: list[str]
    pairs: list[PairStats]
    rankings: dict[str, BradleyTerryFit] = Field(default_factory=dict)   # per rubric, with ≥ 3 versions
    n_boot: int
    seed: int
    notes: list[str] = Field(default_factory=list)

    def pair(self, scorer: str, one: str, other: str) -> PairStats:
        for p in self.pairs:
            if p.scorer == scorer and {p.version_a, p.version_b} == {one, other}:
                return p
        raise KeyError((scorer, one, other))


def pair_stats(scorer: str, version_a: str, version_b: str, verdicts: Sequence[PairwiseVerdict], *,
               n_boot: int = 2000, seed: int = 0, confidence: float = 0.95) -> PairStats:
    stats = PairStats(scorer=scorer, version_a=version_a, version_b=version_b, n_total=len(verdicts))
    scored = [v for v in verdicts if v.outcome is not None]
    stats.n_scored = len(scored)
    stats.n_unscored = stats.n_total - stats.n_scored
    stats.unscored_by_kind = dict(Counter(v.unscored_kind or "error" for v in verdicts if v.outcome is None))
    counts = Counter(v.outcome for v in scored)
    stats.wins_a, stats.wins_b, stats.ties = counts["a"], counts["b"], counts["tie"]
    stats.n_inconsistent = sum(1 for v in scored if v.consistent is False)
    if not scored:
        stats.note = "no judgement was scored"
        return stats
    from rubriceval.stats.bootstrap import paired_bootstrap_ci

    values = [OUTCOME_VALUE[v.outcome] for v in scored if v.outcome is not None]     # all of them: this narrows
    stats.win_rate = float(np.mean(values))
    stats.ci_low, stats.ci_high = paired_bootstrap_ci(values, n_boot, seed, confidence)
    if stats.ci_low is None:
        stats.note = "one scored judgement: no confidence interval"
    return stats


def wins_matrix(versions: list[str], pairs: Sequence[PairStats]) -> np.ndarray:
    """W[i, j]: times versions[i] beat versions[j]; a tie is half a win to each."""
    index = {label: i for i, label in enumerate(versions)}
    wins = np.zeros((len(versions), len(versions)))
    for p in pairs:
        a, b = index[p.version_a], index[p.version_b]
        wins[a, b] += p.wins_a + p.ties / 2
        wins[b, a] += p.wins_b + p.ties / 2
    return wins


def summarize_pairwise(info: ComparisonInfo, verdicts: Sequence[PairwiseVerdict], *, n_boot: int = 2000,
                       seed: int = 0, confidence: float = 0.95) -> PairwiseSummary:
    versions = info.labels
    by_key: dict[tuple[str, str, str], list[PairwiseVerdict]] = {}
    for v in verdicts:
        by_key.setdefault((v.scorer, v.version_a, v.version_b), []).append(v)
    scorers = list(dict.fromkeys([*info.config.rubrics, *(v.scorer for v in verdicts)]))
    scorers = [s for s in scorers if any(key[0] == s for key in by_key)]
    summary = PairwiseSummary(comparison=info.name, comparison_id=info.comparison_id, versions=versions,
                              scorers=scorers, pairs=[], n_boot=n_boot, seed=seed)
    for scorer in scorers:
        pairs = [pair_stats(scorer, a, b, by_key.get((scorer, a, b), []), n_boot=n_boot, seed=seed,
                            confidence=confidence) for a, b in combinations(versions, 2)]
        summary.pairs += pairs
        if len(versions) >= 3:
            summary.rankings[scorer] = fit_bradley_terry(versions, wins_matrix(versions, pairs))
    if not verdicts:
        summary.notes.append("no pairwise verdicts stored yet")
    return summary


def load_pairwise(store_path: Any, ref: str = "latest", *, n_boot: int = 2000, seed: int = 0) -> PairwiseSummary:
    """Read and summarize a stored comparison (id, name or 'latest')."""
    with PairwiseStore(store_path) as store:
        info = store.info(ref)
        verdicts = store.verdicts(info.comparison_id)
    return summarize_pairwise(info, verdicts, n_boot=n_boot, seed=seed)


def pairwise_between_runs(store_path: Any, run_ids: Sequence[str], *, n_boot: int = 2000,
                          seed: int = 0) -> PairwiseSummary | None:
    """The newest stored comparison that includes all these runs, summarized; None when there is none."""
    with PairwiseStore(store_path) as store:
        info = store.latest_with_runs(run_ids)
        if info is None:
            return None
        verdicts = store.verdicts(info.comparison_id)
    return summarize_pairwise(info, verdicts, n_boot=n_boot, seed=seed)
