"""How far the judges of a panel agree with each other, per rubric: Krippendorff's alpha (ordinal) on their 1–5
scores and Fleiss' kappa on their pass/fail votes, each with a seeded bootstrap CI (`rubriceval.stats.agreement`),
plus how many rows they disagreed on and how often each judge left a row unscored.

Low inter-judge agreement says the rubric is read differently by different models: the panel median is then
steadier than any one judge, but the rubric text itself may need sharpening (see the disagreements in the audit
queue, which come first).
"""
from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Usage, Verdict
from rubriceval.i18n import Lang, format_number, t
from rubriceval.scoring.panel_votes import DETAILS_KEY, panel_votes
from rubriceval.stats.agreement import Estimate, fleiss_kappa, krippendorff_alpha

REPORT_N_BOOT = 1000


class JudgeRecord(BaseModel):
    """One panel judge over the rubric's rows."""

    judge: str
    model: str = ""
    n_scored: int = 0
    n_unscored: int = 0
    mean: float | None = None
    # What its calls spent over these rows (the reports price it at the judge's own prices); None when a row's vote
    # predates per-judge usage.
    usage: Usage | None = Field(default_factory=Usage)


class PanelAgreement(BaseModel):
    judges: list[JudgeRecord]
    n_rows: int                       # rows judged by the panel
    n_complete: int                   # rows every judge scored
    n_disagreements: int              # rows the judges disagreed on (spread ≥ 2 or a pass/fail split)
    alpha_ordinal: Estimate           # Krippendorff's alpha on the scores (rows with ≥ 2 scores)
    fleiss_pass: Estimate | None = None   # Fleiss' kappa on pass/fail votes (complete rows); None: no threshold
    notes: list[str] = Field(default_factory=list)

    def format(self, lang: Lang = "en") -> str:
        """'Krippendorff α (ordinal) 0.71 [0.55, 0.84] · Fleiss κ (pass/fail) 0.60 [...] · 3/20 disagreements · a 3.90,
        b 4.10 (1 unscored)' in `lang`."""
        parts = [f"{t('panel_alpha', lang)} {self.alpha_ordinal.format()}"]
        if self.fleiss_pass is not None:
            parts.append(f"{t('panel_fleiss', lang)} {self.fleiss_pass.format()}")
        parts.append(t("panel_disagreements", lang, n=self.n_disagreements, total=self.n_rows))
        parts.append(", ".join(
            f"{j.judge} {format_number(j.mean, 2, lang)}"
            + (f" ({t('panel_judge_unscored', lang, n=j.n_unscored)})" if j.n_unscored else "") for j in self.judges))
        return " · ".join(parts)


def panel_agreement(verdicts: Sequence[Verdict], threshold: float | None, *, n_boot: int = REPORT_N_BOOT,
                    seed: int = 0) -> PanelAgreement | None:
    """Inter-judge agreement over the rows of one rubric judged by a panel; None when no row was."""
    rows = [(v, votes) for v in verdicts if (votes := panel_votes(v)) is not None]
    if not rows:
        return None
    names = list(dict.fromkeys(vote.judge for _, votes in rows for vote in votes))
    column = {name: i for i, name in enumerate(names)}
    ratings: list[list[float | None]] = [[None] * len(names) for _ in rows]     # rows × judges; None: no score
    records = {name: JudgeRecord(judge=name) for name in names}
    for r, (_, votes) in enumerate(rows):
        for vote in votes:
            ratings[r][column[vote.judge]] = vote.score
            record = records[vote.judge]
            record.model = record.model or vote.model
            record.n_scored += vote.score is not None
            record.n_unscored += vote.score is None
            record.usage = None if record.usage is None or vote.usage is None else record.usage + vote.usage
    for name, record in records.items():
        scores = [score for row in ratings if (score := row[column[name]]) is not None]
        record.mean = sum(scores) / len(scores) if scores else None
    # the rows every judge scored
    complete = [scored for row in ratings if len(scored := [s for s in row if s is not None]) == len(row)]
    notes = []
    fleiss = None
    if threshold is not None:
        if complete:
            fleiss = fleiss_kappa([[float(s >= threshold) for s in row] for row in complete], n_boot=n_boot,
                                  seed=seed)
        else:
            fleiss = Estimate(note="no row was scored by every judge")
    if len(complete) < len(rows):
        notes.append(f"{len(rows) - len(complete)} row(s) lack some judge's score: alpha uses the scores there are, "
                     "the pass/fail kappa only complete rows")
    return PanelAgreement(
        judges=list(records.values()), n_rows=len(rows), n_complete=len(complete),
        n_disagreements=sum(1 for v, _ in rows if v.details[DETAILS_KEY].get("disagreement")),
        alpha_ordinal=krippendorff_alpha(ratings, level="ordinal", n_boot=n_boot, seed=seed),
        fleiss_pass=fleiss, notes=notes)
