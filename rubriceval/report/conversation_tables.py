"""Conversations as plain tables, for the Excel workbook (sheets `conversations`, `where_rules_fail`) and the
Markdown summary: headers in the report's language, one row per conversation, and failures by turn position."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rubriceval.i18n import Lang, t
from rubriceval.prompt.transcript import render_transcript
from rubriceval.report.conversation_stream import ConversationSections, top_failing
from rubriceval.report.conversations import POSITION_BUCKETS, ConversationReport, rubric_names
from rubriceval.report.run_data import RunData

SHEETS = ("conversations", "where_rules_fail")
MARKDOWN_ROWS = 10                 # conversations listed in the Markdown summary (the workbook has them all)


def run_conversations(data: RunData) -> ConversationSections:
    return data.conversation_sections


def _score(cell: Any) -> Any:
    if cell is None:
        return None
    return cell.score if cell.score is not None else f"unscored: {cell.unscored_kind}"


def conversation_rows(data: RunData, report: ConversationSections, lang: Lang, *,
                      transcript: bool = True) -> tuple[list[str], Iterator[list[Any]]]:
    """Conversation id, turns, each rubric's score and first failing turn, the first failing turn over all rubrics,
    the failing checks and (for the workbook) the numbered transcript. The rows are yielded as they are read."""
    names = rubric_names(data.scorers)
    headers = [t("cv_conversation_id", lang), t("cv_turns", lang)]
    for rubric in report.rubrics:
        headers += [names.get(rubric, rubric), f"{names.get(rubric, rubric)} · {t('cv_first_failing_turn', lang)}"]
    headers += [t("cv_first_failing_turn", lang), t("scorer", lang), t("cv_failing_checks", lang)]
    headers += [t("cv_transcript", lang)] if transcript else []
    return headers, _lines(report, names, lang, transcript)


def _lines(report: ConversationSections, names: dict[str, str], lang: Lang, transcript: bool
           ) -> Iterator[list[Any]]:
    for row, sample in report.rows_with_samples():
        line: list[Any] = [row.conversation_id, row.n_turns]
        for rubric in report.rubrics:
            cell = row.rubrics.get(rubric)
            line += [_score(cell), cell.first_failing_turn if cell else None]
        line += [row.first_failing_turn, names.get(row.first_failing_rubric or "", row.first_failing_rubric or ""),
                 ", ".join(row.failing_checks)]
        if transcript:
            conversation = sample.conversation
            line.append(render_transcript(conversation, lang) if conversation is not None else "")
        yield line


def position_rows(data: RunData, report: ConversationReport | ConversationSections, lang: Lang
                  ) -> tuple[list[str], list[list[Any]]]:
    """Per rubric: failing turns per relative-position bucket, the total, the conversations concerned, and the
    counts per absolute turn number."""
    names = rubric_names(data.scorers)
    headers = [t("scorer", lang), *POSITION_BUCKETS, t("cv_failures", lang), t("cv_conversations_failing", lang),
               t("cv_by_turn", lang)]
    rows = [[names.get(p.scorer, p.scorer), *p.by_bucket, sum(p.by_bucket), p.n_conversations_failing,
             ", ".join(f"{turn}: {n}" for turn, n in sorted(p.by_turn.items()))] for p in report.positions]
    return headers, rows


def _cell_text(cell: Any, lang: Lang) -> str:
    if cell is None:
        return "–"
    if cell.score is None:
        return t("cv_unscored", lang)
    return f"{cell.score:g}" + (f" @{cell.first_failing_turn}" if cell.first_failing_turn else "")


def markdown_lines(data: RunData, lang: Lang, limit: int = MARKDOWN_ROWS) -> list[str]:
    """The Markdown summary's conversation part: failures by turn position per rubric, then the conversations
    that fail somewhere (first failing turn first), at most `limit` of them; [] for a run without conversations."""
    from rubriceval.common.tables import markdown_table

    report = run_conversations(data)
    if report.empty:
        return []
    names = rubric_names(data.scorers)
    headers, rows = position_rows(data, report, lang)
    out = [f"**{t('cv_section', lang)}** — {t('cv_where_fail', lang)}", "",
           markdown_table(headers, [[str(c) for c in row] for row in rows]), ""]
    failing, n_failing = top_failing(report.rows, limit)
    if not failing:
        return out + [t("cv_none_failed", lang), ""]
    headers = [t("cv_conversation_id", lang), t("cv_turns", lang), *(names.get(r, r) for r in report.rubrics),
               t("cv_first_failing_turn", lang), t("cv_failing_checks", lang)]
    table = [[r.conversation_id, str(r.n_turns), *(_cell_text(r.rubrics.get(rubric), lang) for rubric in report.rubrics),
              str(r.first_failing_turn or "–"), ", ".join(r.failing_checks)] for r in failing]
    out += [markdown_table(headers, table), ""]
    if n_failing > limit:
        out += [f"_{t('cv_more_rows', lang, n=n_failing - limit)}_", ""]
    return out
