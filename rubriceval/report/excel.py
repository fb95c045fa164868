"""An Excel workbook of a run for people who filter and sort: summary, per-sample verdicts, breakdown, diagnosis.

Every sheet has a bold frozen header row, an autofilter and column widths fitted to the content. User text is written
as text, never as a formula (an answer starting with '=' stays a string), with characters Excel rejects removed.
Sheets are written row by row (report/xlsx_stream.py) and the per-sample rows come from the store in chunks, so
the workbook of a million-row run is written in flat memory.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from rubriceval.core.verdict import Evidence, Usage
from rubriceval.i18n import Lang, evidence_text, resay, t
from rubriceval.i18n.run_report_text import NOTE_KEYS
from rubriceval.judge.pricing import SideBySide
from rubriceval.report.conversation_tables import SHEETS as CONVERSATION_SHEETS
from rubriceval.report.conversation_tables import conversation_rows, position_rows
from rubriceval.report.cost import run_cost
from rubriceval.report.diagnosis import DiagnosisConfig, Finding
from rubriceval.report.excel_book import EXCEL_MAX_ROWS, ExcelBook, split_names
from rubriceval.report.failure_tags import FAILURE_TAGS_SHEET, FailureTagReport, failure_tag_sheet
from rubriceval.report.inputs import ReportInputs, read_inputs
from rubriceval.report.run_data import RunData
from rubriceval.report.sections import present
from rubriceval.report.segment_views import headers as segment_headers
from rubriceval.report.segment_views import sheet_name as segment_sheet_name
from rubriceval.report.segment_views import sheet_rows as segment_rows
from rubriceval.report.summary_models import Summary

SHEET_NAMES = ("summary", "samples", "breakdown", "diagnosis")   # stable names, for scripts reading the workbook



def _summary_rows(data: RunData, lang: Lang) -> tuple[list[str], list[list[Any]]]:
    headers = [t("scorer", lang), "id", t("kind", lang), t("mean", lang), t("median", lang), t("std", lang),
               t("pass_rate", lang), t("threshold", lang), t("weight", lang), t("n_scored", lang),
               t("n_unscored", lang), t("unscored_kind", lang)] + [f"{t('count', lang)} {level}" for level in
                                                                   range(1, 6)] + \
              [t("calls", lang), t("prompt_tokens", lang), t("completion_tokens", lang), t("cost_usd", lang),
               t("cost_online_usd", lang), t("cost_batch_usd", lang), t("notes", lang)]
    summary = data.summary
    cost = run_cost(data.info, summary)

    def cost_cells(usage: Usage, priced: SideBySide | None) -> list[Any]:
        # the recorded cost, then the same tokens online and through the Batch API, each judge's at its own prices
        # (report/cost.py), when priced and available
        return [usage.calls, usage.prompt_tokens, usage.completion_tokens, round(usage.cost_usd, 6),
                round(priced.online_usd, 6) if priced else None, round(priced.batch_usd, 6) if priced else None]

    rows: list[list[Any]] = [[t("business_score", lang), "business_score", t("row_overall", lang),
                              summary.business_score] + [None] * (len(headers) - 5)
                             + [resay(summary.business_score_note or "", lang, NOTE_KEYS)]]
    for s in summary.scorers:
        distribution = [(s.distribution or {}).get(level) if s.distribution is not None else None
                        for level in range(1, 6)]
        rows.append([s.name, s.scorer, t(f"kind_{s.kind}", lang), s.mean, s.median, s.std, s.pass_rate, s.threshold,
                     s.weight, s.n_scored, s.n_unscored, ", ".join(f"{g.kind}: {g.count}" for g in s.unscored)]
                    + distribution + cost_cells(s.usage, cost.scorers.get(s.scorer) if cost else None)
                    + [resay("; ".join(s.notes), lang, NOTE_KEYS)])
    # the whole run's cost: one row, its cells in the cost columns
    note = "" if cost is None else t("cost_priced_note", lang) if cost.complete else \
        f"{t('cost_priced_note', lang)} {t('cost_not_available_note', lang)}"
    rows.append(["Σ", "total", None] + [None] * (len(headers) - 10)
                + cost_cells(summary.usage, cost.total if cost else None) + [note])
    if summary.n_human_decided:      # official scores: rows people decided, the judge's figures beside
        headers += [t("official_human_decided", lang), t("official_machine_mean", lang),
                    t("official_machine_pass_rate", lang)]
        rows[0] += [summary.n_human_decided, summary.machine_business_score, None]
        for row, s in zip(rows[1:-1], summary.scorers):
            row += [s.n_human, s.machine_mean, s.machine_pass_rate] if s.n_human else [0, None, None]
        rows[-1] += [None, None, None]
    if any(s.n_pending for s in summary.scorers):     # issue 44: pending review, in none of the figures beside
        headers.append(t("aa_pending", lang))
        rows[0].append(sum(s.n_pending for s in summary.scorers))
        for row, s in zip(rows[1:-1], summary.scorers):
            row.append(s.n_pending)
        rows[-1].append(None)
    return headers, rows


@lru_cache(maxsize=4096)
def _evidence_cell(evidence_json: str, lang: Lang) -> str:
    """A verdict's stored evidence as the samples sheet shows it: one line per item, said in `lang`."""
    return "\n".join(_evidence_line(e, lang) for e in json.loads(evidence_json))


