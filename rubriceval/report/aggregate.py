"""Per-rubric and per-metric aggregates of a run: what every report, comparison and gate reads.

Unscored rows are counted (by kind, with example reasons) and never averaged in. A statistic that cannot be computed
(no scored rows, one score for a std) is `None` with a note saying why — never NaN.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.report.summary_models import (
    RUBRIC_LEVELS,
    GroupDimension,
    GroupKey,
    GroupStats,
    ScorerSummary,
    Summary,
    UnscoredGroup,
)
from rubriceval.safety.manipulation_policy import count_by_defence, is_flagged
from rubriceval.standard_metrics.thresholds import (  # noqa: F401
    DEFAULT_METRIC_THRESHOLDS,
    FALLBACK_METRIC_THRESHOLD,
    metric_threshold,
)
from rubriceval.stats.describe import Stats, checked_finite, describe  # noqa: F401  (describe is read through here too)
from rubriceval.trust.panel_agreement import panel_agreement

MAX_EXAMPLE_REASONS = 3


# -------------------------------------------------------------------------------------------------------------------


def _unscored_groups(rows: Iterable[tuple[str | None, str, str | None]]) -> list[UnscoredGroup]:
    """rows: (unscored kind, sample id, reason) of the unscored verdicts, in verdict order."""
    groups: dict[str, UnscoredGroup] = {}
    for unscored_kind, sample_id, unscored_reason in rows:
        kind = unscored_kind or "error"
        group = groups.setdefault(kind, UnscoredGroup(kind=kind, count=0))
        group.count += 1
        group.sample_ids.append(sample_id)
        reason = (unscored_reason or "").strip()
        if reason and reason not in group.example_reasons and len(group.example_reasons) < MAX_EXAMPLE_REASONS:
            group.example_reasons.append(reason)
    return sorted(groups.values(), key=lambda g: (-g.count, g.kind))


def _rubric_distribution(scores: Sequence[float]) -> tuple[dict[int, int], list[str]]:
    distribution = {level: 0 for level in RUBRIC_LEVELS}
    notes = []
    for score in scores:
        level = int(math.floor(score + 0.5))    # rubric scores are integers; round half up if one is not
        if level != score:
            notes.append(f"non-integer rubric score {score} counted as {level}")
        if level in distribution:
            distribution[level] += 1
        else:
            notes.append(f"rubric score {score} is outside 1–5 and left out of the distribution")
    return distribution, notes


def _metric_histogram(scores: Sequence[float]) -> list[int]:
    bins = [0] * 5
    for score in scores:
        bins[min(4, max(0, int(score * 5)))] += 1   # 1.0 belongs to the top bin
    return bins


def summarize_scorer(scorer: Mapping[str, Any], rows: Sequence[Verdict],
                     metric_thresholds: Mapping[str, float] | None = None) -> ScorerSummary:
    return scorer_summary(scorer, scores=[v.score for v in rows if v.score is not None], n_total=len(rows),
                          unscored=[(v.unscored_kind, v.sample_id, v.unscored_reason) for v in rows if v.score is None],
                          n_flagged=sum(1 for v in rows if is_flagged(v)), panel_rows=rows,
                          flagged_by=count_by_defence(v.details for v in rows if is_flagged(v)),
                          usage=sum((v.usage for v in rows), Usage()), metric_thresholds=metric_thresholds)


def scorer_summary(scorer: Mapping[str, Any], *, scores: Sequence[float], n_total: int,
                   unscored: Iterable[tuple[str | None, str, str | None]], n_flagged: int,
                   panel_rows: Sequence[Verdict], usage: Usage,
                   metric_thresholds: Mapping[str, float] | None = None,
                   flagged_by: Mapping[str, int] | None = None) -> ScorerSummary:
    """One scorer's summary from what its verdicts come to (in memory, or in SQL: report/source.py): scored
    values, row count, unscored (kind, sample id, reason) in verdict order, flagged rows, rows judged by a panel
    (others are ignored), usage."""
    definition = scorer.get("definition") or {}
    kind = scorer.get("kind", "rubric")
    summary = ScorerSummary(scorer=scorer["scorer"], kind=kind, version=scorer.get("version", ""),
                            name=str(definition.get("name") or scorer["scorer"]))
    if kind == "rubric":
        if definition.get("threshold") is not None:
            summary.threshold, summary.threshold_source = float(definition["threshold"]), "rubric"
        else:
            summary.notes.append("rubric definition has no threshold: pass rate is undefined")
        summary.weight = float(definition.get("weight", 1.0))
        summary.trust = definition.get("trust")
    else:
        summary.threshold, summary.threshold_source = metric_threshold(summary.scorer, definition, metric_thresholds)
    scored = scores
    summary.n_total, summary.n_scored = n_total, len(scored)
    summary.n_unscored = summary.n_total - summary.n_scored
    summary.unscored = _unscored_groups(unscored)
    summary.n_suspected_manipulation = n_flagged
    summary.suspected_by_defence = dict(flagged_by or {})
    if summary.n_suspected_manipulation:
        by = ", ".join(f"{name} {count}" for name, count in summary.suspected_by_defence.items())
        summary.notes.append(f"{summary.n_suspected_manipulation} answer(s) addressed the judge "
                             f"(suspected_manipulation{'; found by ' + by if by else ''}): handled by the rubric's "
                             "manipulation policy")
    stats = describe(scored, summary.threshold)
    summary.mean, summary.median, summary.std = stats.mean, stats.median, stats.std
    summary.min, summary.max = stats.min, stats.max
    summary.n_passed, summary.pass_rate = stats.n_passed, stats.pass_rate
    summary.notes += stats.notes
    if kind == "rubric":
        summary.distribution, notes = _rubric_distribution(scored)
        summary.notes += notes
        summary.panel = panel_agreement(panel_rows, summary.threshold)
    else:
        summary.histogram = _metric_histogram(scored)
    summary.usage = usage
    return summary


def business_score(rubrics: Sequence[ScorerSummary]) -> tuple[float | None, str | None, list[str]]:
    """Weighted mean of rubric means (1–5). Rubrics without a scored row are left out, and the note says so."""
    notes = []
    included = [r for r in rubrics if r.mean is not None and (r.weight or 0) > 0]
    skipped = [r.scorer for r in rubrics if r.mean is None]
    if skipped:
        notes.append(f"left out (no scored rows): {', '.join(skipped)}")
    zero = [r.scorer for r in rubrics if r.mean is not None and not (r.weight or 0) > 0]
    if zero:
        notes.append(f"left out (weight 0): {', '.join(zero)}")
    if not rubrics:
        return None, "no business rubrics in this run", []
    if not included:
        return None, "; ".join(notes) or "no rubric has a scored row", []
    total_weight = sum(r.weight or 0 for r in included)
    score = sum((r.mean or 0) * (r.weight or 0) for r in included) / total_weight
    return score, ("; ".join(notes) or None), [r.scorer for r in included]


def breakdown_keys(tags: Sequence[str], intent: str) -> list[tuple[GroupDimension, str]]:
    """The (dimension, value) groups a sample belongs to: each distinct tag, and its intent."""
    keys: list[tuple[GroupDimension, str]] = [("tag", tag) for tag in dict.fromkeys(tags)]
    if intent:
        keys.append(("intent", intent))
    return keys


def _breakdown(verdicts: Sequence[Verdict], samples: Sequence[Sample],
               summaries: Mapping[str, ScorerSummary]) -> list[GroupStats]:
    by_sample = {s.id: s for s in samples}
    groups: dict[GroupKey, list[Verdict]] = {}
    for v in verdicts:
        sample = by_sample.get(v.sample_id)
        if sample is None:
            continue
        for dimension, value in breakdown_keys(sample.tags, sample.intent):
            groups.setdefault((dimension, value, v.scorer), []).append(v)
    return group_stats({key: (len({v.sample_id for v in rows}), len(rows),
                              [v.score for v in rows if v.score is not None]) for key, rows in groups.items()},
                       summaries)


def group_stats(groups: Mapping[GroupKey, tuple[int, int, Sequence[float]]],
                summaries: Mapping[str, ScorerSummary]) -> list[GroupStats]:
    """(dimension, value, scorer) → (samples, rows, scored values) as GroupStats, tags first, by value, then in
    the summary's scorer order."""
    out = []
    order = {sid: i for i, sid in enumerate(summaries)}
    for (dimension, value, scorer), (n_samples, n_rows, scores) in sorted(
            groups.items(), key=lambda kv: (kv[0][0] != "tag", kv[0][1], order.get(kv[0][2], 1 << 30))):
        threshold = summaries[scorer].threshold if scorer in summaries else None
        # describe()'s mean and pass rate, without the median and std a group row does not show
        mean = checked_finite(statistics.fmean(scores)) if scores else None
        pass_rate = sum(1 for x in scores if x >= threshold) / len(scores) if scores and threshold is not None \
            else None
        out.append(GroupStats(dimension=dimension, value=value, scorer=scorer, n_samples=n_samples,
                              n_scored=len(scores), n_unscored=n_rows - len(scores), mean=mean, pass_rate=pass_rate))
    return out


