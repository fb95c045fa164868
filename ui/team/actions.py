"""What the team app does, Gradio-free: each action takes the store, the logged-in member and the session, checks
the member's role, and returns plain values (the app wires them to components; tests can call them directly).

Permissions are decided here, on the server, for every call: a lead (or admin) creates tasks, adjudicates and may
open anyone's queue; an expert opens only their own share and saves only as themselves.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import pandas as pd
from pydantic import BaseModel, Field

from rubriceval.audit.sessions import Member
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import adjudicate, adjudication_queue, item_version, opinions
from rubriceval.audit.team_metrics import AUDITABLE_METRICS, metric_elements, save_metric_review
from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Lang, t
from rubriceval.store.team_models import Opinion, QueueFilter, QueuePage, TaskSpec, TeamError, TeamSaveResult
from rubriceval.ui.team.views import item_sample_html, judge_panel_html, opinions_html, rubric_html

PAGE_SIZE = 25
ANY = ""


class TeamSession(BaseModel):
    """Per browser tab, kept on the server (gr.State): what is open and at which version."""

    lang: Lang = "en"
    task_id: str | None = None
    whose: str = ""
    flt: QueueFilter = Field(default_factory=QueueFilter)
    page: int = 0
    total: int = 0
    item_no: int | None = None
    version: int = 0
    adj_task: str | None = None
    adj_item: int | None = None
    adj_version: int = 0


class ItemView(BaseModel):
    title: str = ""
    sample_html: str = ""
    rubric_html: str = ""
    judge_html: str = ""
    score: str | None = None
    tag_choices: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    note: str = ""
    metrics: list[str] = Field(default_factory=list)      # auditable metric verdicts, once the judge may be seen


def require_lead(member: Member, lang: Lang) -> None:
    if not member.is_lead:
        raise TeamError(t("team_lead_only", lang), field="role")


def open_queue(team: TeamStore, member: Member, session: TeamSession, task: str, whose: str | None,
               state: str | None, scorer: str | None, tag: str | None) -> QueuePage:
    whose = (whose or member.name).strip()
    if member.role == "agent":     # an agent sees only their own verdicts, on the appeals tab
        raise TeamError(t("team_no_queue_for_agents", session.lang), field="role")
    if whose != member.name and not member.is_lead:
        raise TeamError(t("team_not_yours", session.lang), field="expert")
    info = team.task(task)
    session.task_id, session.whose, session.page, session.item_no = info.task_id, whose, 0, None
    session.flt = QueueFilter(state=state or None, scorer=scorer or None, tag=tag or None)
    return current_page(team, member, session)


def current_page(team: TeamStore, member: Member, session: TeamSession) -> QueuePage:
    if session.task_id is None:
        return QueuePage(rows=[], total=0, page=0, page_size=PAGE_SIZE)
    page = team.queue(session.task_id, session.whose, session.flt, page=session.page, page_size=PAGE_SIZE,
                      as_lead=member.is_lead)
    session.total = page.total
    return page


def queue_frame(page: QueuePage, lang: Lang) -> pd.DataFrame:
    columns = [t(k, lang) for k in ("team_col_item", "team_col_rubric", "team_col_sample", "team_col_state",
                                    "team_col_score", "team_col_judge")]
    rows = [[r.item_no, r.scorer, r.sample_id, t(f"team_state_{r.state}", lang), "" if r.score is None else r.score,
             (t("team_hidden", lang) if not r.judge_shown else "—" if r.judge_score is None else f"{r.judge_score:g}")]
            for r in page.rows]
    return pd.DataFrame(rows, columns=columns)


def page_text(page: QueuePage, lang: Lang, seconds: float) -> str:
    first = page.page * page.page_size + 1 if page.rows else 0
    return t("team_page", lang, first=first, last=page.page * page.page_size + len(page.rows), total=page.total,
             seconds=f"{seconds:.2f}")


def progress_text(team: TeamStore, session: TeamSession) -> str:
    if session.task_id is None:
        return ""
    mine = team.progress(session.task_id, session.whose)
    if not mine:
        return ""
    p = mine[0]
    return t("team_progress", session.lang, name=p.expert, done=p.done, total=p.assigned, scored=p.scored,
             unsure=p.unsure)


def open_item(team: TeamStore, member: Member, session: TeamSession, item_no: int | None) -> ItemView:
    if session.task_id is None or item_no is None:
        return ItemView(sample_html=f"<i>{t('team_no_item', session.lang)}</i>")
    lang = session.lang
    whose = session.whose if member.is_lead else member.name
    assignment = team.assignment(session.task_id, int(item_no), whose)
    shown = assignment.judge_shown or member.is_lead
    item = team.audit.item(assignment.run_id, assignment.sample_id, assignment.scorer)
    session.item_no, session.version = assignment.item_no, assignment.version
    info = team.task(session.task_id)
    metrics = [v.scorer for v in item.other_verdicts if v.scorer in AUDITABLE_METRICS] if shown else []
    return ItemView(
        title=t("team_item_title", lang, task=info.name, no=assignment.item_no, sample=assignment.sample_id,
                scorer=assignment.scorer) + f" · {t('team_blind_task' if info.blind else 'team_open_task', lang)}",
        sample_html=item_sample_html(item, lang, judge_shown=shown),
        rubric_html=rubric_html(item.rubric, assignment.scorer, lang),
        judge_html=judge_panel_html(item, lang, judge_shown=shown, viewer=member.name, lead=member.is_lead),
        score=None if assignment.score is None else str(assignment.score), tag_choices=assignment.failure_tags,
        tags=assignment.tags, note=assignment.note, metrics=metrics)


def saved_version(result: TeamSaveResult, lang: Lang) -> int:
    """The version after a save; a conflict (someone saved since this was opened) is said to the user, in the page's
    language (the store's message is the log's)."""
    if not result.ok:
        raise TeamError(t("team_saved_meanwhile", lang), field="version")
    return result.version


def _open_assignment_of(member: Member, session: TeamSession) -> tuple[str, int]:
    if session.task_id is None or session.item_no is None:
        raise TeamError(t("team_need_item", session.lang), field="item")
    return session.task_id, session.item_no


def save_score(team: TeamStore, member: Member, session: TeamSession, score: str | None, tags: list[str] | None,
               note: str) -> str:
    task_id, item_no = _open_assignment_of(member, session)
    if score in (None, ""):
        raise TeamError(t("team_need_score", session.lang), field="score")
    session.version = saved_version(team.save_review(task_id, item_no, member.name, score=int(score),
                                                     note=note or "", tags=tags or [],
                                                     expected_version=session.version), session.lang)
    return t("team_saved", session.lang, score=score)


def mark_unsure(team: TeamStore, member: Member, session: TeamSession, note: str) -> str:
    task_id, item_no = _open_assignment_of(member, session)
    if not (note or "").strip():
        raise TeamError(t("team_need_note", session.lang), field="note")
    session.version = saved_version(team.mark_unsure(task_id, item_no, member.name, note=note or "",
                                                     expected_version=session.version), session.lang)
    return t("team_saved_unsure", session.lang)


# -- metric verdicts -------------------------------------------------------------------------------------------------
def element_label(index: int, text: str) -> str:
    preview = " ".join(text.split())
    return f"#{index + 1} {preview[:90]}{'…' if len(preview) > 90 else ''}"


def open_metric(team: TeamStore, member: Member, session: TeamSession, metric: str) -> tuple[list[str], list[str]]:
    """(choices, ticked): the metric's statements/contexts, ticked as the member last said or else the judge."""
    task_id, item_no = _open_assignment_of(member, session)
    assignment = team.assignment(task_id, item_no, member.name)
    if not (assignment.judge_shown or member.is_lead):
        raise TeamError(t("team_judge_hidden", session.lang), field="metric")
    elements = metric_elements(team, assignment.run_id, assignment.sample_id, metric, member.name)
    labels = [element_label(e.index, e.text) for e in elements]
    ticked = [label for label, e in zip(labels, elements) if (e.judge if e.expert is None else e.expert)]
    return labels, ticked