_LINES: dict[tuple[Any, ...], str] = {}      # an evidence item's line without its span (rows differ by their spans)


def _evidence_line(item: dict[str, Any], lang: Lang) -> str:
    """One evidence item's line: its mark, id and text said in `lang` (validated and said once per distinct item,
    not per row), then the span it quotes."""
    key = (lang, item.get("item"), item.get("passed"), item.get("detail"), repr(item.get("message")))
    line = _LINES.get(key)
    if line is None:
        if len(_LINES) >= 4096:
            _LINES.clear()
        e = Evidence.model_validate({**item, "span": None})
        mark = "✓" if e.passed else "✗" if e.passed is False else "·"
        line = _LINES[key] = f"{mark} {e.item}: {evidence_text(e, lang)}"
    span = item.get("span")
    return line + (f" 「{span}」" if span else "")


@lru_cache(maxsize=1024)
def _usage_cells(usage_json: str) -> tuple[int, int, float]:
    """calls, tokens and cost of a verdict's stored usage."""
    usage = Usage.model_validate_json(usage_json)
    return usage.calls, usage.prompt_tokens + usage.completion_tokens, round(usage.cost_usd, 6)


def _sample_rows(data: RunData, lang: Lang) -> tuple[list[str], Iterator[list[Any]], list[int]]:
    headers = [t("sample_id", lang), t("scorer", lang), t("kind", lang), t("score", lang), t("passed", lang),
               t("unscored_kind", lang), t("unscored_reason", lang), t("feedback", lang), t("evidence", lang),
               t("question", lang), t("answer", lang), t("ground_truth", lang), t("dimension_tag", lang),
               t("dimension_intent", lang), t("calls", lang), "tokens", t("cost_usd", lang)]
    names = {s.scorer: s.name for s in data.summary.scorers}
    kinds = {kind: t(f"kind_{kind}", lang) for kind in ("rubric", "metric")}
    verdict_marks = {True: t("passed", lang), False: t("failed", lang)}

    def rows() -> Iterator[list[Any]]:
        # Every verdict's shown columns with its sample's shown fields, a chunk at a time; the evidence and usage
        # columns are read and said once per distinct value (many rows share them), not through a Verdict per row.
        for chunk in data.source.sheet_rows():
            for (sample_id, scorer, kind, score, passed, unscored_kind, unscored_reason, feedback, evidence_json,
                 usage_json, _), s in chunk:
                calls, tokens, cost = _usage_cells(usage_json)
                yield [sample_id, names.get(scorer, scorer), kinds.get(kind) or t(f"kind_{kind}", lang), score,
                       None if passed is None else verdict_marks[bool(passed)],
                       unscored_kind or ("error" if score is None else ""), unscored_reason or "", feedback,
                       _evidence_cell(evidence_json, lang), s.question, s.answer, s.ground_truth, ", ".join(s.tags),
                       s.intent, calls, tokens, cost] + ([scorer] if data.source.official else [])
    wrapped = [6, 7, 8, 9, 10, 11]   # reasons, feedback, evidence, question, answer, ground truth
    official = data.source.official
    if not official:
        return headers, rows(), wrapped
    # Official scores: the score column is the latest human decision where there is one, the judge's beside it.
    sources = {k: t(f"official_source_{k}", lang) for k in ("override", "adjudication", "appeal", "correction")}
    thresholds = {s.scorer: s.threshold for s in data.summary.scorers}

    def official_rows() -> Iterator[list[Any]]:
        for row in rows():
            decision = official.decision(row[0], row[-1])
            if decision is None:
                yield row[:-1] + [None, None]
            else:
                threshold = thresholds.get(row[-1])
                passed = None if threshold is None else verdict_marks[decision.score >= threshold]
                yield row[:3] + [decision.score, passed] + row[5:-1] + [row[3],
                                                                       f"{sources[decision.source]} · {decision.by}"]
    return headers + [t("official_machine_score", lang), t("official_decided_by", lang)], official_rows(), wrapped


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


def summary_sheet(summary: Summary, book: ExcelBook, inputs: ReportInputs) -> None:
    """The summary sheet; when the samples do not fit one sheet, a note under it says where they continue."""
    lang = book.lang
    sheet = book.sheet(SHEET_NAMES[0], *_summary_rows(inputs.data, lang))
    n_rows = summary.n_verdicts
    sample_sheets = split_names(SHEET_NAMES[1], n_rows, book.max_rows)
    if len(sample_sheets) > 1:        # said in the workbook (under the summary) and on the console
        note = t("samples_sheet_split", lang, rows=f"{n_rows:,}", limit=f"{book.max_rows:,}",
                 sheets=", ".join(sample_sheets))
        sheet.append([note])
        print(f"note: {note}", file=sys.stderr)


