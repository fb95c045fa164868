"""Calibrations rubriceval ships for its own evidence kinds on a judge it has measured (issue 39, round 3).

An evidence kind (evidence.py: a promise, another person's data, an upset customer, soothing) is asked of a small
judge in the kind's own per-turn wording — the gate kinds' per-claim question, the mood kinds' turn question — so
the wording is rubriceval's, not the card author's, and its p(yes) scale on one judge can be measured once, on
labelled conversations, instead of by every team from its own reviews. `kind_calibrations.yaml` holds one
calibration per kind, language and judge: the cut-off and undecided band on the item's score (the highest p(yes) over
the turns asked), fitted on the labelled contact-centre sets by `python -m benchmarks.judge.kind_fit --write`, with
the wording it was fitted for. It applies only with that judge AND that wording: change either and the item falls
back to its examples (anchors.py) or 0.5. An item's own calibration for the judge (from its reviews: `scorecard fit`)
comes first — the team's reviews know its conversations better than a benchmark does."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel

from rubriceval.rubric.calibration import ItemCalibration

FILE = Path(__file__).with_name("kind_calibrations.yaml")


class KindCalibration(BaseModel):
    kind: str
    lang: str
    question: str                  # the per-turn wording it was fitted for (a gate kind's, with {claims})
    calibration: ItemCalibration


@lru_cache(maxsize=1)
def shipped() -> tuple[KindCalibration, ...]:
    if not FILE.exists():
        return ()
    entries = yaml.safe_load(FILE.read_text(encoding="utf-8")) or []
    return tuple(KindCalibration.model_validate(e) for e in entries)


def kind_calibration(kind: str, lang: str, question: str, judge_model: str | None) -> ItemCalibration | None:
    """The shipped calibration of this kind's wording on this judge, or None (another judge or another wording)."""
    if judge_model is None:
        return None
    for entry in shipped():
        if (entry.kind, entry.lang, entry.question, entry.calibration.judge) == (kind, lang, question, judge_model):
            return entry.calibration
    return None


def write(entries: list[KindCalibration], path: Path = FILE) -> None:
    """Replace the shipped file (the fit script's --write); a header says where it comes from."""
    header = ("# Written by `python -m benchmarks.judge.kind_fit --write` (issue 39): one calibration per evidence kind,\n"
              "# language, per-turn wording and judge, fitted on labelled contact-centre conversations. Do not edit by\n"
              "# hand: refit. Read by rubriceval/scoring/judgement/kind_calibration.py.\n")
    body = yaml.safe_dump([e.model_dump(mode="json", exclude_none=True) for e in entries], allow_unicode=True,
                          sort_keys=False, width=200)
    path.write_text(header + body, encoding="utf-8")
    shipped.cache_clear()
