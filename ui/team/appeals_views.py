"""What the appeal and calibration tabs show: tables and HTML, every piece of user text escaped (answers, reasons and
feedback are hostile input)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from rubriceval.audit.calibration import CalibrationReport
from rubriceval.i18n import MESSAGES, Lang, format_number, t
from rubriceval.store.appeal_models import APPEAL_STATES, AgentVerdict, Appeal, AppealEvent
from rubriceval.store.audit_models import iso_time
from rubriceval.ui.common.item_view import esc
from rubriceval.ui.common.transcript_view import transcript_html


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def state_text(state: str, lang: Lang) -> str:
    """An appeal's state (stored in English) as the page says it."""
    return t(f"appeal_state_{state}", lang)


def state_choices(lang: Lang) -> list[tuple[str, str]]:
    """The inbox's state filter: labels in `lang`, values the stored states ('' = any)."""
    return [("—", ""), *[(state_text(s, lang), s) for s in APPEAL_STATES]]


def said_html(sample: Any, lang: Lang) -> str:
    """What was said: a conversation's turns as bubbles (chat logs, scorecards), else the question and the answer."""
    if sample.conversation is not None:
        return transcript_html(sample.conversation, None, lang, summary=False)
    return f"<p class='q'>{esc(sample.question)}</p><p class='a'>{esc(sample.answer)}</p>"


def _role(role: str, lang: Lang) -> str:
    key = f"team_role_{role}"
    return t(key, lang) if key in MESSAGES else role


def _row(*cells: str | list[str]) -> str:
    """A Markdown table row of header cells (a list is spread)."""
    flat = [c for cell in cells for c in (cell if isinstance(cell, list) else [cell])]
    return "| " + " | ".join(flat) + " |"


def verdict_key(v: AgentVerdict) -> str:
    return f"{v.sample_id}|{v.scorer}"


def named(item_id: str, names: dict[str, str]) -> str:
    """An item as every list says it: the card's name, the id only as a hint (a rubric's check: its id)."""
    name = names.get(item_id)
    return f"{name} ({item_id})" if name and name != item_id else item_id


def scorer_label(scorer: str, name: str) -> str:
    return f"{name} ({scorer})" if name and name != scorer else scorer


def item_choices(v: AgentVerdict, lang: Lang) -> list[tuple[str, str]]:
    """What an agent may appeal on one verdict: the whole of it, or one item by its name."""
    return [(t("appeal_ui_whole", lang), ""), *[(named(d, v.item_names), d) for d in v.deductions]]


def my_verdicts_frame(rows: list[AgentVerdict], lang: Lang) -> pd.DataFrame:
    return pd.DataFrame([{
        t("ui_col_sample", lang): v.sample_id, t("ui_col_rubric", lang): scorer_label(v.scorer, v.scorer_name),
        t("appeal_ui_machine", lang): _score(v.machine_score),
        t("appeal_ui_official", lang): _score(v.official_score) + (" ✎" if v.human_decided else ""),
        t("appeal_ui_deduction", lang): ", ".join(named(d, v.item_names) for d in v.deductions) or "—",
        t("appeal_ui_state", lang): ", ".join(f"{named(a.item, v.item_names) if a.item else t('appeal_ui_whole', lang)}"
                                              f": {state_text(a.state, lang)}" for a in v.appeals) or "—"}
        for v in rows], dtype=object)


def verdict_html(v: AgentVerdict, sample: Any, lang: Lang) -> str:
    human = f" · {t('official_human_decided', lang)}" if v.human_decided else ""
    return (f"<div class='appeal-verdict'><p><b>{esc(v.sample_id)}</b> · {esc(scorer_label(v.scorer, v.scorer_name))}"
            f"</p>"
            f"<p>{t('appeal_ui_machine', lang)} <b>{_score(v.machine_score)}</b> · {t('appeal_ui_official', lang)} "
            f"<b class='official-score'>{_score(v.official_score)}</b>{human}</p>"
            f"<p class='appeal-deadline'>{deadline_text(v, lang)}</p>"
            f"{said_html(sample, lang)}"
            f"<p class='feedback'>{esc(v.feedback)}</p></div>")


def deadline_text(v: AgentVerdict, lang: Lang) -> str:
    """When appeals on this verdict close, how long is left, and whose deadline it is (the task name escaped)."""
    left = v.appeal_days_left
    said = ("—" if left is None else t("appeal_ui_deadline_passed", lang) if left < 0 else
            t("appeal_ui_days_left", lang, n=int(left)) if left >= 1 else t("appeal_ui_under_a_day", lang))
    whose = (t("appeal_ui_by_task", lang, task=esc(v.appeal_deadline_task)) if v.appeal_deadline_task
             else t("appeal_ui_by_run", lang))
    return t("appeal_ui_deadline", lang, at=esc(iso_time(v.appeal_closes_at)), left=said, whose=whose)


def inbox_frame(rows: list[Appeal], lang: Lang, names: dict[tuple[str, str], dict[str, str]] | None = None,
                official: dict[str, float | None] | None = None) -> pd.DataFrame:
    """The inbox: item names from the card (`names`: (run, scorecard) → item names), and each appeal's verdict's
    official score now (`official`: appeal id → score, the one rule)."""
    names, official = names or {}, official or {}
    return pd.DataFrame([{
        t("ui_col_id", lang): a.appeal_id, t("ui_col_sample", lang): a.sample_id, t("ui_col_rubric", lang): a.scorer,
        t("appeal_ui_deduction", lang): named(a.item, names.get((a.run_id, a.scorer), {})) if a.item
        else t("appeal_ui_whole", lang), t("ui_col_agent", lang): a.agent,
        t("appeal_ui_state", lang): state_text(a.state, lang), t("appeal_ui_machine", lang): _score(a.machine_score),
        "→": _score(a.proposed_score),
        t("appeal_ui_official", lang): _score(official.get(a.appeal_id, a.official_before)),
        t("ui_col_reviewer", lang): a.reviewer or "—", t("ui_col_at", lang): iso_time(a.created_at)} for a in rows],
        dtype=object)


