"""Segment tables (rubriceval/segments/table.py) as the report shows them: Markdown, the rows of an Excel sheet per
grouping, the HTML section. Here in the report layer: segments/ computes the tables and knows nothing of reports."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rubriceval.common.tables import markdown_table
from rubriceval.i18n import Lang, format_number, format_percent, t
from rubriceval.segments.table import SegmentTable

MAX_SHEET_NAME = 31          # Excel's limit on a sheet name


def _decided(table: SegmentTable) -> bool:
    """Whether any row of the table holds human decisions: then a column says how many, and the judge's mean."""
    return any(r.n_human for r in table.rows)


def _awaiting(table: SegmentTable) -> bool:
    """Whether any scorecard total of the table awaits review (issues 39, 44): then a column counts them apart
    (in no mean, not unscored); a table where none waits keeps its columns."""
    return any(r.n_awaiting for r in table.rows)


def headers(table: SegmentTable, lang: Lang) -> list[str]:
    head = [*table.fields, t("scorer", lang), t("samples", lang), t("n_scored", lang), t("n_unscored", lang),
            t("mean", lang), t("pass_rate", lang), t("scorecard_total", lang), t("fatal_rate", lang)]
    if _awaiting(table):
        head.append(t("wk_awaiting", lang))
    if _decided(table):
        head += [t("official_human_decided", lang), t("official_machine_mean", lang)]
    return head


def sheet_rows(table: SegmentTable, names: Mapping[str, str]) -> list[list[Any]]:
    """One row per segment × scorer, numbers as numbers (None where undefined)."""
    decided, waiting = _decided(table), _awaiting(table)
    return [[*r.values.values(), names.get(r.scorer, r.scorer), r.n_samples, r.n_scored, r.n_unscored, r.mean,
             r.pass_rate, r.scorecard_total, r.fatal_rate] + ([r.n_awaiting] if waiting else [])
            + ([r.n_human, r.machine_mean] if decided else []) for r in table.rows]


def sheet_name(table: SegmentTable, taken: set[str]) -> str:
    """'by_agent_id', shortened to Excel's 31 characters and made unique; characters Excel refuses replaced."""
    base = "by_" + "".join("_" if ch in '[]:*?/\\' else ch for ch in table.grouping)
    name = base[:MAX_SHEET_NAME]
    n = 2
    while name in taken:
        suffix = f"_{n}"
        name = base[:MAX_SHEET_NAME - len(suffix)] + suffix
        n += 1
    taken.add(name)
    return name


def text_rows(table: SegmentTable, names: Mapping[str, str], lang: Lang) -> list[list[str]]:
    decided, waiting = _decided(table), _awaiting(table)
    return [[*r.values.values(), names.get(r.scorer, r.scorer), str(r.n_samples), str(r.n_scored),
             str(r.n_unscored), format_number(r.mean, 2, lang), format_percent(r.pass_rate, lang),
             format_number(r.scorecard_total, 1, lang), format_percent(r.fatal_rate, lang)]
            + ([str(r.n_awaiting)] if waiting else [])
            + ([str(r.n_human), format_number(r.machine_mean, 2, lang) if r.n_human else ""] if decided else [])
            for r in table.rows]


def markdown_section(tables: Sequence[SegmentTable], names: Mapping[str, str], lang: Lang) -> str:
    parts = []
    for table in tables:
        parts.append(f"## {t('segments_title', lang, grouping=table.grouping)}\n\n"
                     + markdown_table(headers(table, lang), text_rows(table, names, lang)))
    if parts:
        parts.append(t("segments_note", lang))
    return "\n\n".join(parts)


def html_context(tables: Sequence[SegmentTable], names: Mapping[str, str], lang: Lang) -> dict[str, Any]:
    """The values of the report's segment section (templates/sections/segments.html.j2, autoescaped: segment values
    are user text)."""
    return {"tables": [{"title": t("segments_title", lang, grouping=table.grouping), "headers": headers(table, lang),
                        "rows": text_rows(table, names, lang), "n_keys": len(table.fields)} for table in tables],
            "segments_note": t("segments_note", lang)}
