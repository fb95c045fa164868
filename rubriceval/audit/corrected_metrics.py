"""Metric verdicts of samples an expert corrected after scoring (a new ground truth, context relevance marks:
store/corrections.py). Derived on read, never written over a verdict; the append-only `audit_gt_edits` stays.

- A deterministic metric (string and retrieval families: rouge_l, bleu, exact_match, nonllm_context_recall …, no
  judge and no embedder under the run's metric options) is recomputed on the corrected sample, by the same
  `standard_metrics` code a run uses: its value there is the official one (source "correction", by the editors, at
  the latest edit).
- Any other metric (LLM metrics, a conversation's per-turn metrics, NL2SQL metrics that run their own SQL) cannot be
  recomputed without a judge call: its score stays the machine's and it is listed as corrected after scoring, for
  the reports to say "re-run to re-score". So is a deterministic metric the corrected sample leaves unscorable.

A verdict counts as scored before the correction when its input hash (Sample.input_hash at scoring time) is not
the corrected sample's: a run re-scored on the corrected rows is not listed.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from rubriceval.data.sample import Sample
from rubriceval.store.audit_models import GROUND_TRUTH_FIELD, GroundTruthEdit
from rubriceval.store.corrections import apply_corrections
from rubriceval.store.db import Database

DETERMINISTIC_FAMILIES = ("string", "retrieval")


class CorrectedVerdict(BaseModel):
    """A metric verdict whose sample was corrected after it was scored."""

    sample_id: str
    scorer: str
    machine_score: float | None
    by: str                           # the editors, comma-separated
    at: float                         # the latest edit
    fields: list[str]                 # what was corrected: ground_truth, context #2 …
    score: float | None = None        # recomputed on the corrected sample (None: not recomputable)
    why_not: str = ""                 # why it was not recomputed: an LLM metric, unscorable on the corrected row …

    @property
    def recomputed(self) -> bool:
        return self.score is not None

    @property
    def reason(self) -> str:
        what = ", ".join(self.fields)
        if self.recomputed:
            return f"recomputed on the corrected sample ({what})"
        return f"sample corrected after scoring ({what}): {self.why_not}; re-run to re-score"


def _edits(conn: Database, run_id: str) -> dict[str, list[GroundTruthEdit]]:
    if not conn.table_exists("audit_gt_edits"):
        return {}
    out: dict[str, list[GroundTruthEdit]] = {}
    for r in conn.execute("SELECT edit_id, run_id, sample_id, field, before_json, after_json, editor, edited_at "
                          "FROM audit_gt_edits WHERE run_id = ? ORDER BY edit_id", (run_id,)).fetchall():
        out.setdefault(r["sample_id"], []).append(GroundTruthEdit.from_row(r))
    return out


def _field_label(field: str) -> str:
    return field if field == GROUND_TRUTH_FIELD else f"context #{int(field.split(':', 1)[1]) + 1}"


def _options(conn: Database, run_id: str) -> tuple[Any, str]:
    """The run's metric options (as it was started with them), or None and why they cannot be restored."""
    from rubriceval.standard_metrics.options import MetricOptions

    row = conn.execute("SELECT config_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    stored = (json.loads(row[0]) if row else {}).get("metric_options") or {}
    try:
        return MetricOptions.model_validate(stored), ""
    except ValueError as exc:
        return None, f"the run's metric options cannot be restored ({str(exc).splitlines()[0]})"


def _why_not(sample: Sample, scorer: str, options: Any) -> str:
    """Why the metric cannot be recomputed on the sample without a judge call ('' when it can)."""
    from rubriceval.standard_metrics.catalog import METRICS
    from rubriceval.standard_metrics.sql.spec import SelfRunMetricSpec

    spec = METRICS.get(scorer)
    if spec is None or sample.conversation is not None:
        return "a conversation metric needs a judge call"
    if (spec.family not in DETERMINISTIC_FAMILIES or isinstance(spec, SelfRunMetricSpec)
            or spec.needs_judge(options) or spec.needs_embedder(options)):
        return "an LLM metric needs a judge call"
    return ""


def _recompute(sample: Sample, scorers: list[str], options: Any) -> dict[str, tuple[float | None, str]]:
    """scorer → its score on the corrected sample, or None and why not (all of `scorers` are deterministic)."""
    from rubriceval.standard_metrics.single_turn import score_single_turn

    if not scorers:
        return {}
    # Metrics without judge or embedder calls never await: the coroutine runs to its end on the first step.
    coroutine = score_single_turn(sample, scorers, judge=None, embedder=None, options=options)
    try:
        coroutine.send(None)
    except StopIteration as done:
        verdicts = done.value
    else:                                      # it awaited something after all: not deterministic here
        coroutine.close()
        return {scorer: (None, "the metric waits on a call") for scorer in scorers}
    return {v.scorer: (float(v.score), "") if v.score is not None else
            (None, f"unscored on the corrected sample ({v.unscored_kind}: {v.unscored_reason})") for v in verdicts}


def corrected_verdicts(conn: Database, run_id: str) -> Iterator[CorrectedVerdict]:
    """Every metric verdict of the run scored before its sample's corrections, recomputed where it can be."""
    edits = _edits(conn, run_id)
    if not edits:
        return
    options, why_options = _options(conn, run_id)
    ids = sorted(edits)
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        marks = ",".join("?" * len(part))
        samples = {r[0]: Sample.model_validate_json(r[1]) for r in conn.execute(
            f"SELECT sample_id, sample_json FROM run_samples WHERE run_id = ? AND sample_id IN ({marks})",
            (run_id, *part)).fetchall()}
        rows = conn.execute("SELECT sample_id, scorer, score, input_hash FROM verdicts WHERE run_id = ? AND "
                            f"kind = 'metric' AND sample_id IN ({marks}) ORDER BY sample_id, scorer",
                            (run_id, *part)).fetchall()
        stale: dict[str, list[tuple[str, float | None]]] = {}
        hashes: dict[str, str] = {}
        for sample_id, scorer, machine, input_hash in rows:
            if sample_id not in samples:
                continue
            if sample_id not in stale:
                samples[sample_id] = apply_corrections(samples[sample_id], edits[sample_id])
                stale[sample_id], hashes[sample_id] = [], samples[sample_id].input_hash()
            if input_hash != hashes[sample_id]:      # scored before the correction
                stale[sample_id].append((scorer, machine))
        for sample_id, found in stale.items():
            sample, sample_edits = samples[sample_id], edits[sample_id]
            why = {scorer: why_options or _why_not(sample, scorer, options) for scorer, _ in found}
            scores = _recompute(sample, [scorer for scorer, _ in found if not why[scorer]], options)
            for scorer, machine in found:
                score, why_not = scores.get(scorer, (None, why[scorer]))
                yield CorrectedVerdict(
                    sample_id=sample_id, scorer=scorer, machine_score=machine,
                    by=", ".join(sorted({e.editor for e in sample_edits})),
                    at=max(e.edited_at for e in sample_edits),
                    fields=list(dict.fromkeys(_field_label(e.field) for e in sample_edits)), score=score,
                    why_not=why_not)
