"""The team app's events: who is asking (the login behind the request, refused once their session ended), what
each button does (ui/team/actions.py), and which components it updates. A user mistake or a refused permission is
a warning toast plus the same words in the status line beside the fields (ui.audit.wiring.user_errors)."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import gradio as gr

from rubriceval.audit.sessions import Member, SessionExpired, TeamAuth
from rubriceval.audit.team import TeamStore
from rubriceval.i18n import LANGS, Lang, t
from rubriceval.ui.common.errors import user_errors
from rubriceval.ui.team import actions as act
from rubriceval.ui.team.actions import ItemView, TeamSession
from rubriceval.ui.team.layout import TeamLayout


def forget_login(app: gr.Blocks, username: str) -> None:
    """Drop Gradio's login tokens of a user whose session ended, so the next request asks them to log in."""
    tokens = getattr(getattr(app, "server_app", None), "tokens", None)
    if isinstance(tokens, dict):
        for token, user in list(tokens.items()):
            if user == username:
                tokens.pop(token, None)


class TeamHandlers:
    def __init__(self, app: gr.Blocks, team: TeamStore, auth: TeamAuth, lang: Lang):
        self.app, self.team, self.auth, self.lang = app, team, auth, lang
        self.relabel: Callable[[Lang], list[Any]] = lambda lang: []

    def member(self, request: gr.Request | None) -> Member:
        username = getattr(request, "username", None) if request is not None else None
        try:
            return self.auth.member(username)
        except SessionExpired:
            if username:
                forget_login(self.app, username)
            raise

    # -- page load and language -------------------------------------------------------------------------------------
    def do_load(self, session: TeamSession, request: gr.Request) -> list[Any]:
        me = self.member(request)
        lang = session.lang
        my_tasks = self.team.tasks() if me.is_lead else self.team.tasks(expert=me.name)
        task_choices = [(f"{i.name} · {i.n_items}", i.task_id) for i in my_tasks]
        first = task_choices[-1][1] if task_choices else None
        runs = [(r.name, r.run_id) for r in self.team.audit.runs.list_runs()]
        people = [m.name for m in self.auth.members()]
        lead_only = gr.Tab(visible=me.is_lead)
        return [t("team_signed_in", lang, name=me.name, role=t(f"team_role_{me.role}", lang)),
                gr.update(choices=task_choices, value=first), *self._task_facets(me, first),
                lead_only, lead_only, gr.update(choices=runs, value=runs[-1][1] if runs and me.is_lead else None),
                gr.update(choices=people), gr.update(choices=task_choices, value=first),
                gr.update(choices=task_choices, value=first),
                act.tasks_frame(self.team, lang) if me.is_lead else None, gr.Tab(visible=me.role != "agent")]

    def _task_facets(self, me: Member, task: str | None) -> list[Any]:
        """Whose queue (a lead may pick anyone on the task), the task's rubrics and sample tags."""
        if not task:
            return [gr.update(choices=[me.name], value=me.name, interactive=False), gr.update(choices=[]),
                    gr.update(choices=[])]
        info = self.team.task(task)
        whose = info.experts if me.is_lead else [me.name]
        tags = sorted({tag for r in self.team.query("SELECT DISTINCT tags FROM team_task_items WHERE task_id = :t",
                                                    {"t": info.task_id}) for tag in r[0].split("|") if tag})
        value = me.name if me.name in whose else whose[0]
        return [gr.update(choices=whose, value=value, interactive=me.is_lead),
                gr.update(choices=[("—", ""), *info.rubrics], value=""), gr.update(choices=[("—", ""), *tags],
                                                                                   value="")]

    def do_task_change(self, task: str, request: gr.Request) -> list[Any]:
        return self._task_facets(self.member(request), task)

    def do_language(self, lang: str, session: TeamSession) -> list[Any]:
        session.lang = lang if lang in LANGS else self.lang
        return [session, *self.relabel(session.lang)]

    # -- the queue --------------------------------------------------------------------------------------------------
    def render_item(self, session: TeamSession, view: ItemView, page: Any, seconds: float, message: str
                    ) -> list[Any]:
        lang = session.lang
        return [session, f"### {view.title}" if view.title else "", view.sample_html, view.rubric_html,
                view.judge_html, gr.update(value=view.score), gr.update(choices=view.tag_choices, value=view.tags),
                view.note, gr.update(choices=view.metrics, value=None), act.progress_text(self.team, session),
                act.queue_frame(page, lang), act.page_text(page, lang, seconds), message]

    def _show(self, me: Member, session: TeamSession, item_no: int | None, message: str = "",
              started: float | None = None) -> list[Any]:
        started = time.perf_counter() if started is None else started
        page = act.current_page(self.team, me, session)
        view = act.open_item(self.team, me, session, item_no)
        return self.render_item(session, view, page, time.perf_counter() - started, message)

    def do_open_queue(self, task: str, whose: str, state: str, rubric: str, tag: str, session: TeamSession,
                      request: gr.Request) -> list[Any]:
        me, started = self.member(request), time.perf_counter()
        page = act.open_queue(self.team, me, session, task, whose, state, rubric, tag)
        return self._show(me, session, page.rows[0].item_no if page.rows else None, started=started)

    def do_page(self, offset: int) -> Callable[..., list[Any]]:
        def handler(session: TeamSession, request: gr.Request) -> list[Any]:
            me = self.member(request)
            last = max(0, (session.total - 1) // act.PAGE_SIZE)
            session.page = max(0, min(session.page + offset, last))
            return self._show(me, session, session.item_no)
        return handler

    def do_open_item(self, number: float | None, session: TeamSession, request: gr.Request) -> list[Any]:
        me = self.member(request)
        if number is None:
            raise act.TeamError(t("team_need_item", session.lang), field="item")
        return self._show(me, session, int(number))

    def do_select(self, session: TeamSession, evt: gr.SelectData, request: gr.Request) -> list[Any]:
        me = self.member(request)
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        page = act.current_page(self.team, me, session)
        return self._show(me, session, page.rows[int(row)].item_no if int(row) < len(page.rows) else None)

    def do_next(self, session: TeamSession, request: gr.Request) -> list[Any]:
        me = self.member(request)
        if session.task_id is None:
            raise act.TeamError(t("team_need_item", session.lang), field="item")
        following = self.team.queue(session.task_id, session.whose,
                                    session.flt.model_copy(update={"after": session.item_no or 0}), page_size=1,
                                    as_lead=me.is_lead).rows
        return self._show(me, session, following[0].item_no if following else session.item_no)

    def do_save(self, score: str | None, tags: list[str] | None, note: str, session: TeamSession,
                request: gr.Request) -> list[Any]:
        me = self.member(request)
        message = act.save_score(self.team, me, session, score, tags, note)
        return self._show(me, session, session.item_no, message)      # same item: now with the judge's verdict

    def do_unsure(self, note: str, session: TeamSession, request: gr.Request) -> list[Any]:
        me = self.member(request)
        message = act.mark_unsure(self.team, me, session, note)
        return self._show(me, session, session.item_no, message)

    def do_metric_open(self, metric: str | None, session: TeamSession, request: gr.Request) -> Any:
        if not metric:
            return gr.update(choices=[], value=[])
        choices, ticked = act.open_metric(self.team, self.member(request), session, metric)
        return gr.update(choices=choices, value=ticked)

    def do_metric_save(self, metric: str | None, ticked: list[str] | None, reason: str, session: TeamSession,
                       request: gr.Request) -> list[Any]:
        if not metric:
            raise act.TeamError(t("team_metric_none", session.lang), field="metric")
        return [act.save_metric(self.team, self.member(request), session, metric, ticked, reason), ""]

    # -- the lead's tasks -------------------------------------------------------------------------------------------
    def do_run_pick(self, run: str | None, request: gr.Request) -> Any:
        self.member(request)
        rubrics = [s["scorer"] for s in self.team.audit.rubric_scorers(run)] if run else []
        return gr.update(choices=rubrics, value=rubrics[:1])

    def do_create(self, run, rubrics, n, overlap, experts, sampling, blind, name, seed, session: TeamSession,
                  request: gr.Request) -> list[Any]:
        me = self.member(request)
        message = act.create_task(self.team, me, session.lang, run, rubrics, n, overlap, experts, sampling, blind,
                                  name, seed)
        choices = [(f"{i.name} · {i.n_items}", i.task_id) for i in self.team.tasks()]
        newest = choices[-1][1]
        return [message, act.tasks_frame(self.team, session.lang), gr.update(choices=choices, value=newest),
                gr.update(choices=choices), gr.update(choices=choices)]

    def do_progress(self, task: str, session: TeamSession, request: gr.Request) -> Any:
        return act.progress_frame(self.team, self.member(request), session.lang, task)

    def do_agreement(self, task: str, session: TeamSession, request: gr.Request) -> str:
        return act.agreement_text(self.team, self.member(request), session.lang, task)

    # -- adjudication -----------------------------------------------------------------------------------------------
    def do_adj_load(self, task: str, include_settled: bool, session: TeamSession, request: gr.Request) -> list[Any]:
        frame = act.adjudication_frame(self.team, self.member(request), session, task, bool(include_settled))
        return [session, frame, ""]

    def do_adj_open(self, number: float | None, session: TeamSession, request: gr.Request) -> list[Any]:
        return self._adjudication_view(number, session, request, "")

    def do_adj_select(self, session: TeamSession, evt: gr.SelectData, request: gr.Request) -> list[Any]:
        """A click on a row of the list opens that item (its first cell is the item number), as in the queue."""
        row = evt.row_value or []
        return self._adjudication_view(row[0] if row else None, session, request, "")

    def do_adj_refresh(self, include_settled: bool, session: TeamSession, request: gr.Request) -> Any:
        """The list again after a save, so its "final" column shows the new label; the open item stays open."""
        if session.adj_task is None:
            return gr.update()
        item, version = session.adj_item, session.adj_version
        frame = act.adjudication_frame(self.team, self.member(request), session, session.adj_task,
                                       bool(include_settled))
        session.adj_item, session.adj_version = item, version
        return frame

    def _adjudication_view(self, number: float | None, session: TeamSession, request: gr.Request, message: str
                           ) -> list[Any]:
        me = self.member(request)
        title, sample, opinions, judge = act.open_adjudication(self.team, me, session,
                                                               None if number is None else int(number))
        labels = [a for a in self.team.query("SELECT label, reason FROM team_adjudications WHERE task_id = :t AND "
                                             "item_no = :no ORDER BY adjudication_id",
                                             {"t": session.adj_task, "no": session.adj_item})]
        last = labels[-1] if labels else None
        return [session, f"### {title}", sample, opinions, judge,
                gr.update(value=str(last["label"]) if last else None), last["reason"] if last else "", message]

    def do_adj_save(self, label: str | None, reason: str, session: TeamSession, request: gr.Request) -> list[Any]:
        message = act.save_adjudication(self.team, self.member(request), session, label, reason)
        return self._adjudication_view(session.adj_item, session, request, message)


def wire_team(app: gr.Blocks, ui: TeamLayout, handlers: TeamHandlers) -> None:
    q, k, a = ui.queue, ui.tasks, ui.adjudication
    handlers.relabel = ui.relabel
    items = ui.item_outputs

    def guarded(fn: Callable[..., Any], outputs: list[Any], status: Any) -> Callable[..., Any]:
        return user_errors(fn, outputs, status)

    facets = [q.whose_dd, q.rubric_dd, q.tag_dd]
    load_outputs = [ui.signed_in, q.task_dd, *facets, k.tab, a.tab, k.run_dd, k.experts, k.progress_task,
                    a.task_dd, k.tasks_table, q.tab]
    app.load(user_errors(handlers.do_load), inputs=[ui.session], outputs=load_outputs, api_name="team_load")
    ui.lang_dd.input(handlers.do_language, inputs=[ui.lang_dd, ui.session], outputs=[ui.session, *ui.worded],
                     api_visibility="private")
    q.task_dd.change(user_errors(handlers.do_task_change), inputs=[q.task_dd], outputs=facets,
                     api_visibility="private")
    q.open_btn.click(guarded(handlers.do_open_queue, items, q.status),
                     inputs=[q.task_dd, q.whose_dd, q.state_dd, q.rubric_dd, q.tag_dd, ui.session], outputs=items,
                     api_name="team_open_queue")
    for button, offset in ((q.prev_page, -1), (q.next_page, +1)):
        button.click(guarded(handlers.do_page(offset), items, q.status), inputs=[ui.session], outputs=items,
                     api_visibility="private")
    q.open_item_btn.click(guarded(handlers.do_open_item, items, q.status), inputs=[q.item_number, ui.session],
                          outputs=items, api_name="team_open_item")
    q.table.select(guarded(handlers.do_select, items, q.status), inputs=[ui.session], outputs=items,
                   api_visibility="private")
    q.save_btn.click(guarded(handlers.do_save, items, q.status), inputs=[q.score, q.tags, q.note, ui.session],
                     outputs=items, api_name="team_save")
    q.next_btn.click(guarded(handlers.do_next, items, q.status), inputs=[ui.session], outputs=items,
                     api_name="team_next_item")
    q.unsure_btn.click(guarded(handlers.do_unsure, items, q.status), inputs=[q.note, ui.session], outputs=items,
                       api_name="team_unsure")
    q.metric_dd.change(user_errors(handlers.do_metric_open), inputs=[q.metric_dd, ui.session],
                       outputs=[q.metric_elements], api_name="team_metric_open")
    q.metric_save.click(guarded(handlers.do_metric_save, [q.status, q.metric_reason], q.status),
                        inputs=[q.metric_dd, q.metric_elements, q.metric_reason, ui.session],
                        outputs=[q.status, q.metric_reason], api_name="team_metric_save")
    k.run_dd.change(user_errors(handlers.do_run_pick), inputs=[k.run_dd], outputs=[k.rubrics],
                    api_visibility="private")
    k.create_btn.click(guarded(handlers.do_create, [k.status, k.tasks_table, k.progress_task, q.task_dd, a.task_dd],
                               k.status),
                       inputs=[k.run_dd, k.rubrics, k.n, k.overlap, k.experts, k.sampling, k.blind, k.name, k.seed,
                               ui.session],
                       outputs=[k.status, k.tasks_table, k.progress_task, q.task_dd, a.task_dd],
                       api_name="team_create_task")
    k.refresh_btn.click(user_errors(handlers.do_progress), inputs=[k.progress_task, ui.session],
                        outputs=[k.progress_table], api_name="team_progress")
    k.agreement_btn.click(user_errors(handlers.do_agreement), inputs=[k.progress_task, ui.session],
                          outputs=[k.agreement], api_name="team_agreement")
    adj_outputs = [ui.session, a.title, a.sample_view, a.opinions_view, a.judge_view, a.label, a.reason, a.status]
    a.load_btn.click(guarded(handlers.do_adj_load, [ui.session, a.table, a.status], a.status),
                     inputs=[a.task_dd, a.include_settled, ui.session], outputs=[ui.session, a.table, a.status],
                     api_name="team_adjudication_queue")
    a.open_btn.click(guarded(handlers.do_adj_open, adj_outputs, a.status), inputs=[a.item_number, ui.session],
                     outputs=adj_outputs, api_name="team_open_adjudication")
    a.table.select(guarded(handlers.do_adj_select, adj_outputs, a.status), inputs=[ui.session], outputs=adj_outputs,
                   api_visibility="private")
    a.save_btn.click(guarded(handlers.do_adj_save, adj_outputs, a.status), inputs=[a.label, a.reason, ui.session],
                     outputs=adj_outputs, api_name="team_adjudicate"
                     ).success(user_errors(handlers.do_adj_refresh), inputs=[a.include_settled, ui.session],
                               outputs=[a.table], api_visibility="private")

