"""The sections of a run's report, registered once, in the order every output shows them.

A section is an id, the i18n key of its title, a function building its data from the report's inputs (the run and
what the caller asked for; None: the section is left out of every output) and the workbook sheets it writes. Each
output walks this tuple in order and draws the sections it has a renderer for, keyed by id: the page
(report/html.py HTML_PARTS, templates under templates/sections/), the Markdown summary (report/markdown.py
MARKDOWN_PARTS) and the workbook (report/excel.py EXCEL_PARTS, streamed). tests/report/test_report_composition.py fails
when a renderer table, a template, a title or a sheet disagrees with this registry.

Adding a section: one `Section(...)` below with its build, its title in the i18n tables, and its renderers.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rubriceval.report.conversation_tables import SHEETS as CONVERSATION_SHEETS
from rubriceval.report.failure_tags import FAILURE_TAGS_SHEET

if TYPE_CHECKING:
    from rubriceval.report.inputs import ReportInputs

SAMPLES_SHEET = "samples"         # stable sheet names, for scripts reading the workbook


@dataclass(frozen=True)
class Section:
    id: str                                      # also the HTML section's element id
    title_key: str                               # its heading in the i18n tables
    build: Callable[[ReportInputs], Any]
    sheets: tuple[str, ...] = ()                 # the workbook sheets it writes: names, or a prefix ending in '…'


def _scorers(kind: str) -> Callable[[ReportInputs], Any]:
    return lambda i: [s for s in i.data.summary.scorers if s.kind == kind] or None


def _conversations(inputs: ReportInputs) -> Any:
    sections = inputs.data.conversation_sections     # streamed a span of conversations at a time
    return None if sections.empty else sections


def _weekly(inputs: ReportInputs) -> Any:
    """The weekly QA table (周报, report/weekly.py) of each scorecard of a run whose conversations carry agents or
    skill groups and start times: this week against the one before (earlier runs of the store included)."""
    if not inputs.scorecards:
        return None
    from rubriceval.report.weekly import weekly_reports_for_run

    data = inputs.data
    return weekly_reports_for_run(data.source.store, data.run_id, inputs.time, inputs.lang) or None


def _auto_accept(inputs: ReportInputs) -> Any:
    """Automatic acceptance with a guarantee (issue 44, report/auto_accept.py): only when a scorecard of the run states
    an auto_accept target."""
    from rubriceval.report.auto_accept import build

    return build(inputs)


def _measured(inputs: ReportInputs) -> list[str] | None:
    """What the rubric files' measured: blocks say of the run's judge (report/measured.py), a line per rubric."""
    from rubriceval.report.measured import measured_lines

    data = inputs.data
    return measured_lines(data.scorers, data.info.get("config", {}).get("judge") or {}, inputs.lang) or None


SECTIONS: tuple[Section, ...] = (
    Section("overview", "overview", build=lambda i: i.data.summary, sheets=("summary",)),
    Section("samples", "samples", build=lambda i: i.data, sheets=(SAMPLES_SHEET + "…",)),
    Section("breakdown", "breakdown", build=lambda i: i.data.summary, sheets=("breakdown",)),
    Section("diagnosis", "diagnosis", build=lambda i: list(i.findings), sheets=("diagnosis",)),
    Section("rubrics", "rubrics", build=_scorers("rubric")),
    Section("measured", "measured_title", build=_measured),
    Section("failure_tags", "ft_title",
            build=lambda i: i.failure_tags if i.failure_tags is not None and i.failure_tags.counts else None,
            sheets=(FAILURE_TAGS_SHEET,)),
    Section("segments", "segments_title", build=lambda i: list(i.segments) or None, sheets=("by_…",)),
    Section("conversations", "cv_section", build=_conversations, sheets=CONVERSATION_SHEETS),
    Section("metrics", "metrics", build=_scorers("metric")),
    Section("unscored", "unscored_section",
            build=lambda i: [(s, g) for s in i.data.summary.scorers for g in s.unscored]),
    Section("cost", "cost", build=lambda i: i.data.summary),
    Section("scorecards", "sc_title", build=lambda i: i.scorecards or None, sheets=("scorecard …",)),
    Section("auto_accept", "aa_title", build=_auto_accept, sheets=("auto_accept",)),
    Section("weekly", "wk_title", build=_weekly, sheets=("weekly",)),
    Section("gate", "gate", build=lambda i: i.gate),
)


def present(inputs: ReportInputs, renderers: dict[str, Any]) -> list[tuple[Section, Any, Any]]:
    """The sections an output shows, in the registry's order: (section, its renderer there, its data)."""
    shown = []
    for section in SECTIONS:
        renderer = renderers.get(section.id)
        if renderer is not None and (data := inputs.built(section)) is not None:
            shown.append((section, renderer, data))
    return shown
