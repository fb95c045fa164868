"""datacompy_score — Ragas's DataCompyScore on the result tables of the generated and the reference SQL.

Both queries run against the sample's database (read-only, timeout, row cap: `sql/readonly.py`); the two result
tables are compared as Ragas does with `datacompy.Compare(reference, response, on_index=True)`:

    rows     row i of one table is compared with row i of the other (by position: give the reference an ORDER BY);
             a row matches when every column the two tables share (names case-insensitive) holds equal values
             recall    = matching rows / reference rows        precision = matching rows / generated rows
    columns  a shared column matches when all its values agree over the rows both tables have
             recall    = matching columns / reference columns  precision = matching columns / generated columns

    f1 = 2·precision·recall / (precision + recall), 0 when both are 0

Values are compared as SQLite returns them: NULL = NULL, 1 = 1.0, text and blobs exactly. Options:
`sql.mode` (rows | columns), `sql.metric` (precision | recall | f1), `sql.database`, `sql.timeout_s`, `sql.row_cap`.

Edge cases: a side with no rows gives 0 for the ratio it divides (as Ragas 0.4.3); both sides without rows in
rows mode → unscored "no_statements" (0/0: nothing to compare). A query that is not one read-only SELECT/WITH,
fails, times out or exceeds the row cap → unscored with the reason, naming the side; it never runs with write
access. Why not the `datacompy` package: it needs pandas < 3.1 (ours is newer) and polars, for a count this
module does in a dozen lines over plain tuples; the conformance fixtures pin the two to the same numbers.
"""
from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from pydantic import BaseModel

from rubriceval.core.verdict import Usage
from rubriceval.standard_metrics.context import MetricContext, MetricResult, Unscorable
from rubriceval.standard_metrics.protocols import Judge
from rubriceval.standard_metrics.sql.options import DatacompyMetric, DatacompyMode
from rubriceval.standard_metrics.sql.readonly import ResultTable, run_query
from rubriceval.standard_metrics.sql.source import checked_pair, required_database, sql_unscorable
from rubriceval.standard_metrics.sql.spec import Outcome, SelfRunMetricSpec
from rubriceval.standard_metrics.sql.statement import SqlProblem

NAME = "datacompy_score"


class TableComparison(BaseModel):
    reference_rows: int
    generated_rows: int
    matching_rows: int                 # over the positions both tables have, on the shared columns
    reference_columns: list[str]       # lower-cased, duplicates numbered like pandas ("id", "id.1")
    generated_columns: list[str]
    shared_columns: list[str]
    matching_columns: list[str]        # shared columns equal on every position both tables have


def column_keys(columns: list[str]) -> list[str]:
    """Lower-cased names, a repeated name numbered as pandas.read_csv numbers it (id, id.1, id.2)."""
    counts: dict[str, int] = defaultdict(int)
    keys = []
    for name in (c.lower() for c in columns):
        seen = counts[name]
        while seen > 0:
            counts[name] = seen + 1
            name = f"{name}.{seen}"
            seen = counts[name]
        counts[name] = seen + 1
        keys.append(name)
    return keys


def compare_tables(reference: ResultTable, generated: ResultTable) -> TableComparison:
    ref_keys, gen_keys = column_keys(reference.columns), column_keys(generated.columns)
    shared = [key for key in ref_keys if key in gen_keys]
    ref_at = {key: i for i, key in enumerate(ref_keys)}
    gen_at = {key: i for i, key in enumerate(gen_keys)}
    both = range(min(len(reference.rows), len(generated.rows)))

    def equal(row: int, key: str) -> bool:
        a: Any = reference.rows[row][ref_at[key]]
        b: Any = generated.rows[row][gen_at[key]]
        return a == b            # NULL == NULL, 1 == 1.0; '1' ≠ 1 (see the README)

    return TableComparison(
        reference_rows=len(reference.rows), generated_rows=len(generated.rows),
        matching_rows=sum(all(equal(row, key) for key in shared) for row in both),
        reference_columns=ref_keys, generated_columns=gen_keys, shared_columns=shared,
        matching_columns=[key for key in shared if all(equal(row, key) for row in both)])


def precision_recall(comparison: TableComparison, mode: DatacompyMode) -> tuple[float, float]:
    c = comparison
    if mode == "rows":
        recall = c.matching_rows / c.reference_rows if c.reference_rows > 0 else 0.0
        precision = c.matching_rows / c.generated_rows if c.generated_rows > 0 else 0.0
    else:
        recall = len(c.matching_columns) / len(c.reference_columns)
        precision = len(c.matching_columns) / len(c.generated_columns)
    return precision, recall


def f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * (precision * recall) / (precision + recall)


def _score(ctx: MetricContext, comparison: TableComparison, mode: DatacompyMode,
           metric: DatacompyMetric) -> MetricResult:
    c = comparison
    if mode == "rows" and c.reference_rows == 0 and c.generated_rows == 0:
        raise Unscorable("no_statements", ctx.text("两条 SQL 都没有返回任何行：逐行对比无从计算（0/0），可改用 columns 模式",
                                                   "neither query returns a row: a row-wise comparison is 0/0 "
                                                   "(use mode=columns)"), details=c.model_dump())
    precision, recall = precision_recall(c, mode)
    score = {"precision": precision, "recall": recall, "f1": f1(precision, recall)}[metric]
    if mode == "rows":
        feedback = ctx.text(
            f"逐行对比：参考结果 {c.reference_rows} 行，生成结果 {c.generated_rows} 行，其中 {c.matching_rows} 行一致"
            f"（共同列 {len(c.shared_columns)} 个）",
            f"row by row: {c.matching_rows} of {c.reference_rows} reference rows and {c.generated_rows} generated "
            f"rows match (on {len(c.shared_columns)} shared columns)")
    else:
        feedback = ctx.text(
            f"逐列对比：参考结果 {len(c.reference_columns)} 列，生成结果 {len(c.generated_columns)} 列，"
            f"其中 {len(c.matching_columns)} 列完全一致",
            f"column by column: {len(c.matching_columns)} of {len(c.reference_columns)} reference columns and "
            f"{len(c.generated_columns)} generated columns match")
    feedback += f"; precision {precision:.3f}, recall {recall:.3f} → {metric} {score:.3f}"
    return MetricResult(score=score, feedback=feedback,
                        details={"mode": mode, "metric": metric, "precision": precision, "recall": recall,
                                 **c.model_dump()})


async def run(ctx: MetricContext, judge: Judge | None) -> Outcome:
    """Run both queries (the reference first) in a worker thread, compare, score. Never asks the judge."""
    try:
        database = required_database(ctx, NAME)
        pair = checked_pair(ctx)
        limits = ctx.options.sql
        tables: dict[str, ResultTable] = {}
        for side, sql in (("reference", pair.reference_sql), ("generated", pair.generated_sql)):
            try:
                tables[side] = await asyncio.to_thread(run_query, database, sql, timeout_s=limits.timeout_s,
                                                       row_cap=limits.row_cap)
            except SqlProblem as failed:
                raise sql_unscorable(ctx, side, failed.problem, failed.reason) from None
        comparison = compare_tables(tables["reference"], tables["generated"])
        return _score(ctx, comparison, limits.mode, limits.metric), Usage()
    except Unscorable as unscorable:
        return unscorable, Usage()


SPEC = SelfRunMetricSpec(
    name=NAME, family="sql", run=run, required_fields=("answer", "ground_truth"),
    summary="Ragas DataCompyScore: run generated + reference SQL read-only, compare result rows/columns "
            "(precision/recall/F1)")