def save_metric(team: TeamStore, member: Member, session: TeamSession, metric: str, ticked: list[str] | None,
                reason: str) -> str:
    labels, _ = open_metric(team, member, session, metric)
    chosen = set(ticked or [])
    assignment = team.assignment(session.task_id or "", session.item_no or 0, member.name)
    flipped = save_metric_review(team, assignment.run_id, assignment.sample_id, metric, expert=member.name,
                                 verdicts={i: label in chosen for i, label in enumerate(labels)}, reason=reason or "")
    return t("team_metric_saved", session.lang, metric=metric, n=flipped)


# -- the lead's views ------------------------------------------------------------------------------------------------
def create_task(team: TeamStore, member: Member, lang: Lang, run: str, rubrics: list[str], n: int, overlap: int,
                experts: list[str], sampling: str, blind: bool, name: str, seed: int) -> str:
    require_lead(member, lang)
    from pydantic import ValidationError

    try:
        spec = TaskSpec(run=run or "latest", rubrics=list(rubrics or []), n=int(n or 0), overlap=int(overlap or 0),
                        experts=list(experts or []), sampling=sampling or "stratified", blind=bool(blind),
                        name=name or "", seed=int(seed or 0))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise TeamError(first["msg"], field=".".join(str(p) for p in first["loc"])) from None
    info = team.create_task(spec, created_by=member.name)
    return t("team_created", lang, name=info.name, n=info.n_items)


def tasks_frame(team: TeamStore, lang: Lang) -> pd.DataFrame:
    columns = [t(k, lang) for k in ("team_col_task", "team_col_run", "team_col_items", "team_col_mode",
                                    "team_experts")]
    rows = [[i.name, team.audit.runs.run_info(i.run_id).name, i.n_items,
             f"{i.sampling} · k={i.overlap} · {t('team_blind_task' if i.blind else 'team_open_task', lang)}",
             ", ".join(i.experts)] for i in team.tasks()]
    return pd.DataFrame(rows, columns=columns)


