"""What `evaluate()` returns: the run's verdicts with the store they live in — scores by scorer, a pandas frame,
test cases, the report summary and the official scores (kept apart from run/evaluate.py, which runs)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from rubriceval.core.pending_review import PendingReview
from rubriceval.core.verdict import Verdict
from rubriceval.run.cases import CaseResult, scorer_thresholds
from rubriceval.store.runs import RunStore

if TYPE_CHECKING:
    import pandas as pd


class EvaluationResult(BaseModel):
    """What `evaluate()` returns. Prints as the mean of each rubric and metric (`{'faithfulness': 0.81, …}`);
    `result["faithfulness"]` is the per-sample values in dataset order (None: unscored, or the scorer does not apply
    to that sample; the reason is in `to_pandas()`); `to_pandas(wide=True)` is one row per sample."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_id: str
    run_name: str
    store_path: str
    totals: dict[str, Any]
    verdicts: list[Verdict]
    sample_ids: list[str] = []
    # Metrics the run added beside an LLM retrieval metric to cross-check it (twin → that metric;
    # rubriceval/run/cross_check.py): in `scores` and the frames like the others, named so in the report.
    cross_checks: dict[str, str] = {}

    @property
    def scores(self) -> dict[str, float | None]:
        """Each scorer's mean over its scored rows (unscored rows are counted in unscored_counts, never averaged;
        rubric verdicts pending review under the rubric's auto_accept target in pending_counts, never averaged either;
        None when a scorer has no such row)."""
        values: dict[str, list[float]] = {}
        for v in self.verdicts:
            values.setdefault(v.scorer, [])
            if v.score is not None and PendingReview.read(v.details) is None:
                values[v.scorer].append(v.score)
        return {scorer: round(sum(xs) / len(xs), 4) if xs else None for scorer, xs in values.items()}

    def __repr__(self) -> str:
        return repr(self.scores)

    __str__ = __repr__

    def __getitem__(self, scorer: str) -> list[float | None]:
        by_sample = {v.sample_id: v.score for v in self.verdicts if v.scorer == scorer}
        if not by_sample:
            raise KeyError(f"{scorer!r}: the run has no rubric or metric of that name "
                           f"(it has {', '.join(self.scores) or 'none'})")
        return [by_sample.get(sample_id) for sample_id in self.sample_ids]

    def keys(self) -> list[str]:
        return list(self.scores)

    def scorecards(self) -> pd.DataFrame:
        """The run's scorecard totals (质检评分表, rubriceval/scorecard/): a row per conversation and scorecard, its
        total, each dimension's subtotal and a column per item (−20, 0, N/A, unscored, fatal); empty without any."""
        from rubriceval.store.scorecards import run_frame

        return run_frame(RunStore(self.store_path), self.run_id)

    def to_pandas(self, wide: bool = False) -> pd.DataFrame:
        """wide=False: one row per sample × rubric/metric (score or unscored reason, passed, feedback, evidence,
        usage; `cross_check_for` when the run added a metric to cross-check another). wide=True: one row per sample —
        id, question, answer, contexts, ground_truth, a column per
        rubric/metric (pandas NA where unscored or not applicable) and `unscored` (scorer: reason; …)."""
        import pandas as pd  # only when a frame is asked for: a run does not need pandas

        store = RunStore(self.store_path)
        if not wide:
            from rubriceval.run.cross_check import mark_results

            return mark_results(store.verdict_frame(self.run_id), self.cross_checks)
        scorers = list(self.scores)
        rows: dict[str, dict[str, Any]] = {
            s.id: {"id": s.id, "question": s.question, "answer": s.answer, "contexts": s.contexts,
                   "ground_truth": s.ground_truth, **{name: None for name in scorers}, "unscored": ""}
            for s in store.samples(self.run_id)}
        for v in self.verdicts:
            row = rows[v.sample_id]
            row[v.scorer] = v.score
            if v.score is None:
                row["unscored"] += ("; " if row["unscored"] else "") + f"{v.scorer}: {v.unscored_reason}"
        frame = pd.DataFrame(list(rows.values()))
        return frame.astype({name: "Float64" for name in scorers})

    def cases(self) -> list[CaseResult]:
        """One test case per sample, in dataset order: its verdicts and their thresholds (for
        `rubriceval.testing.assert_case`, one pytest test per sample)."""
        store = RunStore(self.store_path)
        thresholds = scorer_thresholds(store.scorers(self.run_id))
        by_sample: dict[str, list[Verdict]] = {}
        for v in self.verdicts:
            by_sample.setdefault(v.sample_id, []).append(v)
        return [CaseResult(sample=s, verdicts=by_sample.get(s.id, []), thresholds=thresholds)
                for s in store.samples(self.run_id)]

    def summary(self, machine_only: bool = False):
        """Per-rubric and per-metric aggregates (mean, pass rate, distribution, unscored counts) on official scores:
        the latest human decision (override, adjudication, accepted appeal) where there is one, with the number of
        human-decided rows and the machine's figures beside; machine_only=True: the judge's scores alone."""
        from rubriceval.report.run_data import load_run

        data = load_run(RunStore(self.store_path), self.run_id, machine_only=machine_only)
        data.source.close()
        return data.summary

    def official_scores(self, machine_only: bool = False) -> pd.DataFrame:
        """One row per verdict: machine score, official score, whether a human decided it, who, when, why."""
        from rubriceval.audit.official_api import official_scores

        return official_scores(self.store_path, self.run_id, machine_only=machine_only)

    @property
    def pending_counts(self) -> dict[str, int]:
        """Rubric verdicts pending review per rubric (issue 44: outside the rubric's auto_accept region when the run
        made them; the judge's score is in `result[rubric]`, a person's decision in `official_scores()`)."""
        counts: dict[str, int] = {}
        for v in self.verdicts:
            if v.score is not None and PendingReview.read(v.details) is not None:
                counts[v.scorer] = counts.get(v.scorer, 0) + 1
        return counts

    @property
    def unscored_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for v in self.verdicts:
            if not v.scored:
                counts[v.scorer] = counts.get(v.scorer, 0) + 1
        return counts