def appeal_html(a: Appeal, events: list[AppealEvent], sample: Any, feedback: str, lang: Lang,
                official_now: float | None = None, names: dict[str, str] | None = None) -> str:
    """One appeal as a reviewer or lead sees it: the official score NOW (the one rule; `official_now`, else the score
    when it was made), the item by its card name."""
    proposed = (f"<p>{t('appeal_ui_proposed', lang, score=_score(a.proposed_score))}</p>"
                if a.proposed_score is not None else "")
    history = "".join(f"<li>{esc(iso_time(e.at))} · {esc(e.actor)} ({esc(_role(e.role, lang))}) "
                      f"{esc(t(f'appeal_action_{e.action}', lang))}: "
                      f"{esc(state_text(e.from_state, lang) if e.from_state else '·')} → "
                      f"{esc(state_text(e.to_state, lang))}"
                      f"{(' · ' + esc(e.reason)) if e.reason else ''}</li>" for e in events)
    item = named(a.item, names or {}) if a.item else t("appeal_ui_whole", lang)
    now = a.official_before if official_now is None else official_now
    before = (f" · {t('appeal_ui_official_before', lang, score=_score(a.official_before))}"
              if official_now is not None and official_now != a.official_before else "")
    return (f"<div class='appeal-view'><p><b>{esc(a.appeal_id)}</b> · {esc(a.sample_id)} · {esc(a.scorer)} · "
            f"{esc(item)} · <b>{esc(state_text(a.state, lang))}</b></p>"
            f"<p>{t('appeal_ui_machine', lang)} {_score(a.machine_score)} · {t('appeal_ui_official', lang)} "
            f"<b class='official-score'>{_score(now)}</b>{before}</p>{proposed}"
            f"<p class='reason'>{esc(a.agent)}: {esc(a.reason)}</p>"
            f"{said_html(sample, lang)}"
            f"<p class='feedback'>{esc(feedback)}</p>"
            f"<p>{t('appeal_ui_history', lang)}</p><ul>{history}</ul></div>")


def calibration_items_frame(items: list[Any], mine: dict[int, int], lang: Lang) -> pd.DataFrame:
    return pd.DataFrame([{t("ui_col_number", lang): i.item_no, t("ui_col_sample", lang): i.sample_id,
                          t("ui_col_rubric", lang): i.scorer,
                          t("cal_ui_grade", lang): mine.get(i.item_no, "—")} for i in items], dtype=object)


def calibration_item_html(sample: Any, rubric: dict[str, Any], lang: Lang) -> str:
    """Blind: the sample and the rubric's criterion and levels, nothing of the judge, the benchmark or the others."""
    described = sorted((rubric.get("score_descriptions") or {}).items())
    levels = "".join(f"<li>{esc(k)}: {esc(v)}</li>" for k, v in described)
    return (f"<div class='cal-item'>{said_html(sample, lang)}"
            f"<p class='criterion'>{esc(rubric.get('criterion', ''))}</p><ul>{levels}</ul></div>")


def calibration_markdown(report: CalibrationReport, lang: Lang, alignment: list[dict[str, Any]]) -> str:
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    def cols(*names: str) -> list[str]:
        return [t(f"cal_col_{name}", lang) for name in names]

    out = [f"### {cell(t('cal_ui_report_title', lang, name=report.session.name))}", "",
           f"**{t('cal_ui_vs_benchmark', lang)}**", "", _row(cols("reviewer", "n", "exact", "within_one"), "κ"),
           "|---|---|---|---|---|"]
    for r in report.reviewers:
        a = r.agreement
        out.append(f"| {cell(r.reviewer)} | {r.n_graded} | {a.exact.format() if a else '—'} | "
                   f"{a.within_one.format() if a else '—'} | {a.kappa_quadratic.format() if a else '—'} |")
    out += ["", f"**{t('cal_ui_between', lang)}**: α {report.alpha.format()}", ""]
    out += [f"- {cell(p.a)} · {cell(p.b)}: κ {p.kappa.format()} (n={p.n})" for p in report.pairs]
    out += ["", f"**{t('cal_ui_per_item', lang)}**", "", _row("#", cols("sample", "benchmark", "grades", "correct")),
            "|---|---|---|---|---|"]
    for i in report.items:
        grades = ", ".join(f"{cell(k)}={v}" for k, v in i.grades.items()) or "—"
        share = "—" if i.share_correct is None else f"{i.share_correct:.0%}"
        out.append(f"| {i.item_no} | {cell(i.sample_id)} | {i.benchmark} | {grades} | {share} |")
    if alignment:
        out += ["", f"**{t('cal_ui_alignment', lang)}**", "", _row(cols("session", "reviewer", "exact"), "κ"),
                "|---|---|---|---|"]
        out += [f"| {cell(r['session'])} | {cell(r['reviewer'])} | {format_number(r['exact'], 2, lang)} | "
                f"{format_number(r['kappa'], 2, lang)} |" for r in alignment]
    return "\n".join(out)
