"""Scorecards in `rubriceval compare RUN_A RUN_B`: per scorecard, the paired change of the total (same
conversations, scored in both runs) with a seeded bootstrap CI, the fatal rates, and the conversations whose total
dropped most. Two different versions of a scorecard are compared only with the change said (`version_changed`).
Conversations awaiting review (an undecided item or a decision pending review) are in neither mean nor pair: they are
counted apart in each run (`n_awaiting_a`, `n_awaiting_b`)."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from rubriceval.report.scorecard_summary import summarize_scorecard
from rubriceval.store.scorecards import ScorecardStore


class ScorecardDelta(BaseModel):
    scorecard: str
    version_a: str
    version_b: str
    mean_a: float | None = None
    mean_b: float | None = None
    fatal_rate_a: float | None = None
    fatal_rate_b: float | None = None
    n_paired: int = 0
    delta: float | None = None            # mean of (b − a) over the paired conversations
    ci_low: float | None = None
    ci_high: float | None = None
    worse: list[tuple[str, int, int]] = Field(default_factory=list)   # (sample, total a, total b), biggest drop first
    machine_only: bool = False
    n_human_a: int = 0                    # conversations whose official total a person decided, in each run
    n_human_b: int = 0
    human_decided: list[str] = Field(default_factory=list)  # of the `worse` samples, those decided in either run
    n_awaiting_a: int = 0                 # conversations whose total awaits review, in each run (never paired)
    n_awaiting_b: int = 0

    @property
    def version_changed(self) -> bool:
        return self.version_a != self.version_b


def compare_scorecards(runs: Any, run_a: str, run_b: str, *, n_boot: int = 2000, seed: int = 0,
                       max_worse: int = 5, machine_only: bool = False) -> list[ScorecardDelta]:
    """On official totals (machine_only: the judge's)."""
    from rubriceval.audit.scorecard_official import official_pairs
    from rubriceval.stats.bootstrap import paired_bootstrap_ci

    store = ScorecardStore(runs)
    cards_a = {c.id: c for c in store.cards(run_a)}
    cards_b = {c.id: c for c in store.cards(run_b)}
    deltas = []
    for card_id in sorted(set(cards_a) & set(cards_b)):
        a_card, b_card = cards_a[card_id], cards_b[card_id]
        # official totals: a human decision (an accepted appeal) replaces the machine's (audit/scorecard_official.py)
        pa = [p for p in official_pairs(runs, run_a, card_id, machine_only=machine_only)
              if p[0].version == a_card.version_tag]
        pb = [p for p in official_pairs(runs, run_b, card_id, machine_only=machine_only)
              if p[0].version == b_card.version_tag]
        va, vb = [v for v, _ in pa], [v for v, _ in pb]
        decided = {v.sample_id for v, human in pa + pb if human}
        sa, sb = summarize_scorecard(a_card, va), summarize_scorecard(b_card, vb)
        if not (sa.n or sb.n):
            continue                                   # the card scores no sample of these runs
        totals_a = {v.sample_id: v.totals.total for v in va if v.totals.total is not None}
        pairs = [(sid, totals_a[sid], v.totals.total) for v in vb
                 if (sid := v.sample_id) in totals_a and v.totals.total is not None]
        diffs = [b - a for _, a, b in pairs]
        low, high = paired_bootstrap_ci(diffs, n_boot=n_boot, seed=seed)
        worse = sorted([p for p in pairs if p[2] < p[1]], key=lambda p: p[2] - p[1])[:max_worse]
        deltas.append(ScorecardDelta(
            scorecard=card_id, version_a=a_card.version_tag, version_b=b_card.version_tag, mean_a=sa.mean,
            mean_b=sb.mean, fatal_rate_a=sa.fatal_rate, fatal_rate_b=sb.fatal_rate, n_paired=len(pairs),
            delta=sum(diffs) / len(diffs) if diffs else None, ci_low=low, ci_high=high,
            worse=worse, machine_only=machine_only, n_human_a=sum(h for _, h in pa), n_human_b=sum(h for _, h in pb),
            human_decided=[sid for sid, _, _ in worse if sid in decided], n_awaiting_a=sa.n_awaiting,
            n_awaiting_b=sb.n_awaiting))
    return deltas


def format_scorecard_deltas(deltas: list[ScorecardDelta]) -> str:
    def num(x: float | None, fmt: str = "{:.1f}") -> str:
        return "n/a" if x is None else fmt.format(x)

    lines = []
    for d in deltas:
        ci = "" if d.ci_low is None else f" (95% CI [{d.ci_low:+.1f}, {d.ci_high:+.1f}])"
        changed = f" — scorecard changed: {d.version_a} → {d.version_b}" if d.version_changed else ""
        official = " (machine only)" if d.machine_only else \
            f" (official totals: {d.n_human_a} → {d.n_human_b} human-decided)" if d.n_human_a or d.n_human_b else ""
        waiting = f"; awaiting review {d.n_awaiting_a} → {d.n_awaiting_b} (not in the means)" \
            if d.n_awaiting_a or d.n_awaiting_b else ""
        lines.append(f"scorecard:{d.scorecard} total mean {num(d.mean_a)} → {num(d.mean_b)}, "
                     f"Δ {num(d.delta, '{:+.1f}')} on {d.n_paired} paired{ci}; fatal rate "
                     f"{num(d.fatal_rate_a, '{:.1%}')} → {num(d.fatal_rate_b, '{:.1%}')}{waiting}{changed}{official}")
        for sample, a, b in d.worse:
            lines.append(f"  worse: {sample} {a} → {b}" + (" (human-decided)" if sample in d.human_decided else ""))
    return "\n".join(lines)
