"""The weekly QA report (report/weekly.py) as each output shows it: one table — agents, skill groups, everyone — in
the Markdown summary, the HTML page (templates/sections/weekly.html.j2, autoescaped: names are user text) and a
workbook sheet; headers in the report's language (Chinese for a Chinese card or data)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubriceval.common.tables import markdown_table
from rubriceval.i18n import Lang, format_number, format_percent, t
from rubriceval.report.auto_accept import weekly_line
from rubriceval.report.weekly import WeeklyReport, WeeklyRow

WEEKLY_SHEET = "weekly"


AWAITING_AT = 6                   # the awaiting-review column's place (after reviewed), when any row has one


def awaits(reports: Sequence[WeeklyReport]) -> bool:
    """Any conversation of these tables awaiting review (issues 39, 44): then the tables count them in a column of
    their own (the means are over decided totals only); a week where none waits keeps the table as it was."""
    return any(row.awaiting for report in reports for row in report.rows)


def headers(lang: Lang, awaiting: bool = False) -> list[str]:
    keys = ["wk_kind", "wk_key", "wk_name", "wk_conversations", "wk_previous_conversations", "wk_reviewed", "wk_mean",
            "wk_ci", "wk_previous_mean", "wk_change", "wk_p_value", "wk_beyond_noise", "wk_fatal", "wk_previous_fatal",
            "wk_top_deductions"]
    if awaiting:
        keys.insert(AWAITING_AT, "wk_awaiting")
    return [t(k, lang) for k in keys]


def deductions_text(row: WeeklyRow) -> str:
    return "；".join(f"{d.name} ×{d.count}" + (f" ({d.points:+d})" if d.points else "") for d in row.top_deductions)


def _noise(row: WeeklyRow, lang: Lang) -> str:
    if row.change is None:
        return ""
    return t("wk_untested", lang) if row.beyond_noise is None else t("wk_yes" if row.beyond_noise else "wk_no", lang)


def values(row: WeeklyRow, lang: Lang, awaiting: bool = False) -> list[Any]:
    """A row's cells as typed values (the workbook keeps numbers numbers)."""
    cells = [t(f"wk_kind_{row.kind}", lang), row.key, row.name, row.conversations, row.previous_conversations,
             row.reviewed_share, row.mean, None if row.mean_low is None else f"[{row.mean_low:.1f}, {row.mean_high:.1f}]",
             row.previous_mean, row.change, row.p_value, _noise(row, lang), row.fatal, row.previous_fatal,
             deductions_text(row)]
    if awaiting:
        cells.insert(AWAITING_AT, row.awaiting)
    return cells


def text_values(row: WeeklyRow, lang: Lang, awaiting: bool = False) -> list[str]:
    cells = values(row, lang)
    cells[5] = format_percent(row.reviewed_share, lang)
    cells[6] = format_number(row.mean, 1, lang)
    cells[7] = cells[7] or ""
    cells[8] = "" if row.previous_mean is None else format_number(row.previous_mean, 1, lang)
    cells[9] = "" if row.change is None else f"{row.change:+.1f}"
    cells[10] = "" if row.p_value is None else f"{row.p_value:.3f}"
    if awaiting:
        cells.insert(AWAITING_AT, row.awaiting)
    return [str(c) for c in cells]


def heading(report: WeeklyReport, lang: Lang) -> str:
    if report.previous is None:
        return t("wk_heading_first", lang, card=report.scorecard_name, period=report.period)
    return t("wk_heading", lang, card=report.scorecard_name, period=report.period, previous=report.previous)


def markdown(reports: Sequence[WeeklyReport], lang: Lang) -> list[str]:
    lines: list[str] = []
    waiting = awaits(reports)
    for report in reports:
        lines += [f"## {heading(report, lang)}", "",
                  markdown_table(headers(lang, waiting), [text_values(r, lang, waiting) for r in report.rows]), ""]
        if report.auto_accept:                     # issue 44: the card's automatic acceptance this run
            lines += [weekly_line(report.auto_accept, lang), ""]
    return lines + [t("wk_note", lang), ""] if lines else []


def html_values(reports: Sequence[WeeklyReport], lang: Lang) -> dict[str, Any]:
    waiting = awaits(reports)
    return {"weekly_tables": [{"title": heading(r, lang), "headers": headers(lang, waiting),
                               "rows": [text_values(row, lang, waiting) for row in r.rows],
                               "auto_accept": weekly_line(r.auto_accept, lang) if r.auto_accept else None}
                              for r in reports],
            "weekly_note": t("wk_note", lang)}


def sheet_rows(reports: Sequence[WeeklyReport], lang: Lang) -> tuple[list[str], list[list[Any]]]:
    """One sheet: a row per card × group (the card's name first when the run has several)."""
    several, waiting = len(reports) > 1, awaits(reports)
    head = ([t("sc_title", lang)] if several else []) + headers(lang, waiting)
    rows = [([r.scorecard_name] if several else []) + values(row, lang, waiting) for r in reports for row in r.rows]
    return head, rows
