"""datacompy_score: rows/columns × precision/recall/f1 on hand-counted tables, then end to end on the order database."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rubriceval import Sample
from rubriceval.standard_metrics import datacompy_score as dc
from rubriceval.standard_metrics.context import MetricContext, MetricResult, Unscorable
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.sql.readonly import ResultTable
from tests.standard_metrics.test_nl2sql_readonly import digest, orders_db  # noqa: F401 — fixture

REFERENCE = ResultTable(columns=["id", "name", "city"], rows=[(1, "张伟", "上海"), (2, "王芳", "北京"),
                                                               (3, "李娜", "杭州"), (4, "刘洋", "上海")])
# Row 0 equal, row 1 differs in city, row 2 equal; no row 3; one extra column; "NAME" matches "name".
GENERATED = ResultTable(columns=["id", "NAME", "city", "level"], rows=[(1, "张伟", "上海", "金卡"),
                                                                      (2, "王芳", "广州", "银卡"),
                                                                      (3.0, "李娜", "杭州", "普通")])


def test_comparison_counts_by_position_on_shared_columns():
    c = dc.compare_tables(REFERENCE, GENERATED)
    assert c.shared_columns == ["id", "name", "city"]
    assert (c.reference_rows, c.generated_rows, c.matching_rows) == (4, 3, 2)   # rows 0 and 2 (3 == 3.0)
    assert c.matching_columns == ["id", "name"]                                 # city differs in row 1


@pytest.mark.parametrize("mode, metric, expected", [
    ("rows", "precision", 2 / 3), ("rows", "recall", 2 / 4), ("rows", "f1", 2 * (2 / 3 * 0.5) / (2 / 3 + 0.5)),
    ("columns", "precision", 2 / 4), ("columns", "recall", 2 / 3), ("columns", "f1", 2 * (0.5 * 2 / 3) / (0.5 + 2 / 3)),
])
def test_modes_and_metrics(mode: str, metric: str, expected: float):
    precision, recall = dc.precision_recall(dc.compare_tables(REFERENCE, GENERATED), mode)
    value = {"precision": precision, "recall": recall, "f1": dc.f1(precision, recall)}[metric]
    assert value == pytest.approx(expected, abs=1e-12)


def test_no_shared_column_counts_every_overlapping_row_as_matching_like_datacompy():
    other = ResultTable(columns=["x"], rows=[(9,), (9,)])
    c = dc.compare_tables(REFERENCE, other)
    assert c.shared_columns == [] and c.matching_rows == 2 and c.matching_columns == []


def test_duplicate_and_case_folded_column_names_are_numbered_like_pandas():
    assert dc.column_keys(["id", "ID", "Id", "id.1"]) == ["id", "id.1", "id.2", "id.1.1"]


def test_values_compare_as_sqlite_returns_them():
    a = ResultTable(columns=["v"], rows=[(None,), (1,), ("1",), (b"\x00",), ("",)])
    b = ResultTable(columns=["v"], rows=[(None,), (1.0,), (1,), (b"\x00",), (None,)])
    assert dc.compare_tables(a, b).matching_rows == 3     # NULL=NULL, 1=1.0, blob=blob; '1'≠1, ''≠NULL


def test_f1_is_zero_when_nothing_matches():
    assert dc.f1(0.0, 0.0) == 0.0


# ── end to end on the demo database ─────────────────────────────────────────────────────────────────────────────

def score(db: Path, answer: str, ground_truth: str, **sql) -> MetricResult | Unscorable:
    sample = Sample(id="s", question="已发货的订单有哪些？", answer=answer, ground_truth=ground_truth,
                    metadata={"database": str(db)})
    outcome, usage = asyncio.run(dc.run(MetricContext(sample, MetricOptions(sql=sql), "zh"), None))
    assert usage.calls == 0
    return outcome


SHIPPED = "SELECT id FROM orders WHERE status = '已发货' ORDER BY id"          # 1002, 1010, 1012
SHIPPED_OR_DELIVERED = "SELECT id FROM orders WHERE status IN ('已发货', '已签收') ORDER BY id"


def test_equivalent_queries_score_one(orders_db: Path):
    result = score(orders_db, "select o.ID from orders o where o.status='已发货' order by 1", SHIPPED)
    assert isinstance(result, MetricResult) and result.score == 1.0
    assert result.details["precision"] == result.details["recall"] == 1.0


def test_a_wrong_filter_is_scored_by_position(orders_db: Path):
    # Reference (shipped or delivered): 1001 1002 1003 1009 1010 1011 1012 1014 1016 1018; generated: 1002 1010 1012.
    result = score(orders_db, SHIPPED, SHIPPED_OR_DELIVERED, metric="recall")
    assert isinstance(result, MetricResult)
    assert result.details["reference_rows"] == 10 and result.details["generated_rows"] == 3
    assert result.score == 0.0          # by position no row lines up (1001 vs 1002, …)


def test_columns_mode_on_the_database(orders_db: Path):
    generated = "SELECT id, total_amount FROM orders WHERE status = '已发货' ORDER BY id"
    result = score(orders_db, generated, SHIPPED, mode="columns", metric="precision")
    assert isinstance(result, MetricResult) and result.score == 0.5   # id matches; total_amount is extra


def test_one_side_empty_scores_zero_both_empty_is_unscored(orders_db: Path):
    nothing = "SELECT id FROM orders WHERE status = '不存在'"
    assert score(orders_db, nothing, SHIPPED).score == 0.0
    assert score(orders_db, SHIPPED, nothing).score == 0.0
    both = score(orders_db, nothing, nothing)
    assert isinstance(both, Unscorable) and both.kind == "no_statements"
    assert score(orders_db, nothing, nothing, mode="columns").score == 1.0   # same columns, no row disagrees


@pytest.mark.parametrize("answer, problem, kind", [
    ("DROP TABLE orders", "not_read_only", "error"),
    ("UPDATE orders SET status = '已取消'", "not_read_only", "error"),
    ("ATTACH DATABASE 'x.sqlite' AS x", "not_read_only", "error"),
    ("SELECT id FROM orders; DELETE FROM refunds", "multiple_statements", "error"),
    ("SELEC id FROM orders", "syntax_error", "error"),
    ("SELECT nonexistent FROM orders", "failed", "error"),
    ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n", "timeout", "timeout"),
    ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n", "row_cap", "error"),
])
def test_bad_generated_sql_is_unscored_with_the_reason_and_the_file_is_unchanged(orders_db: Path, answer: str,
                                                                                 problem: str, kind: str):
    before = digest(orders_db)
    result = score(orders_db, answer, SHIPPED, timeout_s=0.3, row_cap=100)
    assert isinstance(result, Unscorable)
    assert (result.kind, result.details["sql_problem"], result.details["side"]) == (kind, problem, "generated")
    assert "生成的 SQL" in result.reason
    assert digest(orders_db) == before


def test_a_broken_reference_is_blamed_on_the_reference(orders_db: Path):
    result = score(orders_db, SHIPPED, "SELECT id FROM nowhere")
    assert isinstance(result, Unscorable) and result.details["side"] == "reference"


def test_database_from_the_option_and_missing_database(orders_db: Path, tmp_path: Path):
    sample = Sample(id="s", question="q", answer=SHIPPED, ground_truth=SHIPPED)
    with_option = MetricOptions(sql={"database": str(orders_db)})
    assert asyncio.run(dc.run(MetricContext(sample, with_option, "en"), None))[0].score == 1.0
    missing, _ = asyncio.run(dc.run(MetricContext(sample, MetricOptions(), "en"), None))
    assert isinstance(missing, Unscorable) and missing.kind == "missing_field"
    gone = MetricOptions(sql={"database": str(tmp_path / "gone.sqlite")})
    not_found, _ = asyncio.run(dc.run(MetricContext(sample, gone, "en"), None))
    assert isinstance(not_found, Unscorable) and "not found" in not_found.reason
