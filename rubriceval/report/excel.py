"""An Excel workbook of a run for people who filter and sort: summary, per-sample verdicts, breakdown, diagnosis.

Every sheet has a bold frozen header row, an autofilter and column widths fitted to the content. User text is written
as text, never as a formula (an answer starting with '=' stays a string), with characters Excel rejects removed.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from rubriceval.report.aggregate import RunData, load_run
from rubriceval.report.conversation_tables import SHEETS as CONVERSATION_SHEETS
from rubriceval.report.conversation_tables import conversation_rows, position_rows, run_conversations
from rubriceval.report.diagnosis import DiagnosisConfig, Finding, diagnose
from rubriceval.i18n import Lang, check_lang, detect_language, evidence_text, t
from rubriceval.safety.spreadsheet import escape_cell

EXCEL_CELL_LIMIT = 32767
EXCEL_MAX_ROWS = 1_048_576        # rows an Excel worksheet holds, its header row included
MAX_COLUMN_WIDTH = 60
WRAPPED_COLUMN_WIDTH = 50
HEADER_FILL = PatternFill("solid", fgColor="DDE4EE")
SHEET_NAMES = ("summary", "samples", "breakdown", "diagnosis")   # stable names, for scripts reading the workbook


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        value = escape_cell(ILLEGAL_CHARACTERS_RE.sub("", value))   # formula-like text gets OWASP's apostrophe
        if len(value) > EXCEL_CELL_LIMIT:
            value = value[:EXCEL_CELL_LIMIT - 1] + "…"
    return value


def _write_sheet(ws: Worksheet, headers: Sequence[str], rows: Sequence[Sequence[Any]],
                 wrapped: Sequence[int] = ()) -> None:
    ws.append(list(headers))
    for row in rows:
        ws.append([_clean(v) for v in row])
    for cell in ws[1]:
        cell.font = Font(bold=True)
        cell.fill = HEADER_FILL
    # Text that looks like a formula must stay text: openpyxl would otherwise store "=…" as a formula.
    for row in ws.iter_rows(min_row=2):
        for cell in row:
            if isinstance(cell.value, str) and cell.value.startswith("="):
                cell.data_type = "s"
    ws.freeze_panes = "A2"
    if rows:
        ws.auto_filter.ref = f"A1:{get_column_letter(len(headers))}{len(rows) + 1}"
    for index, header in enumerate(headers, start=1):
        letter = get_column_letter(index)
        if index - 1 in wrapped:
            ws.column_dimensions[letter].width = WRAPPED_COLUMN_WIDTH
            for cell in ws[letter][1:]:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
            continue
        longest = max([_width(header)] + [_width(c.value) for c in ws[letter][1:]])
        ws.column_dimensions[letter].width = min(MAX_COLUMN_WIDTH, max(8, longest + 2))


def _width(value: Any) -> int:
    text = "" if value is None else str(value)
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in text.split("\n")[0])


def _summary_rows(data: RunData, lang: Lang) -> tuple[list[str], list[list[Any]]]:
    headers = [t("scorer", lang), "id", t("kind", lang), t("mean", lang), t("median", lang), t("std", lang),
               t("pass_rate", lang), t("threshold", lang), t("weight", lang), t("n_scored", lang),
               t("n_unscored", lang), t("unscored_kind", lang)] + [f"{t('count', lang)} {level}" for level in
                                                                   range(1, 6)] + \
              [t("calls", lang), t("prompt_tokens", lang), t("completion_tokens", lang), t("cost_usd", lang),
               t("notes", lang)]
    summary = data.summary
    rows: list[list[Any]] = [[t("business_score", lang), "business_score", "overall", summary.business_score]
                             + [None] * (len(headers) - 5) + [summary.business_score_note or ""]]
    for s in summary.scorers:
        distribution = [(s.distribution or {}).get(level) if s.distribution is not None else None
                        for level in range(1, 6)]
        rows.append([s.name, s.scorer, t(f"kind_{s.kind}", lang), s.mean, s.median, s.std, s.pass_rate, s.threshold,
                     s.weight, s.n_scored, s.n_unscored, ", ".join(f"{g.kind}: {g.count}" for g in s.unscored)]
                    + distribution + [s.usage.calls, s.usage.prompt_tokens, s.usage.completion_tokens,
                                      round(s.usage.cost_usd, 6), "; ".join(s.notes)])
    return headers, rows


def _sample_rows(data: RunData, lang: Lang) -> tuple[list[str], list[list[Any]], list[int]]:
    headers = [t("sample_id", lang), t("scorer", lang), t("kind", lang), t("score", lang), t("passed", lang),
               t("unscored_kind", lang), t("unscored_reason", lang), t("feedback", lang), t("evidence", lang),
               t("question", lang), t("answer", lang), t("ground_truth", lang), t("dimension_tag", lang),
               t("dimension_intent", lang), t("calls", lang), "tokens", t("cost_usd", lang)]
    names = {s.scorer: s.name for s in data.summary.scorers}
    samples = data.samples_by_id
    rows = []
    for v in data.verdicts:
        s = samples.get(v.sample_id)
        evidence = "\n".join(
            f"{'✓' if e.passed else '✗' if e.passed is False else '·'} {e.item}: {evidence_text(e, lang)}"
            + (f" 「{e.span}」" if e.span else "") for e in v.evidence)
        rows.append([v.sample_id, names.get(v.scorer, v.scorer), t(f"kind_{v.kind}", lang), v.score,
                     None if v.passed is None else t("passed" if v.passed else "failed", lang),
                     v.unscored_kind or "", v.unscored_reason or "", v.feedback, evidence,
                     s.question if s else "", s.answer if s else "", s.ground_truth if s else "",
                     ", ".join(s.tags) if s else "", s.intent if s else "", v.usage.calls,
                     v.usage.prompt_tokens + v.usage.completion_tokens, round(v.usage.cost_usd, 6)])
    wrapped = [6, 7, 8, 9, 10, 11]   # reasons, feedback, evidence, question, answer, ground truth
    return headers, rows, wrapped


def _breakdown_rows(data: RunData, lang: Lang) -> tuple[list[str], list[list[Any]]]:
    headers = [t("kind", lang), t("dimension_tag", lang) + " / " + t("dimension_intent", lang), t("scorer", lang),
               t("samples", lang), t("n_scored", lang), t("n_unscored", lang), t("mean", lang), t("pass_rate", lang)]
    names = {s.scorer: s.name for s in data.summary.scorers}
    rows = [[t(f"dimension_{g.dimension}", lang), g.value, names.get(g.scorer, g.scorer), g.n_samples, g.n_scored,
             g.n_unscored, g.mean, g.pass_rate] for g in data.summary.breakdown]
    return headers, rows


def _diagnosis_rows(findings: Sequence[Finding], lang: Lang) -> tuple[list[str], list[list[Any]], list[int]]:
    headers = [t("stage", lang), t("scorer", lang),
               t("diagnosis", lang), t("actions", lang), t("driving_samples", lang)]
    rows = []
    for f in findings:
        title, explain, actions = f.text(lang)
        rows.append([t(f"stage_{f.stage}", lang), f.scorer_name, f"{title}\n{explain}", "\n".join(actions),
                     ", ".join(d.sample_id for d in f.samples)])
    return headers, rows, [2, 3]


def _write_split_sheet(wb: Workbook, name: str, headers: Sequence[str], rows: Sequence[Sequence[Any]],
                       wrapped: Sequence[int], max_rows: int) -> list[str]:
    """Rows beyond Excel's sheet limit continue on name_2, name_3, … (Excel would refuse to open the file, or drop
    them silently); returns the sheet names used."""
    per_sheet = max_rows - 1
    names: list[str] = []
    for start in range(0, max(len(rows), 1), per_sheet):
        names.append(name if not names else f"{name}_{len(names) + 1}")
        _write_sheet(wb.create_sheet(names[-1]), headers, rows[start:start + per_sheet], wrapped)
    return names


def write_workbook(data: RunData, path: str | Path, *, lang: Lang | None = None,
                   findings: Sequence[Finding] = (), max_rows: int = EXCEL_MAX_ROWS) -> Path:
    lang = lang or detect_language(data.samples)
    wb = Workbook()
    ws = wb.active
    ws.title = SHEET_NAMES[0]
    _write_sheet(ws, *_summary_rows(data, lang))
    headers, rows, wrapped = _sample_rows(data, lang)
    sample_sheets = _write_split_sheet(wb, SHEET_NAMES[1], headers, rows, wrapped, max_rows)
    if len(sample_sheets) > 1:        # said in the workbook (under the summary) and on the console
        note = t("samples_sheet_split", lang, rows=f"{len(rows):,}", limit=f"{max_rows:,}",
                 sheets=", ".join(sample_sheets))
        ws.append([_clean(note)])
        print(f"note: {note}", file=sys.stderr)
    _write_sheet(wb.create_sheet(SHEET_NAMES[2]), *_breakdown_rows(data, lang))
    headers, rows, wrapped = _diagnosis_rows(findings, lang)
    _write_sheet(wb.create_sheet(SHEET_NAMES[3]), headers, rows, wrapped)
    conversations = run_conversations(data)
    if not conversations.empty:                   # runs with conversations: two more sheets
        headers, rows = conversation_rows(data, conversations, lang)
        _write_sheet(wb.create_sheet(CONVERSATION_SHEETS[0]), headers, rows, [len(headers) - 1])
        _write_sheet(wb.create_sheet(CONVERSATION_SHEETS[1]), *position_rows(data, conversations, lang))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    wb.save(out)
    return out


def write_excel_report(store: Any, run: str, path: str | Path, lang: str | None = None, *,
                       metric_thresholds: Mapping[str, float] | None = None,
                       diagnosis: DiagnosisConfig | None = None) -> Path:
    """Write the workbook of a stored run: sheets summary, samples (one row per sample × scorer), breakdown,
    diagnosis; and for conversations, conversations (one row per conversation) and where_rules_fail."""
    data = load_run(store, run, metric_thresholds)
    findings = diagnose(data.summary, data.verdicts, data.scorers, data.samples, diagnosis)
    return write_workbook(data, path, lang=check_lang(lang), findings=findings)
