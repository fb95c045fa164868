"""Events of the appeal and calibration tabs. Who asks is the login behind the request (TeamHandlers.member, refused
once the session ended); what they may do is checked by the store (rubriceval/audit/appeals.py, calibration.py): an
agent sees and appeals only their own conversations, before the run's deadline; reviewers decide; leads close
appeals and run calibration sessions. A refused step is a warning plus the same words in the tab's status line."""
from __future__ import annotations

from typing import Any

import gradio as gr

from rubriceval.audit.appeals import Appeals
from rubriceval.audit.calibration import Calibration, CalibrationPick
from rubriceval.audit.sessions import Member
from rubriceval.data.sample import Sample
from rubriceval.i18n import t
from rubriceval.store.appeal_models import REVIEWER_ROLES, AppealError
from rubriceval.store.audit_models import iso_time
from rubriceval.store.team_models import TeamError
from rubriceval.ui.common.errors import user_errors
from rubriceval.ui.team.actions import TeamSession
from rubriceval.ui.team.appeals_layout import SCORES, AppealTabs
from rubriceval.ui.team.appeals_views import (
    appeal_html,
    calibration_item_html,
    calibration_items_frame,
    calibration_markdown,
    inbox_frame,
    item_choices,
    my_verdicts_frame,
    scorer_label,
    state_text,
    verdict_html,
    verdict_key,
)
from rubriceval.ui.team.wiring import TeamHandlers