def progress_frame(team: TeamStore, member: Member, lang: Lang, task: str) -> pd.DataFrame:
    require_lead(member, lang)
    columns = [t(k, lang) for k in ("team_col_expert", "team_col_assigned", "team_col_scored", "team_col_unsure",
                                    "team_col_left")]
    rows = [[p.expert, p.assigned, p.scored, p.unsure, p.assigned - p.done] for p in team.progress(task)]
    return pd.DataFrame(rows, columns=columns)


def adjudication_frame(team: TeamStore, member: Member, session: TeamSession, task: str,
                       include_settled: bool) -> pd.DataFrame:
    require_lead(member, session.lang)
    lang = session.lang
    session.adj_task, session.adj_item = team.task(task).task_id, None
    columns = [t(k, lang) for k in ("team_col_item", "team_col_rubric", "team_col_sample", "team_col_route",
                                    "team_col_scores", "team_col_judge", "team_col_label")]
    rows = [[r.item_no, r.scorer, r.sample_id, t(f"team_route_{r.route}", lang), _opinions_text(r.opinions, lang),
             "—" if r.judge_score is None else f"{r.judge_score:g}", "" if r.label is None else r.label]
            for r in adjudication_queue(team, session.adj_task, include_settled=include_settled)]
    return pd.DataFrame(rows, columns=columns)


def _opinions_text(opinions: Sequence[Opinion], lang: Lang) -> str:
    """'李专家=2, 张专家=不确定': each assigned expert's score, or their state in the page's words."""
    return ", ".join(f"{o.expert}={o.score if o.state == 'scored' else t(f'team_state_{o.state}', lang)}"
                     for o in opinions)


def rubric_threshold(rubric: dict) -> float | None:
    threshold = rubric.get("threshold")
    return float(threshold) if isinstance(threshold, (int, float)) else None


def open_adjudication(team: TeamStore, member: Member, session: TeamSession, item_no: int | None
                      ) -> tuple[str, str, str, str]:
    """(title, sample, opinions side by side, judge) of one item for the lead."""
    require_lead(member, session.lang)
    if session.adj_task is None or item_no is None:
        raise TeamError(t("team_need_item", session.lang), field="item")
    lang, task = session.lang, team.task(session.adj_task)
    row = team.query("SELECT sample_id, scorer FROM team_task_items WHERE task_id = :t AND item_no = :no",
                     {"t": task.task_id, "no": int(item_no)})
    if not row:
        raise TeamError(f"task '{task.name}' has no item {item_no}", field="item")
    item = team.audit.item(task.run_id, row[0]["sample_id"], row[0]["scorer"])
    session.adj_item, session.adj_version = int(item_no), item_version(team, task.task_id, int(item_no))
    title = t("team_item_title", lang, task=task.name, no=item_no, sample=row[0]["sample_id"],
              scorer=row[0]["scorer"])
    return (title, item_sample_html(item, lang, judge_shown=True),
            opinions_html(opinions(team, task.task_id, int(item_no)), lang, threshold=rubric_threshold(item.rubric),
                          judge=item.verdict),
            judge_panel_html(item, lang, judge_shown=True, viewer=member.name, lead=True))


def save_adjudication(team: TeamStore, member: Member, session: TeamSession, label: str | None, reason: str) -> str:
    require_lead(member, session.lang)
    if session.adj_task is None or session.adj_item is None:
        raise TeamError(t("team_need_item", session.lang), field="item")
    if label in (None, ""):
        raise TeamError(t("team_need_score", session.lang), field="label")
    if not (reason or "").strip():
        raise TeamError(t("team_need_reason", session.lang), field="reason")
    session.adj_version = saved_version(adjudicate(team, session.adj_task, session.adj_item, member.name,
                                                   label=int(label), reason=reason or "",
                                                   expected_version=session.adj_version), session.lang)
    return t("team_adj_saved", session.lang, label=label)


def agreement_text(team: TeamStore, member: Member, lang: Lang, task: str) -> str:
    """Judge–expert agreement for each rubric of the task's run (blind/open and adjudicated counts included), and
    each metric's agreement with the experts' corrections."""
    require_lead(member, lang)
    from rubriceval.audit.metric_agreement import metric_agreement
    from rubriceval.trust.human_scores import agreement_for_rubric

    info, started = team.task(task), time.perf_counter()
    lines = []
    for rubric in info.rubrics:
        try:
            lines.append("- " + agreement_for_rubric(team.path, rubric, run=info.run_id, save=False,
                                                     n_boot=200).summary())
        except RubricEvalError as exc:
            lines.append(f"- {rubric}: {exc}")
    for metric in AUDITABLE_METRICS:
        if team.query("SELECT 1 FROM team_metric_corrections WHERE run_id = :r AND metric = :m LIMIT 1",
                      {"r": info.run_id, "m": metric}):
            lines.append("- " + metric_agreement(team, info.run_id, metric, n_boot=200).summary())
    return "\n".join(lines) + f"\n\n_{time.perf_counter() - started:.1f} s_"