def summarize(verdicts: Sequence[Verdict], scorers: Sequence[Mapping[str, Any]],
              samples: Sequence[Sample] | None = None,
              metric_thresholds: Mapping[str, float] | None = None) -> Summary:
    """Aggregate a run's verdicts.

    scorers: `RunStore.scorers(run)` rows (scorer, kind, version, definition). Verdicts of a scorer missing from that
    list are still summarized (as their verdict kind says). samples: needed only for the per-tag/intent breakdown.
    metric_thresholds: pass thresholds per metric, overriding the defaults.
    """
    rows_by_scorer: dict[str, list[Verdict]] = {}
    for v in verdicts:
        rows_by_scorer.setdefault(v.scorer, []).append(v)
    scorer_rows, notes = with_unstored_scorers(scorers, ((name, rows[0].kind, rows[0].scorer_version)
                                                         for name, rows in rows_by_scorer.items()))
    summaries = {row["scorer"]: summarize_scorer(row, rows_by_scorer.get(row["scorer"], []), metric_thresholds)
                 for row in scorer_rows}
    summary = assemble_summary(summaries, notes, n_samples=len(samples) if samples is not None else None,
                               n_verdicts=len(verdicts), n_unscored=sum(1 for v in verdicts if v.score is None),
                               usage=sum((v.usage for v in verdicts), Usage()))
    if samples is not None:
        summary.breakdown = _breakdown(verdicts, samples, summaries)
    else:
        summary.notes.append("no samples given: per tag/intent breakdown left out")
    return summary