class AppealHandlers:
    def __init__(self, base: TeamHandlers):
        self.base, self.team = base, base.team
        self.appeals = Appeals(self.team, clock=base.auth.clock)
        self.calibration = Calibration(self.team, clock=base.auth.clock)

    def _me(self, request: gr.Request) -> Member:
        return self.base.member(request)

    def _sample(self, run_id: str, sample_id: str) -> Sample:
        rows = self.team.query("SELECT sample_json FROM run_samples WHERE run_id = :r AND sample_id = :s",
                               {"r": run_id, "s": sample_id})
        if not rows:
            raise TeamError(f"no sample '{sample_id}' in this run", field="sample")
        return Sample.model_validate_json(rows[0][0])

    def do_load(self, session: TeamSession, request: gr.Request) -> list[Any]:
        me = self._me(request)
        runs = [(r.name, r.run_id) for r in self.team.audit.runs.list_runs()]
        newest = runs[-1][1] if runs else None
        reviewer = me.role in REVIEWER_ROLES
        sessions = [(s.name, s.session_id) for s in self.calibration.sessions(
            reviewer=None if me.is_lead else me.name)]
        # The page opens on the first tab built (the queue), which an agent does not have: open theirs instead.
        opened = gr.Tabs(selected="appeal-mine") if me.role == "agent" else gr.skip()
        return [opened, gr.Tab(visible=me.role == "agent"), gr.Tab(visible=reviewer), gr.Tab(visible=reviewer),
                gr.update(choices=runs, value=newest), gr.update(visible=me.is_lead),
                gr.update(visible=me.is_lead), gr.update(visible=me.is_lead),
                gr.update(choices=runs, value=newest), gr.update(choices=[m.name for m in self.base.auth.members()
                                                                          if m.role in REVIEWER_ROLES]),
                gr.update(choices=sessions, value=sessions[-1][1] if sessions else None)]

    # -- an agent's own verdicts ------------------------------------------------------------------------------------
    def _mine(self, me: Member, run: str | None) -> list[Any]:
        if me.role != "agent":
            raise AppealError("only an agent has conversations of their own here", field="role")
        if not run:
            raise AppealError("pick a run", field="run")
        return self.appeals.agent_verdicts(run, me.name)

    def do_my_verdicts(self, run: str | None, session: TeamSession, request: gr.Request) -> list[Any]:
        rows = self._mine(self._me(request), run)
        closes = self.appeals.closes_at(self.team.audit.resolve(run))   # type: ignore[arg-type]
        choices = [(f"{v.sample_id} · {scorer_label(v.scorer, v.scorer_name)}", verdict_key(v)) for v in rows]
        return [t("appeal_ui_closes", session.lang, at=iso_time(closes)), my_verdicts_frame(rows, session.lang),
                gr.update(choices=choices, value=choices[0][1] if choices else None)]

    def do_pick_verdict(self, run: str | None, key: str | None, session: TeamSession, request: gr.Request
                        ) -> list[Any]:
        if not key:
            return ["", gr.update(choices=[])]
        mine = {verdict_key(v): v for v in self._mine(self._me(request), run)}
        if key not in mine:       # a value typed into the dropdown: the same words as for another agent's sample
            raise AppealError("not one of your conversations", field="sample")
        v = mine[key]
        choices = item_choices(v, session.lang)
        return [verdict_html(v, self._sample(v.run_id, v.sample_id), session.lang),
                gr.update(choices=choices, value=choices[-1][1])]

    def do_appeal(self, run: str | None, key: str | None, item: str | None, reason: str, session: TeamSession,
                  request: gr.Request) -> list[Any]:
        me = self._me(request)
        if not run or not key or "|" not in key:
            raise AppealError(t("appeal_ui_need_pick", session.lang), field="sample")
        sample_id, scorer = key.split("|", 1)
        appeal = self.appeals.submit(run, sample_id, scorer, agent=me.name, role=me.role, reason=reason,
                                     item=item or "")
        rows = self.appeals.agent_verdicts(run, me.name)
        return [t("appeal_ui_submitted", session.lang, id=appeal.appeal_id), my_verdicts_frame(rows, session.lang)]

    # -- the reviewers' inbox ---------------------------------------------------------------------------------------
    def _reviewer(self, request: gr.Request) -> Member:
        me = self._me(request)
        if me.role not in REVIEWER_ROLES:
            raise AppealError("only reviewers and leads see the appeals inbox", field="role")
        return me

    def do_inbox(self, state: str | None, session: TeamSession, request: gr.Request) -> list[Any]:
        self._reviewer(request)
        rows = self.appeals.list(state=state or None)            # type: ignore[arg-type]
        choices = [(f"{a.appeal_id} · {a.sample_id} · {state_text(a.state, session.lang)}", a.appeal_id) for a in rows]
        names = {(a.run_id, a.scorer): self.appeals.item_names(a.run_id, a.scorer) for a in rows}
        official = {a.appeal_id: self.appeals.official_now(a.run_id, a.sample_id, a.scorer) for a in rows}
        return [inbox_frame(rows, session.lang, names, official), gr.update(choices=choices, value=choices[0][1] if choices else None)]

    def do_inbox_table(self, state: str | None, session: TeamSession, request: gr.Request) -> Any:
        """The inbox table alone, after a decision: its 官方分 column is the official total now (the one rule), while
        the picked appeal stays picked."""
        return self.do_inbox(state, session, request)[0]

    def _view(self, appeal_id: str | None, session: TeamSession, message: str = "") -> list[Any]:
        if not appeal_id:
            raise AppealError(t("appeal_ui_need_pick", session.lang), field="appeal")
        a = self.appeals.get(appeal_id)
        feedback = self.team.query("SELECT feedback FROM verdicts WHERE run_id = :r AND sample_id = :s AND "
                                   "scorer = :c", {"r": a.run_id, "s": a.sample_id, "c": a.scorer})
        # the official score now (the one rule), so a decision just saved shows at once
        html = appeal_html(a, self.appeals.events(appeal_id), self._sample(a.run_id, a.sample_id),
                           feedback[0][0] if feedback else "", session.lang,
                           official_now=self.appeals.official_now(a.run_id, a.sample_id, a.scorer),
                           names=self.appeals.item_names(a.run_id, a.scorer))
        return [html, a.version, message]

    def do_score_choices(self, appeal_id: str | None, session: TeamSession, request: gr.Request) -> Any:
        """改判 as the verdict counts: 1–5 for a rubric; for a scorecard, points 0–base for the whole total, and for
        one item no number at all (the item turns over, the card's arithmetic gives the total)."""
        self._reviewer(request)
        if not appeal_id:
            return gr.update(choices=SCORES, value=None, label=t("appeal_ui_score", session.lang))
        a = self.appeals.get(appeal_id)
        target = self.appeals.target(a.run_id, a.sample_id, a.scorer)
        if target.kind != "scorecard":
            return gr.update(choices=SCORES, value=None, label=t("appeal_ui_score", session.lang))
        if a.item:
            return gr.update(choices=[], value=None, label=t("appeal_ui_score_card_item", session.lang,
                                                             score="—" if a.proposed_score is None
                                                             else f"{a.proposed_score:g}"))
        base = int(target.definition.get("base", 100))
        return gr.update(choices=[str(p) for p in range(0, base + 1, 5)], value=None,
                         label=t("appeal_ui_score_points", session.lang, base=base))

    def do_open(self, appeal_id: str | None, session: TeamSession, request: gr.Request) -> list[Any]:
        self._reviewer(request)
        return self._view(appeal_id, session)

    def do_take(self, appeal_id: str | None, version: int, session: TeamSession, request: gr.Request) -> list[Any]:
        me = self._reviewer(request)
        if not appeal_id:
            raise AppealError(t("appeal_ui_need_pick", session.lang), field="appeal")
        result = self.appeals.review(appeal_id, reviewer=me.name, role=me.role, expected_version=int(version or 0))
        saved = t("appeal_ui_saved", session.lang, state=state_text(result.appeal.state, session.lang))
        return self._view(appeal_id, session, saved if result.ok else f"⚠ {result.message}")

    def do_decide(self, final: bool):
        def handler(appeal_id: str | None, version: int, outcome: str | None, score: str | None, reason: str,
                    session: TeamSession, request: gr.Request) -> list[Any]:
            me = self._reviewer(request)
            if not appeal_id or outcome not in ("accepted", "rejected"):
                raise AppealError(t("appeal_ui_need_pick", session.lang), field="outcome")
            step = self.appeals.finalize if final else self.appeals.decide
            who = {"lead": me.name} if final else {"reviewer": me.name}
            result = step(appeal_id, **who, role=me.role, outcome=outcome, reason=reason,   # type: ignore[arg-type]
                          score=int(score) if score else None, expected_version=int(version or 0))
            message = (t("appeal_ui_saved", session.lang, state=state_text(result.appeal.state, session.lang))
                       if result.ok else f"⚠ {result.message}")
            return self._view(appeal_id, session, message)
        return handler

    # -- calibration sessions ---------------------------------------------------------------------------------------
    def do_cal_create(self, name: str, run: str | None, rubric: str, picks: str, reviewers: list[str] | None,
                      session: TeamSession, request: gr.Request) -> list[Any]:
        me = self._me(request)
        if not run:
            raise TeamError("pick a run", field="run")
        scorer = (rubric or "").strip() or next((s["scorer"] for s in self.team.audit.rubric_scorers(run)), "")
        chosen = []
        for number, line in enumerate((picks or "").splitlines(), start=1):
            if not line.strip():
                continue
            sample_id, _, label = line.partition("=")
            try:
                benchmark = int(label) if label.strip() else None
            except ValueError:
                raise TeamError(f"line {number}: '{label.strip()}' is not a score 1–5", field="picks") from None
            chosen.append(CalibrationPick(run=run, sample_id=sample_id.strip(), scorer=scorer, benchmark=benchmark))
        created = self.calibration.create(name, lead=me.name, role=me.role, reviewers=reviewers or [], picks=chosen)
        sessions = [(s.name, s.session_id) for s in self.calibration.sessions()]
        return [t("cal_ui_created", session.lang, name=created.name, n=len(created.items)),
                gr.update(choices=sessions, value=created.session_id)]

    def do_cal_open(self, session_id: str | None, session: TeamSession, request: gr.Request) -> list[Any]:
        """The session's items, and the first one not yet graded opened (an empty item number showed as 0, refused)."""
        me = self._me(request)
        if not session_id:
            raise TeamError(t("appeal_ui_need_pick", session.lang), field="session")
        info = self.calibration.session(session_id)
        if me.name not in info.reviewers and not me.is_lead:
            raise TeamError(f"you are not a reviewer of session '{info.name}'", field="session")
        graded = self.calibration.my_grades(session_id, me.name)
        first = next((i for i in info.items if i.item_no not in graded), info.items[0] if info.items else None)
        view = "" if first is None else self._cal_view(first, session)
        return [calibration_items_frame(info.items, graded, session.lang),
                gr.update(value=None if first is None else first.item_no), view]

    def do_cal_item(self, session_id: str | None, number: float | None, session: TeamSession,
                    request: gr.Request) -> Any:
        me = self._me(request)
        if not session_id or number is None:
            return ""
        info = self.calibration.session(session_id)
        if me.name not in info.reviewers and not me.is_lead:
            raise TeamError(f"you are not a reviewer of session '{info.name}'", field="session")
        item = next((i for i in info.items if i.item_no == int(number)), None)
        if item is None:
            raise TeamError(f"session '{info.name}' has no item {int(number)}", field="item")
        return self._cal_view(item, session)

    def _cal_view(self, item: Any, session: TeamSession) -> str:
        return calibration_item_html(self._sample(item.run_id, item.sample_id),
                                     self.team.definition(item.run_id, item.scorer), session.lang)

    def do_cal_grade(self, session_id: str | None, number: float | None, score: str | None, session: TeamSession,
                     request: gr.Request) -> list[Any]:
        me = self._me(request)
        if not session_id or number is None or not score:
            raise TeamError(t("appeal_ui_need_pick", session.lang), field="item")
        self.calibration.grade(session_id, int(number), reviewer=me.name, score=int(score))
        info = self.calibration.session(session_id)
        return [t("cal_ui_graded", session.lang, no=int(number), score=score),
                calibration_items_frame(info.items, self.calibration.my_grades(session_id, me.name), session.lang)]

    def do_cal_report(self, session_id: str | None, session: TeamSession, request: gr.Request) -> str:
        me = self._me(request)
        if not me.is_lead:
            raise TeamError(t("team_lead_only", session.lang), field="role")
        if not session_id:
            raise TeamError(t("appeal_ui_need_pick", session.lang), field="session")
        return calibration_markdown(self.calibration.report(session_id), session.lang, self.calibration.alignment())


