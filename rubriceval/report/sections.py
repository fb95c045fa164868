"""The sections of a run's report, registered once, in the order every output shows them.

A section is an id, the i18n key of its title, a function building its data from the report's inputs (None: the
section is left out) and a renderer per output that shows it: HTML (a template under templates/sections/, or markup
from the section's own module), Markdown (lines) and Excel (sheets streamed into the workbook). The composer
(report/compose.py) walks this tuple for each output; nothing else lists the sections — the workbook's sheet names
are the ones declared here (tests/test_report_composition.py checks every output against this registry).

Adding a section: a build function, its renderers, one `Section(...)` below, its title in the i18n tables.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rubriceval.report import excel, html, markdown
from rubriceval.report.conversation_tables import SHEETS as CONVERSATION_SHEETS
from rubriceval.report.failure_tags import FAILURE_TAGS_SHEET

if TYPE_CHECKING:
    from rubriceval.report.compose import ReportInputs
    from rubriceval.report.excel_book import ExcelBook
    from rubriceval.report.html_page import HtmlPage

Build = Callable[["ReportInputs"], Any]
HtmlRenderer = Callable[[Any, "HtmlPage"], str]
MarkdownRenderer = Callable[[Any, "ReportInputs"], list[str]]
ExcelRenderer = Callable[[Any, "ExcelBook", "ReportInputs"], None]


@dataclass(frozen=True)
class Section:
    id: str                                  # also the HTML section's element id
    title_key: str                           # its heading in the i18n tables
    build: Build
    html: HtmlRenderer | None = None
    markdown: MarkdownRenderer | None = None
    excel: ExcelRenderer | None = None
    sheets: tuple[str, ...] = ()             # the sheets it writes: names, or a prefix ending in '…'


@dataclass(frozen=True)
class Template:
    """A section drawn by templates/sections/<name>.html.j2 from the values given (autoescaped there)."""

    name: str
    values: Callable[[Any, ReportInputs], dict[str, Any]]

    @property
    def path(self) -> str:
        return f"sections/{self.name}.html.j2"

    def __call__(self, data: Any, page: HtmlPage) -> str:
        return page.section(self.path, self.values(data, page.inputs))


template = Template


# -- the sections' own renderers (their modules hold the work; these adapt them to the registry) ----------------------
def _failure_tags_html(report: Any, page: HtmlPage) -> str:
    from rubriceval.report.failure_tags import failure_tags_html

    return failure_tags_html(report, page.inputs.lang)       # escapes every cell itself (rubric ids, tags are user text)


def _failure_tags_markdown(report: Any, inputs: ReportInputs) -> list[str]:
    from rubriceval.report.failure_tags import failure_tags_markdown

    return [failure_tags_markdown(report, inputs.lang)]


def _failure_tags_sheet(report: Any, book: ExcelBook, inputs: ReportInputs) -> None:
    from rubriceval.report.failure_tags import failure_tag_sheet

    book.sheet(FAILURE_TAGS_SHEET, *failure_tag_sheet(report, inputs.lang))


def _segments_markdown(tables: Any, inputs: ReportInputs) -> list[str]:
    from rubriceval.report.segment_views import markdown_section

    return [markdown_section(tables, inputs.names, inputs.lang), ""]


def _segments_sheets(tables: Any, book: ExcelBook, inputs: ReportInputs) -> None:
    from rubriceval.report.segment_views import headers, sheet_name, sheet_rows

    taken = book.taken
    for table in tables:
        book.sheet(sheet_name(table, taken), headers(table, inputs.lang), sheet_rows(table, inputs.names))


def _segments_values(tables: Any, inputs: ReportInputs) -> dict[str, Any]:
    from rubriceval.report.segment_views import html_context

    return html_context(tables, inputs.names, inputs.lang)


def _conversations(inputs: ReportInputs) -> Any:
    sections = inputs.data.conversation_sections     # streamed a span of conversations at a time
    return None if sections.empty else sections


def _conversation_values(sections: Any, inputs: ReportInputs) -> dict[str, Any]:
    from rubriceval.report.conversation_view import conversation_context

    return {"conversation_section": conversation_context(inputs.data)}


def _conversation_markdown(sections: Any, inputs: ReportInputs) -> list[str]:
    from rubriceval.report.conversation_tables import markdown_lines

    return markdown_lines(inputs.data, inputs.lang)


def _conversation_sheets(sections: Any, book: ExcelBook, inputs: ReportInputs) -> None:
    from rubriceval.report.conversation_tables import conversation_rows, position_rows

    headers, rows = conversation_rows(inputs.data, sections, inputs.lang)
    book.sheet(CONVERSATION_SHEETS[0], headers, rows, [len(headers) - 1])
    book.sheet(CONVERSATION_SHEETS[1], *position_rows(inputs.data, sections, inputs.lang))


def _measured(inputs: ReportInputs) -> list[str] | None:
    from rubriceval.report.measured import measured_section

    data = inputs.data
    return measured_section(data.scorers, data.info.get("config", {}).get("judge") or {}, inputs.lang) or None


def _scorecard_sheets(cards: Any, book: ExcelBook, inputs: ReportInputs) -> None:
    taken = book.taken
    for name, rows in cards.sheets(taken):
        book.plain_sheet(name, rows)


SECTIONS: tuple[Section, ...] = (
    Section("overview", "overview", build=lambda i: i.data,
            html=template("overview", lambda data, i: html.overview_values(i)),
            markdown=markdown.overview_lines, excel=excel.summary_sheet, sheets=(excel.SHEET_NAMES[0],)),
    Section("samples", "samples", build=lambda i: i.data, excel=excel.samples_sheets,
            sheets=(excel.SHEET_NAMES[1],)),
    Section("breakdown", "breakdown", build=lambda i: i.data.summary,
            html=template("breakdown", lambda summary, i: {"breakdowns": html.breakdown_tables(summary)}),
            excel=lambda data, book, i: excel.breakdown_sheet(i.data, book, i), sheets=(excel.SHEET_NAMES[2],)),
    Section("diagnosis", "diagnosis", build=lambda i: list(i.findings),
            html=template("diagnosis", lambda findings, i: {"findings": findings}),
            markdown=markdown.diagnosis_lines, excel=excel.diagnosis_sheet, sheets=(excel.SHEET_NAMES[3],)),
    Section("rubrics", "rubrics", build=lambda i: html.scorer_sections(i, "rubric") or None,
            html=template("rubrics", lambda sections, i: {"rubric_sections": sections})),
    Section("measured", "measured_title", build=_measured, markdown=lambda lines, i: lines),
    Section("failure_tags", "ft_title",
            build=lambda i: i.failure_tags if i.failure_tags is not None and i.failure_tags.counts else None,
            html=_failure_tags_html, markdown=_failure_tags_markdown, excel=_failure_tags_sheet,
            sheets=(FAILURE_TAGS_SHEET,)),
    Section("segments", "segments_title", build=lambda i: list(i.segments) or None,
            html=template("segments", _segments_values), markdown=_segments_markdown, excel=_segments_sheets,
            sheets=("by_…",)),
    Section("conversations", "cv_section", build=_conversations,
            html=template("conversations", _conversation_values), markdown=_conversation_markdown,
            excel=_conversation_sheets, sheets=CONVERSATION_SHEETS),
    Section("metrics", "metrics", build=lambda i: html.scorer_sections(i, "metric") or None,
            html=template("metrics", lambda sections, i: {"metric_sections": sections})),
    Section("unscored", "unscored_section",
            build=lambda i: [(s, g) for s in i.data.summary.scorers for g in s.unscored],
            html=template("unscored", lambda unscored, i: {"unscored": unscored})),
    Section("cost", "cost", build=lambda i: i.data, html=template("cost", lambda data, i: html.cost_values(i)),
            markdown=markdown.cost_lines),
    Section("scorecards", "sc_title", build=lambda i: i.scorecards or None,
            html=template("scorecards", lambda cards, i: cards.html_values()),
            markdown=lambda cards, i: [cards.markdown()], excel=_scorecard_sheets, sheets=("scorecard …",)),
    Section("gate", "gate", build=lambda i: i.gate, markdown=markdown.gate_lines),
)


def section(section_id: str) -> Section:
    return next(s for s in SECTIONS if s.id == section_id)