def with_unstored_scorers(scorers: Sequence[Mapping[str, Any]], seen: Iterable[tuple[str, str, str]]
                          ) -> tuple[list[Mapping[str, Any]], list[str]]:
    """The stored scorer rows, plus one for each scorer seen in the verdicts (name, kind, version of its first
    verdict) without a stored definition, with a note; rubrics first, then metrics, each in stored order."""
    scorer_rows = list(scorers)
    known = {row["scorer"] for row in scorer_rows}
    notes = []
    for name, kind, version in seen:
        if name not in known:
            scorer_rows.append({"scorer": name, "kind": kind, "version": version, "definition": {}})
            notes.append(f"verdicts of '{name}' have no stored scorer definition")
    # Rubrics first, then metrics, each in stored order: the business view leads every report.
    scorer_rows.sort(key=lambda row: row.get("kind") != "rubric")
    return scorer_rows, notes


def assemble_summary(summaries: Mapping[str, ScorerSummary], notes: list[str], *, n_samples: int | None,
                     n_verdicts: int, n_unscored: int, usage: Usage) -> Summary:
    """The run's summary from its scorers' summaries (in report order): business score, RAG scores, totals."""
    rubric_summaries = [s for s in summaries.values() if s.kind == "rubric"]
    score, score_note, included = business_score(rubric_summaries)
    return Summary(
        scorers=list(summaries.values()), business_score=score, business_score_note=score_note,
        business_rubrics=included, rag_scores={s.scorer: s.mean for s in summaries.values() if s.kind == "metric"},
        n_samples=n_samples, n_verdicts=n_verdicts, n_unscored=n_unscored, usage=usage, notes=notes)
