"""Cross-check metrics (issue 29): an LLM retrieval metric is checked against its non-LLM twin.

A run that asks for context_recall (or context_precision) on samples that all carry reference contexts also
computes nonllm_context_recall (nonllm_context_precision) — no judge call — unless the user listed it already or
turned the cross-check off (`MetricOptions.cross_check = False`, `rubriceval run --no-cross-check`). The report and
the diagnosis then flag the samples where the two disagree strongly (report/signal_checks.py): the 1.5B judge said
"recall 1.0" for an answer drawn from the other 张伟's row, which the reference contexts contradict.

The twin is a metric of the run like the others (its verdicts, results, report rows) but marked as added: its
stored definition has `cross_check_for: <LLM metric>` and the display name "non-LLM cross-check of <metric>", and
the run says so when it starts (the dry run too, with its 0 calls). When only some samples have reference contexts
the twin is not added (it would be unscored on the rest) and the run says why. Online runs, the Batch API mode and
`evaluate()` all add it in `run/evaluate.start_run`; the dry run plans it through `planned_cross_checks`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rubriceval.data.sample import Sample
from rubriceval.standard_metrics.scope import CROSS_CHECK_TWINS

MARK = "cross_check_for"        # key of a twin's stored definition: the LLM metric it checks


class ReferenceTally:
    """Single-turn samples seen, and how many carry reference contexts (an observer of `RunStore.store_dataset`)."""

    def __init__(self) -> None:
        self.single = 0
        self.with_references = 0

    def observe(self, sample: Sample, input_hash: str = "") -> None:
        if sample.conversation is None:
            self.single += 1
            self.with_references += bool(sample.reference_contexts)

    @classmethod
    def of(cls, samples: Iterable[Sample]) -> ReferenceTally:
        tally = cls()
        for sample in samples:
            tally.observe(sample)
        return tally


def cross_check_twins(metrics: Sequence[str], tally: ReferenceTally, options: Any = None
                      ) -> tuple[dict[str, str], list[str]]:
    """(twin → the LLM metric it checks, for the twins to add; notes to print)."""
    wanted = {twin: llm for llm, twin in CROSS_CHECK_TWINS.items() if llm in metrics and twin not in metrics}
    if not wanted or getattr(options, "cross_check", True) is False or not tally.with_references:
        return {}, []
    if tally.with_references < tally.single:
        missing = tally.single - tally.with_references
        return {}, [f"note: no cross-check of {', '.join(wanted.values())}: {missing} of {tally.single} sample(s) "
                    f"have no reference_contexts (ask for {', '.join(wanted)} to score those that have them)"]
    said = "; ".join(f"{twin} beside {llm}" for twin, llm in wanted.items())
    return wanted, [f"note: cross-check added: {said} — from the reference contexts, no judge call; samples where "
                    "they disagree strongly are flagged in the report (--no-cross-check to leave it out)"]


def with_twins(metrics: Sequence[str], twins: Mapping[str, str]) -> list[str]:
    """The run's metrics: the user's, in their order, then the twins added for the cross-check."""
    return [*metrics, *(t for t in twins if t not in metrics)]


def display_name(twin: str, llm: str) -> str:
    return f"non-LLM cross-check of {llm}"     # the tables add the metric's own name in brackets


def twin_definition(twin: str, llm: str) -> dict[str, str]:
    return {"name": display_name(twin, llm), MARK: llm}


def stored_twins(scorers: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """twin → LLM metric, of a stored run's scorer rows (`RunStore.scorers`)."""
    return {row["scorer"]: str(definition[MARK]) for row in scorers if row.get("kind") == "metric"
            and isinstance(definition := row.get("definition") or {}, Mapping) and definition.get(MARK)}


def mark_results(frame: Any, twins: Mapping[str, str]) -> Any:
    """Per-row results (a pandas frame with `scorer`) with `cross_check_for`: the LLM metric the row's metric was
    added to cross-check ("" for the others); unchanged for a run without twins."""
    if twins and "scorer" in frame:
        frame["cross_check_for"] = frame["scorer"].map(dict(twins)).fillna("")
    return frame


def planned_cross_checks(samples: Iterable[Sample], metrics: Sequence[str], options: Any = None
                         ) -> tuple[list[str], dict[str, str], list[str]]:
    """What a new run over these samples computes (the dry run's metric list): (metrics, twins, notes)."""
    if not any(llm in metrics for llm in CROSS_CHECK_TWINS):
        return list(metrics), {}, []
    twins, notes = cross_check_twins(metrics, ReferenceTally.of(samples), options)
    return with_twins(metrics, twins), twins, notes