def samples_sheets(data: RunData, book: ExcelBook, inputs: ReportInputs) -> None:
    """One row per sample × scorer, streamed from the store a chunk at a time, over as many sheets as it takes."""
    headers, rows, wrapped = _sample_rows(data, book.lang)
    book.split_sheet(split_names(SHEET_NAMES[1], data.summary.n_verdicts, book.max_rows), headers, rows, wrapped)


def _segment_sheets(tables: Sequence[Any], book: ExcelBook, inputs: ReportInputs) -> None:
    taken = book.taken
    for table in tables:
        book.sheet(segment_sheet_name(table, taken), segment_headers(table, inputs.lang),
                   segment_rows(table, inputs.names))


def _conversation_sheets(sections: Any, book: ExcelBook, inputs: ReportInputs) -> None:
    headers, rows = conversation_rows(inputs.data, sections, inputs.lang)
    book.sheet(CONVERSATION_SHEETS[0], headers, rows, [len(headers) - 1])
    book.sheet(CONVERSATION_SHEETS[1], *position_rows(inputs.data, sections, inputs.lang))


def _scorecard_sheets(cards: Any, book: ExcelBook, inputs: ReportInputs) -> None:
    for name, rows in cards.sheets(book.taken):
        book.plain_sheet(name, rows)


def _weekly_sheet(reports: Sequence[Any], book: ExcelBook) -> None:
    from rubriceval.report.weekly_views import WEEKLY_SHEET, sheet_rows  # the weekly table (周报)

    head, rows = sheet_rows(reports, book.lang)
    book.sheet(WEEKLY_SHEET, head, rows, [len(head) - 1])


def _auto_accept_sheet(section: Any, book: ExcelBook) -> None:
    from rubriceval.report.auto_accept import AUTO_ACCEPT_SHEET, sheet_rows  # automatic acceptance (issue 44)

    head, rows = sheet_rows(section, book.lang)
    book.sheet(AUTO_ACCEPT_SHEET, head, rows, [len(head) - 1])


# section id (report/sections.py) → the sheets it writes, streamed
EXCEL_PARTS: dict[str, Callable[[Any, ExcelBook, ReportInputs], object]] = {
    "overview": summary_sheet,
    "samples": samples_sheets,
    "breakdown": lambda summary, book, i: book.sheet(SHEET_NAMES[2], *_breakdown_rows(i.data, book.lang)),
    "diagnosis": lambda findings, book, i: book.sheet(SHEET_NAMES[3], *_diagnosis_rows(findings, book.lang)),
    "failure_tags": lambda report, book, i: book.sheet(FAILURE_TAGS_SHEET, *failure_tag_sheet(report, book.lang)),
    "segments": _segment_sheets,
    "conversations": _conversation_sheets,
    "scorecards": _scorecard_sheets,
    "auto_accept": lambda section, book, i: _auto_accept_sheet(section, book),
    "weekly": lambda reports, book, i: _weekly_sheet(reports, book),
}


def write_book(inputs: ReportInputs, path: str | Path) -> Path:
    """The workbook: the sections of the registry in its order, each sheet streamed to disk row by row (the samples
    a chunk at a time), so a million-row run is written in flat memory."""
    book = ExcelBook(path, inputs.lang, inputs.max_rows)
    for _, write, data in present(inputs, EXCEL_PARTS):
        write(data, book, inputs)
    return book.close()


def write_workbook(data: RunData, path: str | Path, *, lang: Lang | None = None,
                   findings: Sequence[Finding] = (), max_rows: int = EXCEL_MAX_ROWS,
                   failure_tags: FailureTagReport | None = None, segments: Sequence[Any] = (),
                   scorecards: Any = None) -> Path:
    """The workbook of an already-loaded run with the parts given; `write_excel_report` and `rubriceval report`
    read every part from the store (report/inputs.py read_inputs). segments: per-segment tables (`report --by`), a
    sheet each (by_<grouping>); scorecards: a ScorecardReport, a sheet per scorecard."""
    return write_book(ReportInputs(data=data, lang=lang or data.language, findings=findings,
                                   failure_tags=failure_tags, segments=segments, scorecards=scorecards,
                                   max_rows=max_rows), path)


def write_excel_report(store: Any, run: str, path: str | Path, lang: str | None = None, *,
                       metric_thresholds: Mapping[str, float] | None = None,
                       diagnosis: DiagnosisConfig | None = None, by: str | Sequence[Any] | None = None,
                       time: Any = None, machine_only: bool = False) -> Path:
    """Write the workbook `rubriceval report` writes of a stored run: sheets summary, samples (one row per sample ×
    scorer), breakdown, diagnosis; failure_tags when experts ticked some; by_<grouping> per segment table (`by`,
    e.g. 'agent_id,week', in the zones of `time`); for conversations, conversations (one row per conversation) and
    where_rules_fail; a sheet per scorecard. machine_only: the judge's scores alone."""
    return write_book(read_inputs(store, run, lang=lang, machine_only=machine_only, by=by, time=time,
                                  metric_thresholds=metric_thresholds, diagnosis=diagnosis), path)
