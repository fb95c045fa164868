"""What a run's report is made of: the run, read once, and what the caller asked for. `read_inputs` is the one
reading of a stored run for a report — `rubriceval report` and the public writers (`write_html_report`,
`write_excel_report`, `markdown_summary`) all call it, so they show the same sections: scorecards, segments, failure
tags and judge agreement included. Each section's data (report/sections.py) is built once, when an output first
needs it."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rubriceval.i18n import Lang, Message, check_lang
from rubriceval.report.diagnosis import DiagnosisConfig, Finding
from rubriceval.report.excel_book import EXCEL_MAX_ROWS
from rubriceval.report.failure_tags import FailureTagReport, run_failure_tags
from rubriceval.report.run_data import RunData, load_run

if TYPE_CHECKING:
    from rubriceval.report.sections import Section


@dataclass
class ReportInputs:
    data: RunData
    lang: Lang
    findings: Sequence[Finding] = ()
    agreement: Mapping[str, Message | str] | None = None     # rubric id → judge–expert agreement line
    failure_tags: FailureTagReport | None = None             # experts' failure tags (team audits), if any
    segments: Sequence[Any] = ()                             # SegmentTable per grouping (`--by`)
    scorecards: Any = None                                   # report/scorecards.py ScorecardReport, if any
    gate: Any = None                                         # a GateResult to end the Markdown with
    time: Any = None                                         # TimeSettings of the time buckets (weekly table)
    max_rows: int = EXCEL_MAX_ROWS                           # rows a worksheet holds (tests set fewer)
    names: dict[str, str] = field(init=False)                # scorer id → its name, for every table
    _built: dict[str, Any] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.names = {s.scorer: s.name for s in self.data.summary.scorers}

    def built(self, section: Section) -> Any:
        """The section's data, built once for every output (None: the section is left out of them all)."""
        if section.id not in self._built:
            self._built[section.id] = section.build(self)
        return self._built[section.id]


def read_inputs(store: Any, run: str, *, lang: str | None = None, machine_only: bool = False,
                by: str | Sequence[Any] | None = None, time: Any = None,
                metric_thresholds: Mapping[str, float] | None = None, diagnosis: DiagnosisConfig | None = None,
                agreement: Mapping[str, Message | str] | None = None, gate: Any = None) -> ReportInputs:
    """A stored run as `rubriceval report` reads it. by: segments ('agent_id,week', or parsed groupings) in the time
    zones of `time` (data.segment_spec.TimeSettings, default UTC); agreement: rubric id → line (default: each rubric
    version's judge–expert agreement for the run's judge, from the store); official scores unless machine_only."""
    from rubriceval.report.scorecards import ScorecardReport  # the run's scorecards, if any (issue 25)

    data = load_run(store, run, metric_thresholds, machine_only=machine_only)
    report_lang = check_lang(lang) or data.language
    if agreement is None:
        agreement = _agreement(store, data.run_id)
    segments: list[Any] = []
    if by:                                            # per-segment tables, read from the store a span at a time
        from rubriceval.data.segment_spec import parse_by
        from rubriceval.segments.table import segment_tables

        groupings = parse_by(by) if isinstance(by, str) else list(by)
        segments = segment_tables(store, data.run_id, groupings, time, metric_thresholds, machine_only=machine_only)
    cards = ScorecardReport(store, data.run_id, report_lang, machine_only=machine_only)
    return ReportInputs(data=data, lang=report_lang, findings=data.findings(diagnosis), agreement=agreement,
                        failure_tags=run_failure_tags(store.path, data.run_id), segments=segments,
                        scorecards=cards if cards else None, gate=gate, time=time)


def _agreement(store: Any, run_id: str) -> dict[str, Message]:
    """Judge–expert agreement of each rubric version of the run (audits, imported labels, calibration), for the
    run's judge model."""
    from pydantic import ValidationError

    from rubriceval.rubric.schema import Rubric
    from rubriceval.trust.release_gate import agreement_lines

    info = store.run_info(run_id)
    rubrics = []
    for row in store.scorers(run_id):
        if row["kind"] != "rubric":
            continue
        try:        # a stored definition this release cannot read has no agreement line; the report still renders
            rubrics.append(Rubric.model_validate(row["definition"]))
        except ValidationError:
            continue
    return agreement_lines(store.path, rubrics, judge_model=str(info.config.judge.get("model") or "") or None)
