"""The scorecard review's reads and writes, shared by the audit app (ui/audit/scorecard_panel.py) and the team app
(ui/team/scorecard_review_wiring.py): list a run's scorecard verdicts, open one beside its transcript, record a
decision. Who reviews, and who may, is each app's own rule and is handed in; the decision goes through the same
store functions as `rubriceval scorecard review` (ReviewStore.add: check_decision refuses one that does not fit the
outcome), so `scorecard trust` and the reports count every app's decisions alike."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from rubriceval.audit.scorecard_official import official_totals
from rubriceval.audit.scorecard_reviews import Decision, ReviewStore
from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.i18n import Lang, t
from rubriceval.scorecard.verdict import ScorecardVerdict
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.ui.common.scorecard_view import (
    decision_text,
    item_choices,
    verdict_choices,
    verdict_html,
    verdicts_frame,
)


@dataclass
class Listing:
    frame: pd.DataFrame
    choices: list[tuple[str, str]]      # (label, "sample|scorecard")


@dataclass
class Opened:
    html: str
    items: list[tuple[str, str]]        # (label, item id), hits first


@dataclass
class Saved:
    message: str
    opened: Opened
    listing: Listing


class ScorecardDesk:
    """Scorecard verdicts and reviews of one run store (a `RunStore`: SQLite or PostgreSQL)."""

    def __init__(self, runs: Any):
        self.runs = runs
        self.cards, self.reviews = ScorecardStore(runs), ReviewStore(runs)

    def has_verdicts(self, run: str) -> bool:
        with self.runs.lock:
            rows = self.runs.conn.execute("SELECT 1 FROM scorecard_verdicts WHERE run_id = ? LIMIT 1",
                                          (self.runs.resolve(run),)).fetchall()
        return bool(rows)

    def listing(self, run: str, lang: Lang) -> Listing:
        verdicts = self.cards.verdicts(run)
        return Listing(verdicts_frame(verdicts, self.reviews.reviews(run), lang, official_totals(self.runs, run)),
                       verdict_choices(verdicts))

    def verdict(self, run: str | None, key: str | None, lang: Lang) -> ScorecardVerdict:
        if not run or not key or "|" not in key:
            raise RubricEvalError(t("scr_need_pick", lang), field="sample")
        sample_id, card = key.split("|", 1)
        found = next((v for v in self.cards.verdicts(run, card) if v.sample_id == sample_id), None)
        if found is None:
            raise RubricEvalError(f"no '{card}' verdict for sample '{sample_id}' in this run", field="sample")
        return found

    def sample(self, run: str, sample_id: str) -> Sample:
        with self.runs.lock:
            rows = self.runs.conn.execute("SELECT sample_json FROM run_samples WHERE run_id = ? AND sample_id = ?",
                                          (self.runs.resolve(run), sample_id)).fetchall()
        if not rows:
            raise RubricEvalError(f"no sample '{sample_id}' in this run", field="sample")
        return Sample.model_validate_json(rows[0][0])

    def open(self, run: str, verdict: ScorecardVerdict, lang: Lang) -> Opened:
        reviews = self.reviews.reviews(run, verdict.scorecard)
        names = {i.id: i.name for card in self.cards.cards(run) if card.id == verdict.scorecard for i in card.items}
        official = official_totals(self.runs, run, verdict.scorecard).get((verdict.sample_id, verdict.scorecard))
        return Opened(verdict_html(verdict, self.sample(run, verdict.sample_id), reviews, lang, names, official),
                      item_choices(verdict, reviews, lang))

    def save(self, run: str | None, key: str | None, item: str | None, decision: str | None, note: str,
             reviewer: str, lang: Lang) -> Saved:
        verdict = self.verdict(run, key, lang)
        if not item or not decision:
            raise RubricEvalError(t("scr_need_pick", lang), field="decision")
        decided: Decision = decision  # type: ignore[assignment]   # check_decision (inside add) refuses others
        self.reviews.add(run or "", verdict, item, decided, reviewer=reviewer, note=note or "")
        return Saved(t("scr_saved", lang, item=item, decision=decision_text(decided, lang)),
                     self.open(run or "", verdict, lang),
                     self.listing(run or "", lang))
