"""Scorecards (质检评分表) in the studio: the YAML edited as text (comments and all), validated by the scorecard loader
with file:line [field], tried on N conversations of a stored run — each one's total, deductions with evidence,
fatal hits and N/A items, through the run's own scorer (scorecard/score.py) — and saved as versions exactly as
rubrics are (studio/versions.py with this validator).

A draft is read as if it were the card's own file in the scorecards folder the studio edits (`CardFolder`), so a
relative path in it (`knowledge: policies.md`) is read from there — as `rubriceval run` reads the saved file; a
studio keeping versions in the run store with no such folder reads them from the working directory, as a run of
`--scorecards store:` does, and its messages say so.

A tried scorecard's verdicts are shown, not stored: reviews of scorecard deductions happen on runs
(`rubriceval scorecard review`), where the run store keeps them.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.i18n import Lang, t
from rubriceval.rubric.yaml_lines import yaml_text_with_lines
from rubriceval.scorecard.applicability import card_applies
from rubriceval.scorecard.loader import scorecard_from_data
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.studio.messages import Problem, say_problem


class CardFolder(BaseModel):
    """Where a draft's relative paths are read from: the scorecards folder the studio edits (`--scorecards DIR`, also
    the seed of a store-backed studio), or — none given — the working directory at the time of reading."""

    path: Path | None = None

    @classmethod
    def of(cls, folder: str | Path | None) -> CardFolder:
        return cls(path=Path(folder).resolve() if folder else None)

    @property
    def origin(self) -> Literal["folder", "cwd"]:
        return "folder" if self.path is not None else "cwd"

    def base(self) -> Path:
        return self.path or Path.cwd()

    def hint(self) -> str:
        key = "vhint_studio_knowledge_folder" if self.path is not None else "vhint_studio_knowledge_cwd"
        return t(key, "en", folder=str(self.base()))      # English, as the loader's; the page says it in its language


def load_text(text: str, name: str, folder: CardFolder | None = None) -> Scorecard:
    """The scorecard a draft's text is — read as the file `name` in `folder` (default: the working directory) — or
    the loader's error naming `name`, line and field. Nothing is written."""
    safe = Path(name).name or "scorecard.yaml"
    where = folder or CardFolder.of(None)
    try:
        data, lines = yaml_text_with_lines(text, safe)
        return scorecard_from_data(data, where.base() / safe, lines)
    except RubricEvalError as exc:
        reads_file = exc.field == "knowledge" and "knowledge file" in exc.message
        hint = where.hint() if reads_file else exc.hint
        raise RubricEvalError(exc.message, file=safe, line=exc.line, field=exc.field, hint=hint) from None


def scorecard_tag(text: str, name: str, folder: CardFolder | None = None) -> tuple[str | None, str]:
    """(version tag, report) of a scorecard draft, or (None, the error) — the validator of its saved versions."""
    try:
        card = load_text(text, name, folder)
    except RubricEvalError as exc:
        return None, "error: " + exc.format()
    return card.version_tag, f"✔ {card.id} {card.version_tag}: {len(card.items)} items, base {card.base}"


def card_report(text: str, name: str, lang: Lang = "en", folder: CardFolder | None = None) -> str:
    """What the page says of a scorecard draft: valid (its id, tag, items, base) or the loader's error, in `lang`."""
    try:
        card = load_text(text, name, folder)
    except RubricEvalError as exc:
        return say_problem(Problem.of(exc), lang)
    return t("vframe_valid_card", lang, id=card.id, tag=card.version_tag, items=len(card.items), base=card.base)


class TriedCard(BaseModel):
    sample_id: str
    total: int | None
    deductions: list[str]
    fatal: list[str]
    not_applicable: list[str]
    unscored_reason: str | None = None


async def try_scorecard(card: Scorecard, samples: Sequence[Sample], judge, n: int = 5) -> list[TriedCard]:
    """The card's verdict on the first `n` samples it applies to (conversations, or single turns by its scope)."""
    picked = [s for s in samples if card_applies(card, s)][:n]
    if not picked:
        raise RubricEvalError(f"scorecard '{card.id}' applies to none of these samples (scope: {card.scope})",
                              field="samples")
    tried = []
    names = {item.id: (item.name or "").strip() or item.id for item in card.items}     # a lead reads names
    for sample in picked:
        verdict = await score_scorecard(card, sample, judge)
        totals = verdict.totals
        hits = [f"{names.get(p.item, p.item)} {p.points:+d}" for p in totals.items if p.points]
        tried.append(TriedCard(sample_id=sample.id, total=totals.total, deductions=hits,
                               fatal=[names.get(i, i) for i in totals.fatal],
                               not_applicable=[names.get(i, i) for i in totals.not_applicable],
                               unscored_reason=totals.unscored_reason))
    return tried
