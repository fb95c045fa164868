"""The one composition of a run's report: the sections of the registry (report/sections.py), built once from the
run and rendered in the registry's order to HTML, Markdown and Excel. `rubriceval report` and the public writers
(`write_html_report`, `write_excel_report`, `markdown_summary`) all read the run through `RunReport.read`, so they
write the same report: scorecards, segments, failure tags and judge agreement included."""
from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from rubriceval.i18n import Lang, Message, check_lang, evidence_text, t
from rubriceval.report.diagnosis import DiagnosisConfig, Finding
from rubriceval.report.excel_book import EXCEL_MAX_ROWS, ExcelBook
from rubriceval.report.failure_tags import FailureTagReport, run_failure_tags
from rubriceval.report.run_data import RunData, load_run
from rubriceval.report.sections import SECTIONS, Section


@dataclass
class ReportInputs:
    """What every section is built from: the run, read once, and what the caller asked for."""

    data: RunData
    lang: Lang
    findings: Sequence[Finding] = ()
    agreement: Mapping[str, Message | str] | None = None     # rubric id → judge–expert agreement line
    failure_tags: FailureTagReport | None = None             # experts' failure tags (team audits), if any
    segments: Sequence[Any] = ()                             # SegmentTable per grouping (`--by`)
    scorecards: Any = None                                   # report/scorecards.py ScorecardReport, if any
    gate: Any = None                                         # a GateResult to end the Markdown with
    max_rows: int = EXCEL_MAX_ROWS                           # rows a worksheet holds (tests set fewer)
    names: dict[str, str] = field(init=False)                # scorer id → its name, for every table

    def __post_init__(self) -> None:
        self.names = {s.scorer: s.name for s in self.data.summary.scorers}


class ReportFiles(BaseModel):
    """The three files `RunReport.write` wrote, and the Markdown text (what `rubriceval report` prints)."""

    model_config = ConfigDict(frozen=True)
    html: Path
    excel: Path
    markdown: Path
    markdown_text: str


class RunReport:
    """One run's report: each section's data is built once, when an output first needs it."""

    def __init__(self, inputs: ReportInputs):
        self.inputs = inputs
        self._built: dict[str, Any] = {}

    @classmethod
    def read(cls, store: Any, run: str, *, lang: str | None = None, machine_only: bool = False,
             by: str | Sequence[Any] | None = None, time: Any = None,
             metric_thresholds: Mapping[str, float] | None = None, diagnosis: DiagnosisConfig | None = None,
             agreement: Mapping[str, Message | str] | None = None, gate: Any = None) -> RunReport:
        """A stored run as `rubriceval report` reads it. by: segments ('agent_id,week', or parsed groupings) in the
        time zones of `time` (data.segment_spec.TimeSettings, default UTC); agreement: rubric id → line (default: each
        rubric version's judge–expert agreement for the run's judge, from the store); official scores unless
        machine_only."""
        data = load_run(store, run, metric_thresholds, machine_only=machine_only)
        report_lang = check_lang(lang) or data.language
        if agreement is None:
            agreement = _agreement(store, data.run_id)
        segments: list[Any] = []
        if by:                                            # per-segment tables, read from the store a span at a time
            from rubriceval.data.segment_spec import parse_by
            from rubriceval.segments.table import segment_tables

            groupings = parse_by(by) if isinstance(by, str) else list(by)
            segments = segment_tables(store, data.run_id, groupings, time, metric_thresholds,
                                      machine_only=machine_only)
        from rubriceval.report.scorecards import ScorecardReport  # the run's scorecards, if any (issue 25)

        cards = ScorecardReport(store, data.run_id, report_lang, machine_only=machine_only)
        return cls(ReportInputs(data=data, lang=report_lang, findings=data.findings(diagnosis), agreement=agreement,
                                failure_tags=run_failure_tags(store.path, data.run_id), segments=segments,
                                scorecards=cards if cards else None, gate=gate))

    # -- sections ---------------------------------------------------------------------------------------------------
    def built(self, section: Section) -> Any:
        """The section's data (None: the section is left out of every output)."""
        if section.id not in self._built:
            self._built[section.id] = section.build(self.inputs)
        return self._built[section.id]

    # -- outputs ----------------------------------------------------------------------------------------------------
    def html(self) -> str:
        """One self-contained page: inline CSS and SVG, no script; every text autoescaped by the templates."""
        from rubriceval.report.html_page import HtmlPage

        page = HtmlPage(self.inputs)
        parts = []
        for section in SECTIONS:
            if section.html is not None and (data := self.built(section)) is not None:
                parts.append(page.part(section.html(data, page)))
        return page.render("report.html.j2", parts=parts)

    def markdown(self) -> str:
        """The short summary for chat and CI logs."""
        lines: list[str] = []
        for section in SECTIONS:
            if section.markdown is not None and (data := self.built(section)) is not None:
                lines += section.markdown(data, self.inputs)
        return "\n".join(lines).rstrip() + "\n"

    def write_excel(self, path: str | Path) -> Path:
        """The workbook, each sheet streamed to disk row by row (the samples a chunk at a time): flat memory."""
        book = ExcelBook(path, self.inputs.lang, self.inputs.max_rows)
        for section in SECTIONS:
            if section.excel is not None and (data := self.built(section)) is not None:
                section.excel(data, book, self.inputs)
        return book.close()

    def write(self, out: str | Path) -> ReportFiles:
        """<run name>.html, .xlsx and .md in the folder `out`."""
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        name = self.inputs.data.run_name
        html = folder / f"{name}.html"
        html.write_text(self.html(), encoding="utf-8")
        excel = self.write_excel(folder / f"{name}.xlsx")
        text = self.markdown()
        markdown = folder / f"{name}.md"
        markdown.write_text(text, encoding="utf-8")
        return ReportFiles(html=html, excel=excel, markdown=markdown, markdown_text=text)


def _agreement(store: Any, run_id: str) -> dict[str, Message]:
    """Judge–expert agreement of each rubric version of the run (audits, imported labels, calibration), for the
    run's judge model."""
    from rubriceval.store.runs import rubrics_from_run
    from rubriceval.trust.release_gate import agreement_lines

    info = store.run_info(run_id)
    rubrics, _ = rubrics_from_run(store, run_id)
    return agreement_lines(store.path, rubrics, judge_model=str(info.config.judge.get("model") or "") or None)


def page_globals(inputs: ReportInputs) -> dict[str, Any]:
    """What every part of the HTML page reads: language, the run's header figures, the generation time."""
    from rubriceval.report.html import format_time, judge_label
    from rubriceval.report.official_figures import official_note

    data, lang = inputs.data, inputs.lang
    config = data.info.get("config", {})
    return {"lang": lang, "t": lambda key, **kw: t(key, lang, **kw), "say": lambda e: evidence_text(e, lang),
            "run": data.info, "run_name": data.run_name, "created": format_time(data.info.get("created_at")),
            "dataset": config.get("dataset_path", ""), "judge_model": judge_label(config.get("judge") or {}),
            "n_samples": data.n_samples, "summary": data.summary,
            "official_note": lambda s: official_note(s, lang),
            "generated_at": dt.datetime.now().strftime("%Y-%m-%d %H:%M")}