def wire_appeals(app: gr.Blocks, ui: AppealTabs, state: gr.State, handlers: AppealHandlers) -> None:
    a, i, c = ui.agent, ui.inbox, ui.calibration
    app.load(user_errors(handlers.do_load), inputs=[state],
             outputs=[ui.tabs, a.tab, i.tab, c.tab, a.run_dd, i.final_btn, c.lead_box, c.report_btn, c.run_dd, c.reviewers,
                      c.session_dd], api_name="appeals_load")
    a.load_btn.click(user_errors(handlers.do_my_verdicts, [a.closes, a.table, a.verdict_dd, a.status], a.status),
                     inputs=[a.run_dd, state], outputs=[a.closes, a.table, a.verdict_dd], api_name="my_verdicts")
    a.verdict_dd.change(user_errors(handlers.do_pick_verdict), inputs=[a.run_dd, a.verdict_dd, state],
                        outputs=[a.verdict_view, a.deduction_dd], api_name="my_verdict")
    a.submit_btn.click(user_errors(handlers.do_appeal, [a.status, a.table], a.status),
                       inputs=[a.run_dd, a.verdict_dd, a.deduction_dd, a.reason, state], outputs=[a.status, a.table],
                       api_name="appeal_submit")
    i.refresh_btn.click(user_errors(handlers.do_inbox), inputs=[i.state_dd, state], outputs=[i.table, i.appeal_dd],
                        api_name="appeals_inbox")
    view = [i.view, i.version, i.status]
    i.open_btn.click(user_errors(handlers.do_open, view, i.status), inputs=[i.appeal_dd, state], outputs=view,
                     api_name="appeal_open").then(user_errors(handlers.do_score_choices), inputs=[i.appeal_dd, state],
                                                  outputs=[i.score], api_name="appeal_score_choices")
    i.take_btn.click(user_errors(handlers.do_take, view, i.status), inputs=[i.appeal_dd, i.version, state],
                     outputs=view, api_name="appeal_take")
    for button, final, name in ((i.decide_btn, False, "appeal_decide"), (i.final_btn, True, "appeal_final")):
        # the inbox's totals follow the saved decision at once (they showed the old official score until 刷新)
        button.click(user_errors(handlers.do_decide(final), view, i.status),
                     inputs=[i.appeal_dd, i.version, i.outcome, i.score, i.reason, state], outputs=view,
                     api_name=name).then(user_errors(handlers.do_inbox_table), inputs=[i.state_dd, state],
                                         outputs=[i.table], api_name=f"{name}_inbox")
    c.create_btn.click(user_errors(handlers.do_cal_create, [c.create_status, c.session_dd], c.create_status),
                       inputs=[c.name, c.run_dd, c.rubric, c.picks, c.reviewers, state],
                       outputs=[c.create_status, c.session_dd], api_name="calibration_create")
    c.open_btn.click(user_errors(handlers.do_cal_open), inputs=[c.session_dd, state],
                     outputs=[c.items, c.item_no, c.item_view],
                     api_name="calibration_open")
    c.item_no.change(user_errors(handlers.do_cal_item), inputs=[c.session_dd, c.item_no, state],
                     outputs=[c.item_view], api_name="calibration_item")
    c.save_btn.click(user_errors(handlers.do_cal_grade, [c.status, c.items], c.status),
                     inputs=[c.session_dd, c.item_no, c.grade, state], outputs=[c.status, c.items],
                     api_name="calibration_grade")
    c.report_btn.click(user_errors(handlers.do_cal_report), inputs=[c.session_dd, state], outputs=[c.report],
                       api_name="calibration_report")
