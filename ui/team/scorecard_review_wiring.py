"""Events of the scorecard review tab. Who reviews is the login behind the request (TeamHandlers.member, refused once
the session ended), never a name the client sends; only reviewers and leads (REVIEWER_ROLES) may list verdicts or
save a decision, checked here on the server whatever the client sends. The reads and writes are the ones the audit
app shares (ui/common/scorecard_view_actions.py: the same store functions as `rubriceval scorecard review`), so the
trust per item (`scorecard trust`, the reports) counts them alike."""
from __future__ import annotations

from typing import Any

import gradio as gr

from rubriceval.audit.sessions import Member
from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import t
from rubriceval.store.appeal_models import REVIEWER_ROLES
from rubriceval.ui.common.errors import user_errors
from rubriceval.ui.common.scorecard_view_actions import ScorecardDesk
from rubriceval.ui.team.actions import TeamSession
from rubriceval.ui.team.scorecard_review_layout import ScorecardReviewTab
from rubriceval.ui.team.wiring import TeamHandlers


class ScorecardReviewHandlers:
    def __init__(self, base: TeamHandlers):
        self.base, self.team = base, base.team
        self.runs = self.team.audit.runs
        self.desk = ScorecardDesk(self.runs)          # the reads and writes the audit app shares

    def _reviewer(self, request: gr.Request, session: TeamSession) -> Member:
        me = self.base.member(request)
        if me.role not in REVIEWER_ROLES:
            raise RubricEvalError(t("scr_reviewers_only", session.lang), field="role")
        return me

    def do_load(self, session: TeamSession, request: gr.Request) -> list[Any]:
        me = self.base.member(request)
        runs = [(r.name, r.run_id) for r in self.runs.list_runs()]
        return [gr.Tab(visible=me.role in REVIEWER_ROLES), gr.update(choices=runs, value=runs[-1][1] if runs else None)]

    def do_list(self, run: str | None, session: TeamSession, request: gr.Request) -> list[Any]:
        self._reviewer(request, session)
        if not run:
            raise RubricEvalError(t("scr_need_pick", session.lang), field="run")
        listing = self.desk.listing(run, session.lang)
        return [listing.frame, gr.update(choices=listing.choices,
                                         value=listing.choices[0][1] if listing.choices else None)]

    def do_open(self, run: str | None, key: str | None, session: TeamSession, request: gr.Request) -> list[Any]:
        self._reviewer(request, session)
        if not key:
            return ["", gr.update(choices=[])]
        opened = self.desk.open(run or "", self.desk.verdict(run, key, session.lang), session.lang)
        return [opened.html, gr.update(choices=opened.items, value=opened.items[0][1] if opened.items else None)]

    def do_save(self, run: str | None, key: str | None, item: str | None, decision: str | None, note: str,
                session: TeamSession, request: gr.Request) -> list[Any]:
        me = self._reviewer(request, session)
        saved = self.desk.save(run, key, item, decision, note, me.name, session.lang)
        items = saved.opened.items
        return [saved.message, saved.opened.html, gr.update(choices=items, value=items[0][1] if items else None),
                saved.listing.frame]


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
