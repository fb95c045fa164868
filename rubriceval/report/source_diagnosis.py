"""The diagnosis's questions about a stored run's rows, answered in SQL (diagnosis._Index answers them in memory):
the lowest rows of a scorer, one row by key, rows low despite good retrieval, how often a check failed, the first
unscored rows. Only the few rows a finding shows are ever loaded."""
from __future__ import annotations

import heapq
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rubriceval.core.verdict import Evidence, Verdict
from rubriceval.report.diagnosis import DrivingSample, preview_question
from rubriceval.report.reversed_order import Reversed
from rubriceval.report.run_sql import FROM_RUN
from rubriceval.report.signal_checks import MAX_P_YES_ROWS, p_yes_by_question
from rubriceval.store.runs import row_to_verdict

if TYPE_CHECKING:
    from rubriceval.report.source import RunSource


class SqlIndex:
    def __init__(self, source: RunSource):
        self.source = source
        self._questions: dict[str, str] = {}
        self._checks: dict[str, dict[str, tuple[int, int, list[tuple]]]] = {}

    def _verdicts(self, sql: str, params: Sequence[object] = ()) -> list[Verdict]:
        return [row_to_verdict(r) for r in self.source.run_rows(f"SELECT v.* {FROM_RUN} {sql}", params)]

    def _question(self, sample_id: str) -> str:
        if sample_id not in self._questions:
            rows = self.source.run_rows(f"SELECT {self.source.sql.json_text('d.sample_json', '$.question')} FROM runs r "
                                        "JOIN dataset_samples d ON d.dataset_id = r.dataset_id WHERE r.run_id = ? AND d.sample_id = ?",
                                        (sample_id,))
            self._questions[sample_id] = (rows[0][0] or "") if rows else ""
        return self._questions[sample_id]

    def driving(self, verdict: Verdict, detail: str = "") -> DrivingSample:
        return DrivingSample(sample_id=verdict.sample_id, score=verdict.score,
                             question=preview_question(self._question(verdict.sample_id)),
                             detail=detail or preview_question(verdict.feedback))

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
        below, below_params = ("AND v.score < ?", [threshold]) if threshold is not None else ("", [])
        failed = f"CASE WHEN {' AND '.join(passes)} THEN 0 ELSE 1 END, " if passes else ""
        sql = (f"SELECT v.* {FROM_RUN.replace('WHERE', ' '.join(joins) + ' WHERE', 1)} AND v.scorer = ? "
               f"AND v.score IS NOT NULL {below} ORDER BY {failed}v.score, v.sample_id LIMIT ?")
        return [row_to_verdict(r) for r in self.source.run_rows(sql, (*params, scorer, *below_params, n))]

    def check_results(self, scorer: str, item_id: str, n: int) -> tuple[int, int, list[tuple[Verdict, Evidence]]]:
        """How often a check item was judged and failed on a rubric's rows, and the first n failures (unscored last,
        then by score and sample id). A rubric's rows are read once for all its items."""
        if scorer not in self._checks:
            self._checks[scorer] = self._read_checks(scorer, n)
        judged, failed, first = self._checks[scorer].get(item_id, (0, 0, []))
        keep = first[:n]
        rows = {r["sample_id"]: r for r in self.source.run_rows(
            "SELECT v.* FROM verdicts v WHERE v.run_id = ? AND v.scorer = ? AND v.sample_id IN "
            f"({','.join('?' * len(keep))})", (scorer, *(k[2] for k in keep)))} if keep else {}
        out = []
        for *_, sample_id, _, index in keep:
            verdict = row_to_verdict(rows[sample_id])
            out.append((verdict, verdict.evidence[index]))
        return judged, failed, out

    def _read_checks(self, scorer: str, n: int) -> dict[str, tuple[int, int, list[tuple]]]:
        """item → (judged, failed, the n first failures as sort keys) over every row of the rubric, one pass."""
        counts: dict[str, list[int]] = {}
        first: dict[str, list[Reversed]] = {}      # item → a heap of its n first failures' sort keys, reversed
        for rows in self.source.conn.stream(f"SELECT v.sample_id, v.score, v.evidence_json, d.position {FROM_RUN} "
                                            "AND v.scorer = ? AND v.evidence_json != '[]'",
                                            (self.source.run_id, scorer), 5000):
            for sample_id, score, evidence_json, position in rows:
                for index, e in enumerate(json.loads(evidence_json)):
                    passed = e.get("passed")
                    if passed is None:
                        continue
                    item = counts.setdefault(e.get("item"), [0, 0])
                    item[0] += 1
                    if passed is False:
                        item[1] += 1
                        # the order of the in-memory index: unscored last, score, sample id; then row, item order
                        key = (score is None, score or 0, sample_id, position, index)
                        heap = first.setdefault(e.get("item"), [])
                        if len(heap) < n:
                            heapq.heappush(heap, Reversed(key))
                        elif key < heap[0].value:
                            heapq.heapreplace(heap, Reversed(key))
        return {item: (c[0], c[1], sorted(r.value for r in first.get(item, []))) for item, c in counts.items()}

    def disagreements(self, a: str, b: str, gap: float, n: int) -> tuple[int, int, list[tuple[Verdict, Verdict]]]:
        """Rows scored by both scorers, those whose scores differ by ≥ gap, and the n widest (signal_checks.py)."""
        join = ("FROM verdicts v JOIN verdicts w ON w.run_id = v.run_id AND w.sample_id = v.sample_id "
                "AND w.scorer = ? WHERE v.run_id = ? AND v.scorer = ? AND v.score IS NOT NULL AND w.score IS NOT NULL")
        conn, run = self.source.conn, self.source.run_id
        both, far = conn.execute(f"SELECT COUNT(*), SUM(CASE WHEN ABS(v.score - w.score) >= ? THEN 1 ELSE 0 END) "
                                 f"{join}", (gap, b, run, a)).fetchall()[0]
        widest = conn.execute(f"SELECT v.sample_id {join} AND ABS(v.score - w.score) >= ? "
                              "ORDER BY ABS(v.score - w.score) DESC, v.sample_id LIMIT ?",
                              (b, run, a, gap, n)).fetchall()
        pairs = [(self.verdict(sid, a), self.verdict(sid, b)) for (sid,) in widest]
        return both or 0, far or 0, [(x, y) for x, y in pairs if x is not None and y is not None]

    def samples_differ(self, scorer: str) -> bool:
        """Stored samples are distinct rows of the dataset: assumed to differ."""
        return True

    def p_yes(self, scorer: str) -> dict[str, list[float]]:
        """p(yes) per checklist question over (at most MAX_P_YES_ROWS of) a rubric's rows."""
        return p_yes_by_question(self._verdicts("AND v.scorer = ? AND v.score IS NOT NULL ORDER BY d.position "
                                                "LIMIT ?", (scorer, MAX_P_YES_ROWS)))

    def unscored(self, scorer: str, n: int) -> list[Verdict]:
        return self._verdicts("AND v.scorer = ? AND v.score IS NULL ORDER BY d.position LIMIT ?", (scorer, n))
