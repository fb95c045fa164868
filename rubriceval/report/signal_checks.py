"""Figures that must not be read as confident (issue 29): two retrieval metrics that contradict each other on a
sample, a metric that does not move over differing samples, a checklist question whose p(yes) does not move.

Rules (the diagnosis turns each hit into a finding, report/diagnosis.py):
- cross-check: where a sample has both an LLM retrieval metric and its non-LLM twin (context_recall ↔
  nonllm_context_recall, context_precision ↔ nonllm_context_precision: the latter needs reference contexts, and a
  run asking for the former computes it when every sample has them, rubriceval/run/cross_check.py), the two
  differ by ≥ `DISAGREEMENT_GAP` (LLM 1.0, non-LLM 0.2) → the sample is listed;
- constant metric: ≥ `MIN_ROWS` scored rows of differing samples, all with one value → "no signal";
- narrow p(yes): a checklist question answered with a p(yes) on ≥ `MIN_ROWS` rows, all within `P_YES_BAND` of
  each other (no separation between yes and no) → "no signal". At most `MAX_P_YES_ROWS` rows are read per rubric.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel

from rubriceval.core.verdict import Verdict
from rubriceval.report.summary_models import ScorerSummary
from rubriceval.standard_metrics.scope import CROSS_CHECK_TWINS

CROSS_CHECK_PAIRS = tuple(CROSS_CHECK_TWINS.items())
DISAGREEMENT_GAP = 0.5
MIN_ROWS = 10       # fewer rows of one value can simply be alike
P_YES_BAND = 0.1
MAX_P_YES_ROWS = 5000


class NarrowQuestion(BaseModel):
    item: str            # "<judge item>.<question id>"
    n: int
    low: float
    high: float


def cross_check_pairs(metrics: Iterable[str]) -> list[tuple[str, str]]:
    present = set(metrics)
    return [(llm, other) for llm, other in CROSS_CHECK_PAIRS if llm in present and other in present]


def constant_metric(summary: ScorerSummary, samples_differ: bool) -> bool:
    return (summary.kind == "metric" and samples_differ and summary.n_scored >= MIN_ROWS
            and summary.min is not None and summary.min == summary.max)


def p_yes_by_question(verdicts: Iterable[Verdict]) -> dict[str, list[float]]:
    """p(yes) per checklist question ("<item>.<question>") over a rubric's verdicts."""
    values: dict[str, list[float]] = {}
    for verdict in verdicts:
        items = (verdict.details or {}).get("checklist") or {}
        if not isinstance(items, Mapping):
            continue
        for item_id, item in items.items():
            for qid, answer in ((item or {}).get("questions") or {}).items():
                if isinstance(answer, Mapping) and isinstance(answer.get("p_yes"), (int, float)):
                    values.setdefault(f"{item_id}.{qid}", []).append(float(answer["p_yes"]))
    return values


def narrow_questions(values: Mapping[str, Sequence[float]]) -> list[NarrowQuestion]:
    return [NarrowQuestion(item=q, n=len(v), low=min(v), high=max(v)) for q, v in values.items()
            if len(v) >= MIN_ROWS and max(v) - min(v) < P_YES_BAND]
