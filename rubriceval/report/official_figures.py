"""The official figures of a summary beside the machine's: how many rows of each scorer are human decisions
(rubriceval/audit/official.py) and what the judge's own scores came to, so every report, compare and gate can say
"mean 4.2 (3 human-decided; machine 3.9)"."""
from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rubriceval.i18n import Lang, format_number, t
from rubriceval.report.aggregate import business_score, describe
from rubriceval.report.summary_models import ScorerSummary, Summary


@dataclass
class HumanTally:
    """One scorer's rows during the summary's pass: how many a human decided, which of them the judge had left
    unscored (sample ids), and the judge's scored values (all rows, in verdict order)."""

    n_human: int = 0
    n_pending: int = 0                # pending review (issue 44): the judge's score, in no official figure
    rescued: set[str] = field(default_factory=set)
    machine: array = field(default_factory=lambda: array("d"))


def with_machine_figures(summary: Summary, tallies: Mapping[str, HumanTally], *, machine_only: bool,
                         corrected: Mapping[str, int] | None = None) -> Summary:
    """Set n_human and the machine's figures on each scorer a human decided rows of, and on the run; `corrected`:
    per scorer, the rows scored before their sample's correction that could not be recomputed (LLM metrics)."""
    summary.machine_only = machine_only
    if machine_only:
        summary.notes.append("machine-only: the judge's scores, human decisions left out")
        return summary
    for scorer in summary.scorers:
        scorer.n_corrected = (corrected or {}).get(scorer.scorer, 0)
        if scorer.n_corrected:
            scorer.notes.append(f"{scorer.n_corrected} sample(s) corrected after scoring: re-run to re-score")
    summary.n_corrected = sum(s.n_corrected for s in summary.scorers)
    for scorer in summary.scorers:
        tally = tallies.get(scorer.scorer)
        if tally is None or not (tally.n_human or tally.n_pending):
            continue
        machine = describe(tally.machine, scorer.threshold)
        scorer.n_human, scorer.n_pending = tally.n_human, tally.n_pending
        scorer.n_unscored -= tally.n_pending        # not scored officially, yet not unscored: counted apart
        scorer.machine_n_scored, scorer.machine_mean, scorer.machine_pass_rate = (machine.n_scored, machine.mean,
                                                                                   machine.pass_rate)
    summary.n_human_decided = sum(s.n_human for s in summary.scorers)
    if summary.n_human_decided or any(s.n_pending for s in summary.scorers):
        as_machine = [s.model_copy(update={"mean": s.machine_mean}) if s.n_human or s.n_pending else s
                      for s in summary.rubrics]
        summary.machine_business_score = business_score(as_machine)[0]
    return summary


def official_note(s: ScorerSummary, lang: Lang = "en", digits: int = 2) -> str:
    """'3 human-decided; machine 3.90' for a scorer with human decisions, '12 pending review, in no mean' for one
    with verdicts pending review (issue 44), both when both, else ''."""
    parts = [t("aa_pending_note", lang, n=s.n_pending)] if s.n_pending else []
    if s.n_human:
        parts.insert(0, t("official_scorer_note", lang, n=s.n_human,
                          machine=format_number(s.machine_mean, digits, lang)))
    return ("；" if lang == "zh" else "; ").join(parts)


def appeal_flag_lines(flags: list[Any], lang: Lang = "en") -> list[str]:
    """'Appeals flag soothing · no_free_shipping: agents won 2 of 3 decided appeals; precision 0.50 …' per item."""
    return [t("appeal_flag", lang, scorer=f.scorer, item=f.item or t("appeal_whole_verdict", lang), won=f.n_accepted,
              decided=f.n_decided, precision=format_number(f.precision, 2, lang)) for f in flags]


def corrected_line(summary: Summary, lang: Lang = "en") -> str:
    """'faithfulness: 2 sample(s) corrected after scoring …; re-run to re-score', or ''."""
    stale = [s for s in summary.scorers if s.n_corrected]
    if not stale:
        return ""
    return "; ".join(f"{s.scorer}: {t('official_corrected_note', lang, n=s.n_corrected)}" for s in stale)


def official_headline(summary: Summary, lang: Lang = "en") -> str:
    """The run's line about official scores: how many rows people decided, or that these are the judge's alone;
    then the metrics whose samples were corrected after scoring and could not be recomputed."""
    if summary.machine_only:
        return t("official_machine_only", lang)
    parts = [t("official_headline", lang, n=summary.n_human_decided,
               machine=format_number(summary.machine_business_score, 2, lang))] if summary.n_human_decided else []
    if stale := corrected_line(summary, lang):
        parts.append(stale)
    return " ".join(parts)
