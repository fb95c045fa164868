"""Events of the scorecard review tab. Who reviews is the login behind the request (TeamHandlers.member, refused once
the session ended), never a name the client sends; only reviewers and leads (REVIEWER_ROLES) may list verdicts or
save a decision, checked here on the server whatever the client sends. Decisions go through the same store
functions as `rubriceval scorecard review` (rubriceval/scorecard/reviews.py: check_decision refuses one that does
not fit the outcome), so the trust per item (`scorecard trust`, the reports) counts them alike."""
from __future__ import annotations

from typing import Any

import gradio as gr

from rubriceval.audit.sessions import Member
from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.i18n import t
from rubriceval.scorecard.reviews import ReviewStore
from rubriceval.scorecard.store import ScorecardStore
from rubriceval.scorecard.verdict import ScorecardVerdict
from rubriceval.store.appeal_models import REVIEWER_ROLES
from ui.common.errors import user_errors
from ui.team.actions import TeamSession
from ui.team.scorecard_review_layout import ScorecardReviewTab
from ui.team.scorecard_review_views import item_choices, verdict_html, verdict_key, verdicts_frame
from ui.team.wiring import TeamHandlers


class ScorecardReviewHandlers:
    def __init__(self, base: TeamHandlers):
        self.base, self.team = base, base.team
        self.runs = self.team.audit.runs
        self.cards, self.reviews = ScorecardStore(self.runs), ReviewStore(self.runs)

    def _reviewer(self, request: gr.Request, session: TeamSession) -> Member:
        me = self.base.member(request)
        if me.role not in REVIEWER_ROLES:
            raise RubricEvalError(t("scr_reviewers_only", session.lang), field="role")
        return me

    def _verdict(self, run: str | None, key: str | None, session: TeamSession) -> ScorecardVerdict:
        if not run or not key or "|" not in key:
            raise RubricEvalError(t("scr_need_pick", session.lang), field="sample")
        sample_id, card = key.split("|", 1)
        found = next((v for v in self.cards.verdicts(run, card) if v.sample_id == sample_id), None)
        if found is None:
            raise RubricEvalError(f"no '{card}' verdict for sample '{sample_id}' in this run", field="sample")
        return found

    def _sample(self, run: str, sample_id: str) -> Sample:
        rows = self.team.query("SELECT sample_json FROM run_samples WHERE run_id = :r AND sample_id = :s",
                               {"r": self.runs.resolve(run), "s": sample_id})
        if not rows:
            raise RubricEvalError(f"no sample '{sample_id}' in this run", field="sample")
        return Sample.model_validate_json(rows[0][0])

    def do_load(self, session: TeamSession, request: gr.Request) -> list[Any]:
        me = self.base.member(request)
        runs = [(r.name, r.run_id) for r in self.runs.list_runs()]
        return [gr.Tab(visible=me.role in REVIEWER_ROLES), gr.update(choices=runs, value=runs[-1][1] if runs else None)]

    def do_list(self, run: str | None, session: TeamSession, request: gr.Request) -> list[Any]:
        self._reviewer(request, session)
        if not run:
            raise RubricEvalError(t("scr_need_pick", session.lang), field="run")
        verdicts = self.cards.verdicts(run)
        choices = [(f"{v.sample_id} · {v.scorecard}", verdict_key(v)) for v in verdicts]
        return [verdicts_frame(verdicts, self.reviews.reviews(run), session.lang),
                gr.update(choices=choices, value=choices[0][1] if choices else None)]

    def _view(self, run: str, verdict: ScorecardVerdict, session: TeamSession) -> list[Any]:
        reviews = self.reviews.reviews(run, verdict.scorecard)
        choices = item_choices(verdict, reviews)
        return [verdict_html(verdict, self._sample(run, verdict.sample_id), reviews, session.lang),
                gr.update(choices=choices, value=choices[0][1] if choices else None)]

    def do_open(self, run: str | None, key: str | None, session: TeamSession, request: gr.Request) -> list[Any]:
        self._reviewer(request, session)
        if not key:
            return ["", gr.update(choices=[])]
        return self._view(run or "", self._verdict(run, key, session), session)

    def do_save(self, run: str | None, key: str | None, item: str | None, decision: str | None, note: str,
                session: TeamSession, request: gr.Request) -> list[Any]:
        me = self._reviewer(request, session)
        verdict = self._verdict(run, key, session)
        if not item or not decision:
            raise RubricEvalError(t("scr_need_pick", session.lang), field="decision")
        # check_decision (inside add) refuses a decision that does not fit the outcome, as on the CLI
        self.reviews.add(run or "", verdict, item, decision,  # type: ignore[arg-type]
                         reviewer=me.name, note=note or "")
        view, items = self._view(run or "", verdict, session)
        table = verdicts_frame(self.cards.verdicts(run or ""), self.reviews.reviews(run or ""), session.lang)
        return [t("scr_saved", session.lang, item=item, decision=decision), view, items, table]


def wire_scorecard_review(app: gr.Blocks, ui: ScorecardReviewTab, state: gr.State,
                          handlers: ScorecardReviewHandlers) -> None:
    app.load(user_errors(handlers.do_load), inputs=[state], outputs=[ui.tab, ui.run_dd],
             api_name="scorecard_review_load")
    ui.load_btn.click(user_errors(handlers.do_list),
                      inputs=[ui.run_dd, state], outputs=[ui.table, ui.verdict_dd], api_name="scorecard_review_list")
    ui.verdict_dd.change(user_errors(handlers.do_open),
                         inputs=[ui.run_dd, ui.verdict_dd, state], outputs=[ui.view, ui.item_dd],
                         api_name="scorecard_review_open")
    saved = [ui.status, ui.view, ui.item_dd, ui.table]
    ui.save_btn.click(user_errors(handlers.do_save, saved, ui.status),
                      inputs=[ui.run_dd, ui.verdict_dd, ui.item_dd, ui.decision, ui.note, state], outputs=saved,
                      api_name="scorecard_review_save")
