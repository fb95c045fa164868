"""A stored run as every report, comparison and gate reads it: its summary (computed in SQL by report/source.py)
and its rows, read through the source so memory does not grow with the run."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.i18n import Lang
from rubriceval.report.source import RunSource
from rubriceval.report.summary_models import Summary


class RunData:
    """A stored run as every report reads it: its summary, and its rows through a RunSource (report/source.py) in
    SQL or in chunks. `samples` and `verdicts` load the whole run, for small runs and tests; reports use the
    accessors below, so their memory does not grow with the run."""

    def __init__(self, source: Any, summary: Summary):
        self.source = source
        self.run_id: str = source.run_id
        self.run_name: str = source.info.name
        self.info: dict[str, Any] = source.info.model_dump(mode="json")
        self.scorers: list[dict[str, Any]] = source.scorers
        self.summary = summary
        self.n_samples: int = source.n_samples

    @cached_property
    def samples(self) -> list[Sample]:
        return self.source.store.samples(self.run_id)

    @cached_property
    def verdicts(self) -> list[Verdict]:
        return self.source.store.verdicts(self.run_id)

    @cached_property
    def language(self) -> Lang:
        """The data's language (detect_language over the samples), read in chunks."""
        return self.source.language()

    @cached_property
    def conversations(self) -> tuple[list[Sample], list[Verdict]]:
        """The conversation samples and their rubric verdicts (all a report on conversations needs)."""
        return self.source.conversation_rows()

    @cached_property
    def conversation_sections(self) -> Any:
        """The conversation sections, streamed a span of conversations at a time (report/conversation_stream.py):
        what the reports read, so their memory does not grow with the number of conversations."""
        from rubriceval.report.conversation_stream import ConversationSections

        return ConversationSections(self.source.conversation_chunks, [s.scorer for s in self.summary.rubrics])

    def lowest(self, scorer: str, n: int) -> list[Verdict]:
        return self.source.lowest(scorer, n)

    def samples_for(self, ids: Sequence[str]) -> dict[str, Sample]:
        return self.source.samples_for(ids)

    @cached_property
    def appeal_flags(self) -> list[Any]:
        """Rubric items agents keep winning appeals on (store/appeal_stats.py), for every report to flag."""
        from rubriceval.audit.appeal_stats import appeal_flags

        return appeal_flags(self.source.conn, self.run_id)

    def findings(self, config: Any = None) -> list[Any]:
        """The diagnosis (report/diagnosis.py), answered in SQL."""
        return self.source.diagnose(self.summary, config)


def load_run(store: Any, run: str, metric_thresholds: Mapping[str, float] | None = None, *,
             breakdown: bool = True, machine_only: bool = False) -> RunData:
    """A stored run and its summary, computed in SQL (report/source.py). breakdown=False: without the per tag/intent
    groups (compare and gate do not read them; at 100,000 rows they are a third of the summary's time).
    Scores are official (the latest human decision, else the judge's: audit/official.py); machine_only=True: the
    judge's alone."""
    source = RunSource(store, run, machine_only=machine_only)
    return RunData(source, source.summary(metric_thresholds, breakdown=breakdown))
