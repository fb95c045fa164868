"""The diagnosis's questions about a stored run's rows, answered in SQL (diagnosis._Index answers them in memory):
the lowest rows of a scorer, one row by key, rows low despite good retrieval, how often a check failed, the first
unscored rows. Only the few rows a finding shows are ever loaded."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rubriceval.report.diagnosis import DrivingSample, _preview
from rubriceval.store.runs import row_to_verdict
from rubriceval.verdict import Evidence, Verdict

if TYPE_CHECKING:
    from rubriceval.report.source import RunSource


class SqlIndex:
    def __init__(self, source: "RunSource"):
        self.source = source
        self._questions: dict[str, str] = {}

    def _verdicts(self, sql: str, params: Sequence[object] = ()) -> list[Verdict]:
        from rubriceval.report.source import FROM_RUN

        return [row_to_verdict(r) for r in self.source._rows(f"SELECT v.* {FROM_RUN} {sql}", params)]

    def _question(self, sample_id: str) -> str:
        if sample_id not in self._questions:
            rows = self.source._rows("SELECT json_extract(d.sample_json, '$.question') FROM runs r JOIN dataset_samples "
                                     "d ON d.dataset_id = r.dataset_id WHERE r.run_id = ? AND d.sample_id = ?",
                                     (sample_id,))
            self._questions[sample_id] = (rows[0][0] or "") if rows else ""
        return self._questions[sample_id]

    def driving(self, verdict: Verdict, detail: str = "") -> DrivingSample:
        return DrivingSample(sample_id=verdict.sample_id, score=verdict.score,
                             question=_preview(self._question(verdict.sample_id)),
                             detail=detail or _preview(verdict.feedback))

    def lowest(self, scorer: str, threshold: float | None, n: int) -> list[DrivingSample]:
        return [self.driving(v) for v in self.source.lowest(scorer, n, below=threshold)]

    def verdict(self, sample_id: str, scorer: str) -> Verdict | None:
        rows = self._verdicts("AND v.sample_id = ? AND v.scorer = ?", (sample_id, scorer))
        return rows[0] if rows else None

    def low_despite_retrieval(self, scorer: str, threshold: float | None,
                              retrieval: Sequence[tuple[str, float | None]], n: int) -> list[Verdict]:
        """Rows below threshold whose own retrieval scores all pass first, then by score and sample id."""
        joins, passes, params = [], [], []
        for i, (name, limit) in enumerate(retrieval):
            joins.append(f"LEFT JOIN verdicts r{i} ON r{i}.run_id = v.run_id AND r{i}.sample_id = v.sample_id "
                         f"AND r{i}.scorer = ?")
            params.append(name)
            passes.append(f"(r{i}.score IS NOT NULL" + (f" AND r{i}.score >= {float(limit)!r})" if limit is not None
                                                       else ")"))
        from rubriceval.report.source import FROM_RUN

        below, below_params = ("AND v.score < ?", [threshold]) if threshold is not None else ("", [])
        failed = f"NOT ({' AND '.join(passes)})" if passes else "0"
        sql = (f"SELECT v.* {FROM_RUN.replace('WHERE', ' '.join(joins) + ' WHERE', 1)} AND v.scorer = ? "
               f"AND v.score IS NOT NULL {below} ORDER BY {failed}, v.score, v.sample_id LIMIT ?")
        return [row_to_verdict(r) for r in self.source._rows(sql, (*params, scorer, *below_params, n))]

    def check_results(self, scorer: str, item_id: str, n: int) -> tuple[int, int, list[tuple[Verdict, Evidence]]]:
        from rubriceval.report.source import FROM_RUN

        evidence = (f"{FROM_RUN} AND v.scorer = ? AND v.evidence_json != '[]' AND json_extract(e.value, '$.item') = ? "
                    "AND json_type(e.value, '$.passed') IN ('true', 'false')").replace(
            "WHERE", ", json_each(v.evidence_json) e WHERE", 1)
        counts = self.source._rows(f"SELECT COUNT(*), SUM(json_type(e.value, '$.passed') = 'false') {evidence}",
                                   (scorer, item_id))[0]
        rows = self.source._rows(f"SELECT v.*, e.value AS evidence {evidence} AND json_type(e.value, '$.passed') = "
                                 "'false' ORDER BY v.score IS NULL, COALESCE(v.score, 0), v.sample_id, "
                                 "d.position, e.key LIMIT ?", (scorer, item_id, n))
        return counts[0], counts[1] or 0, [(row_to_verdict(r), Evidence.model_validate_json(r["evidence"]))
                                           for r in rows]

    def unscored(self, scorer: str, n: int) -> list[Verdict]:
        return self._verdicts("AND v.scorer = ? AND v.score IS NULL ORDER BY d.position LIMIT ?", (scorer, n))
