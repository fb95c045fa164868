"""What the appeal and calibration tabs show: tables and HTML, every piece of user text escaped (answers, reasons and
feedback are hostile input)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from rubriceval.i18n import Lang, format_number, t
from rubriceval.store.appeal_models import AgentVerdict, Appeal, AppealEvent
from rubriceval.store.audit_models import iso_time
from rubriceval.store.calibration import CalibrationReport
from ui.common.item_view import esc
from ui.common.transcript_view import transcript_html


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def said_html(sample: Any, lang: Lang) -> str:
    """What was said: a conversation's turns as bubbles (chat logs, scorecards), else the question and the answer."""
    if sample.conversation is not None:
        return transcript_html(sample.conversation, None, lang, summary=False)
    return f"<p class='q'>{esc(sample.question)}</p><p class='a'>{esc(sample.answer)}</p>"


def verdict_key(v: AgentVerdict) -> str:
    return f"{v.sample_id}|{v.scorer}"


def my_verdicts_frame(rows: list[AgentVerdict], lang: Lang) -> pd.DataFrame:
    return pd.DataFrame([{
        "sample": v.sample_id, "rubric": v.scorer, t("appeal_ui_machine", lang): _score(v.machine_score),
        t("appeal_ui_official", lang): _score(v.official_score) + (" ✎" if v.human_decided else ""),
        t("appeal_ui_deduction", lang): ", ".join(v.deductions) or "—",
        t("appeal_ui_state", lang): ", ".join(f"{a.item or t('appeal_ui_whole', lang)}: {a.state}" for a in v.appeals)
        or "—"} for v in rows], dtype=object)


def verdict_html(v: AgentVerdict, sample: Any, lang: Lang) -> str:
    human = f" · {t('official_human_decided', lang)}" if v.human_decided else ""
    return (f"<div class='appeal-verdict'><p><b>{esc(v.sample_id)}</b> · {esc(v.scorer)}</p>"
            f"<p>{t('appeal_ui_machine', lang)} <b>{_score(v.machine_score)}</b> · {t('appeal_ui_official', lang)} "
            f"<b class='official-score'>{_score(v.official_score)}</b>{human}</p>"
            f"{said_html(sample, lang)}"
            f"<p class='feedback'>{esc(v.feedback)}</p></div>")


def inbox_frame(rows: list[Appeal], lang: Lang) -> pd.DataFrame:
    return pd.DataFrame([{
        "id": a.appeal_id, "sample": a.sample_id, "rubric": a.scorer,
        t("appeal_ui_deduction", lang): a.item or t("appeal_ui_whole", lang), "agent": a.agent,
        t("appeal_ui_state", lang): a.state, t("appeal_ui_machine", lang): _score(a.machine_score),
        "→": _score(a.proposed_score), "reviewer": a.reviewer or "—", "at": iso_time(a.created_at)}
        for a in rows], dtype=object)


def appeal_html(a: Appeal, events: list[AppealEvent], sample: Any, feedback: str, lang: Lang) -> str:
    proposed = (f"<p>{t('appeal_ui_proposed', lang, score=_score(a.proposed_score))}</p>"
                if a.proposed_score is not None else "")
    history = "".join(f"<li>{esc(iso_time(e.at))} · {esc(e.actor)} ({esc(e.role)}) {esc(e.action)}: "
                      f"{esc(e.from_state or '·')} → {esc(e.to_state)}"
                      f"{(' · ' + esc(e.reason)) if e.reason else ''}</li>" for e in events)
    return (f"<div class='appeal-view'><p><b>{esc(a.appeal_id)}</b> · {esc(a.sample_id)} · {esc(a.scorer)} · "
            f"{esc(a.item or t('appeal_ui_whole', lang))} · <b>{esc(a.state)}</b></p>"
            f"<p>{t('appeal_ui_machine', lang)} {_score(a.machine_score)} · {t('appeal_ui_official', lang)} "
            f"{_score(a.official_before)}</p>{proposed}"
            f"<p class='reason'>{esc(a.agent)}: {esc(a.reason)}</p>"
            f"{said_html(sample, lang)}"
            f"<p class='feedback'>{esc(feedback)}</p>"
            f"<p>{t('appeal_ui_history', lang)}</p><ul>{history}</ul></div>")


def calibration_items_frame(items: list[Any], mine: dict[int, int], lang: Lang) -> pd.DataFrame:
    return pd.DataFrame([{"#": i.item_no, "sample": i.sample_id, "rubric": i.scorer,
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

    out = [f"### {cell(t('cal_ui_report_title', lang, name=report.session.name))}", "",
           f"**{t('cal_ui_vs_benchmark', lang)}**", "", "| reviewer | n | exact | ±1 | κ |", "|---|---|---|---|---|"]
    for r in report.reviewers:
        a = r.agreement
        out.append(f"| {cell(r.reviewer)} | {r.n_graded} | {a.exact.format() if a else '—'} | "
                   f"{a.within_one.format() if a else '—'} | {a.kappa_quadratic.format() if a else '—'} |")
    out += ["", f"**{t('cal_ui_between', lang)}**: α {report.alpha.format()}", ""]
    out += [f"- {cell(p.a)} · {cell(p.b)}: κ {p.kappa.format()} (n={p.n})" for p in report.pairs]
    out += ["", f"**{t('cal_ui_per_item', lang)}**", "", "| # | sample | benchmark | grades | correct |",
            "|---|---|---|---|---|"]
    for i in report.items:
        grades = ", ".join(f"{cell(k)}={v}" for k, v in i.grades.items()) or "—"
        share = "—" if i.share_correct is None else f"{i.share_correct:.0%}"
        out.append(f"| {i.item_no} | {cell(i.sample_id)} | {i.benchmark} | {grades} | {share} |")
    if alignment:
        out += ["", f"**{t('cal_ui_alignment', lang)}**", "", "| session | reviewer | exact | κ |", "|---|---|---|---|"]
        out += [f"| {cell(r['session'])} | {cell(r['reviewer'])} | {format_number(r['exact'], 2, lang)} | "
                f"{format_number(r['kappa'], 2, lang)} |" for r in alignment]
    return "\n".join(out)
