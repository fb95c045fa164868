"""A trend as text (console), an HTML page with one SVG line chart per rubric/metric, and an Excel sheet."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rubriceval.common.tables import text_table
from rubriceval.i18n import Lang, format_number, format_percent, t
from rubriceval.trend.series import PeriodFigure, Trend

MAX_LINES = 8                # segments drawn per chart (the table lists every one)


def _figure(row: PeriodFigure, statistic: str, lang: Lang) -> tuple[str, str]:
    if statistic == "mean":
        value, low, high = row.mean, row.mean_low, row.mean_high
        text = format_number(value, 2, lang)
        ci = f"[{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    else:
        value, low, high = row.pass_rate, row.pass_low, row.pass_high
        text = format_percent(value, lang)
        ci = f"[{low:.0%}, {high:.0%}]" if low is not None and high is not None else ""
    return text, ci


def _change(row: PeriodFigure, statistic: str, lang: Lang) -> tuple[str, str, str]:
    c = row.change
    if c is None or c.delta is None:
        return "", "", ""
    delta = f"{c.delta:+.2f}" if statistic == "mean" else f"{c.delta * 100:+.1f} pt"
    if c.p_value is None:
        return delta, "", c.note or ""
    return delta, f"{c.p_value:.3f}", t("team_yes" if c.beyond_noise() else "team_no", lang)


def _decided(trend: Trend) -> bool:
    """Whether any point holds human decisions: then a column says how many and the judge's mean."""
    return any(r.n_human for r in trend.rows)


def _awaiting(trend: Trend) -> bool:
    """Whether any scorecard total of the trend awaits review (issues 39, 44): then a column counts them apart."""
    return any(r.n_awaiting for r in trend.rows)


def headers(trend: Trend, lang: Lang) -> list[str]:
    keys = [] if trend.grouping == "all" else trend.grouping.split("+")
    return [t("scorer", lang), *keys, t("period", lang), t("samples", lang), t("n_unscored", lang),
            t(trend.statistic, lang), t("ci95", lang), t("change", lang), t("p_value", lang), t("beyond_noise", lang)
            ] + ([t("wk_awaiting", lang)] if _awaiting(trend) else []) + \
        ([t("official_human_decided", lang)] if _decided(trend) else [])


def human_cell(row: PeriodFigure, lang: Lang) -> str:
    """'3 human-decided; machine 3.90' for a point with human decisions, else ''."""
    if not row.n_human:
        return ""
    return t("official_scorer_note", lang, n=row.n_human, machine=format_number(row.machine_mean, 2, lang))


def rows(trend: Trend, lang: Lang) -> list[list[str]]:
    out = []
    decided, waiting = _decided(trend), _awaiting(trend)
    for row in trend.rows:
        value, ci = _figure(row, trend.statistic, lang)
        out.append([row.scorer, *row.segment.values(), row.period, str(row.n_samples), str(row.n_unscored), value, ci,
                    *_change(row, trend.statistic, lang)] + ([str(row.n_awaiting)] if waiting else [])
                   + ([human_cell(row, lang)] if decided else []))
    return out


def format_trend(trend: Trend, lang: Lang = "en") -> str:
    lines = [text_table(headers(trend, lang), rows(trend, lang)), "", t("trend_note", lang)]
    if trend.machine_only:
        lines.append(t("official_machine_only", lang))
    lines += [f"note: {n}" for n in trend.notes]
    return "\n".join(lines) + "\n"


def charts(trend: Trend, lang: Lang) -> list[dict[str, Any]]:
    from rubriceval.report.charts import line_chart

    out = []
    for scorer in trend.scorers:
        series = trend.series(scorer)
        values = [r.value(trend.statistic) for rs in series.values() for r in rs]
        top = max((v for v in values if v is not None), default=1)
        lo, hi = (0.0, 1.0) if trend.statistic == "pass_rate" or top <= 1 else (1.0, 5.0)
        lines = []
        for label, figures in list(series.items())[:MAX_LINES]:
            points = [(r.period, r.value(trend.statistic), *((r.mean_low, r.mean_high) if trend.statistic == "mean"
                                                             else (r.pass_low, r.pass_high))) for r in figures]
            lines.append((label, points))
        out.append({"title": t("trend_title", lang, scorer=scorer, statistic=t(trend.statistic, lang)),
                    "chart": line_chart(trend.periods, lines, lo, hi), "more": max(0, len(series) - MAX_LINES)})
    return out


def render_trend_html(trend: Trend, lang: Lang = "en") -> str:
    from rubriceval.report.html_env import template_env

    return template_env().get_template("trend.html.j2").render(
        lang=lang, t=lambda key, **kw: t(key, lang, **kw), charts=charts(trend, lang), headers=headers(trend, lang),
        rows=rows(trend, lang), notes=trend.notes, note=t("trend_note", lang))


def write_trend_workbook(trend: Trend, path: str | Path, lang: Lang = "en") -> Path:
    """One sheet 'trend': a row per period × segment × scorer, numbers as numbers."""
    from rubriceval.report.xlsx_stream import Book, write_sheet

    keys = [] if trend.grouping == "all" else trend.grouping.split("+")
    head = [t("scorer", lang), *keys, t("period", lang), t("samples", lang), t("n_scored", lang), t("n_unscored", lang),
            t("mean", lang), "mean_ci_low", "mean_ci_high", t("pass_rate", lang), "pass_ci_low", "pass_ci_high",
            t("change", lang), t("p_value", lang), "test", t("official_human_decided", lang),
            t("official_machine_mean", lang)]
    body = [[r.scorer, *r.segment.values(), r.period, r.n_samples, r.n_scored, r.n_unscored, r.mean, r.mean_low,
             r.mean_high, r.pass_rate, r.pass_low, r.pass_high, r.change.delta if r.change else None,
             r.change.p_value if r.change else None, r.change.test if r.change else None, r.n_human, r.machine_mean]
            for r in trend.rows]
    if _awaiting(trend):               # scorecard totals awaiting review, after the unscored count
        at = head.index(t("n_unscored", lang)) + 1
        head.insert(at, t("wk_awaiting", lang))
        for line, r in zip(body, trend.rows):
            line.insert(at, r.n_awaiting)
    book = Book(path)
    write_sheet(book.create_sheet("trend"), head, body)
    return book.close()
