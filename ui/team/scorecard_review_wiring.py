"""Events of the scorecard review tab. Who reviews is the login behind the request (TeamHandlers.member, refused once
the session ended), never a name the client sends; only reviewers and leads (REVIEWER_ROLES) may list verdicts or
save a decision, checked here on the server whatever the client sends. The reads and writes are the ones the audit
app shares (ui/common/scorecard_view_actions.py: the same store functions as `rubriceval scorecard review`), so the
trust per item (`scorecard trust`, the reports) counts them alike."""
from __future__ import annotations

from typing import Any

import gradio as gr

from rubriceval.audit.scorecard_official import official_totals
from rubriceval.audit.sessions import Member
from rubriceval.audit.team_cards import open_card_item, save_card_review
from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import t
from rubriceval.store.appeal_models import REVIEWER_ROLES
from rubriceval.ui.common.errors import user_errors
from rubriceval.ui.common.scorecard_view_actions import ScorecardDesk
from rubriceval.ui.team.actions import TeamSession
from rubriceval.ui.team.scorecard_review_layout import ScorecardReviewTab
from rubriceval.ui.team.scorecard_task_views import card_task_html, item_labels
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


    # -- a reviewer's card review tasks (blind; rubriceval/audit/team_cards.py) -----------------------------------
    def do_tasks(self, session: TeamSession, request: gr.Request) -> Any:
        me = self._reviewer(request, session)
        tasks = [(f"{t_.name} ({', '.join(t_.scorecards)})", t_.task_id) for t_ in self.team.tasks(expert=me.name)
                 if t_.scorecards]
        return gr.update(choices=tasks, value=tasks[-1][1] if tasks else None)

    def do_task_items(self, task: str | None, session: TeamSession, request: gr.Request) -> Any:
        me = self._reviewer(request, session)
        if not task:
            return gr.update(choices=[], value=None)
        info = self.team.task(task)
        rows = self.team.queue(info.task_id, me.name, page_size=500).rows
        mine = [r for r in rows if r.scorer in info.scorecards]
        choices = [(f"#{r.item_no} · {r.sample_id} · {t('team_state_' + r.state, session.lang)}", str(r.item_no))
                   for r in mine]
        first = next((str(r.item_no) for r in mine if r.state == "open"), choices[0][1] if choices else None)
        return gr.update(choices=choices, value=first)

    def _card(self, task: str, item_no: str, me: Member, session: TeamSession, message: str = "") -> list[Any]:
        item = open_card_item(self.team, task, int(item_no), me.name)
        official = official_totals(self.runs, item.run_id, item.scorecard).get((item.sample_id, item.scorecard))
        html = card_task_html(item, self.desk.sample(item.run_id, item.sample_id),
                              official if item.judge_shown else None, session.lang)
        labels = item_labels(item)
        hits = [i for i, s in item.mine.items() if s == "hit"]
        nas = [i for i, s in item.mine.items() if s == "not_applicable"]
        return [html, gr.update(choices=labels, value=hits), gr.update(choices=labels, value=nas),
                gr.update(value=bool(item.mine)), item.version, message]

    def do_card_open(self, task: str | None, item_no: str | None, session: TeamSession, request: gr.Request
                     ) -> list[Any]:
        me = self._reviewer(request, session)
        if not task or not item_no:
            return ["", gr.update(choices=[]), gr.update(choices=[]), gr.update(value=False), 0, ""]
        return self._card(task, item_no, me, session)

    def do_card_save(self, task: str | None, item_no: str | None, hits: list[str] | None, nas: list[str] | None,
                     all_decided: bool, note: str, version: int, session: TeamSession, request: gr.Request
                     ) -> list[Any]:
        me = self._reviewer(request, session)
        if not task or not item_no:
            raise RubricEvalError(t("scr_need_pick", session.lang), field="item")
        if not all_decided:
            raise RubricEvalError(t("scr_task_confirm_all", session.lang), field="items")
        item = open_card_item(self.team, task, int(item_no), me.name)
        both = set(hits or []) & set(nas or [])
        if both:
            raise RubricEvalError(f"{', '.join(sorted(both))}: hit or N/A, not both", field="items")
        statuses = {i: "hit" if i in (hits or []) else "not_applicable" if i in (nas or []) else "clear"
                    for i, _ in item.items}
        saved = save_card_review(self.team, task, int(item_no), me.name, statuses, expected_version=int(version or 0),
                                 note=note or "")
        if not saved.ok:
            return self._card(task, item_no, me, session, f"⚠ {saved.message}")
        total = open_card_item(self.team, task, int(item_no), me.name).my_total
        return self._card(task, item_no, me, session,
                          t("scr_task_saved", session.lang, total="—" if total is None else total))


def wire_scorecard_review(app: gr.Blocks, ui: ScorecardReviewTab, state: gr.State,
                          handlers: ScorecardReviewHandlers) -> None:
    k = ui.tasks
    k.task_load_btn.click(user_errors(handlers.do_tasks), inputs=[state], outputs=[k.task_dd],
                          api_name="card_tasks")
    k.task_dd.change(user_errors(handlers.do_task_items), inputs=[k.task_dd, state], outputs=[k.item_dd],
                     api_name="card_task_items")
    card = [k.view, k.hits, k.nas, k.all_decided, k.version, k.status]
    k.item_dd.change(user_errors(handlers.do_card_open, card, k.status), inputs=[k.task_dd, k.item_dd, state],
                     outputs=card, api_name="card_task_open")
    k.save_btn.click(user_errors(handlers.do_card_save, card, k.status),
                     inputs=[k.task_dd, k.item_dd, k.hits, k.nas, k.all_decided, k.note, k.version, state],
                     outputs=card, api_name="card_task_save")
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
