"""A run's report as `rubriceval report` writes it: the run read once (report/inputs.py read_inputs, as the public
writers read it), then the page, the workbook and the Markdown summary, each drawing the sections of the one
registry (report/sections.py) in its order: report/html.py render_page, report/excel.py write_book,
report/markdown.py render_summary."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from rubriceval.i18n import Message
from rubriceval.report.diagnosis import DiagnosisConfig
from rubriceval.report.excel import write_book
from rubriceval.report.html import render_page
from rubriceval.report.inputs import ReportInputs, read_inputs
from rubriceval.report.markdown import render_summary


class ReportFiles(BaseModel):
    """The three files `RunReport.write` wrote, and the Markdown text (what `rubriceval report` prints)."""

    model_config = ConfigDict(frozen=True)
    html: Path
    excel: Path
    markdown: Path
    markdown_text: str


class RunReport:
    """One run's report: each section's data is built once (ReportInputs.built), whichever outputs are drawn."""

    def __init__(self, inputs: ReportInputs):
        self.inputs = inputs

    @classmethod
    def read(cls, store: Any, run: str, *, lang: str | None = None, machine_only: bool = False,
             by: str | Sequence[Any] | None = None, time: Any = None,
             metric_thresholds: Mapping[str, float] | None = None, diagnosis: DiagnosisConfig | None = None,
             agreement: Mapping[str, Message | str] | None = None, gate: Any = None) -> RunReport:
        """The stored run as `rubriceval report` reads it (report/inputs.py read_inputs)."""
        return cls(read_inputs(store, run, lang=lang, machine_only=machine_only, by=by, time=time,
                               metric_thresholds=metric_thresholds, diagnosis=diagnosis, agreement=agreement,
                               gate=gate))

    def html(self) -> str:
        return render_page(self.inputs)

    def markdown(self) -> str:
        return render_summary(self.inputs)

    def write_excel(self, path: str | Path) -> Path:
        return write_book(self.inputs, path)

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
