"""Conformance with Ragas 0.4.3's DataCompyScore and LLMSQLEquivalence (tests/fixtures/reference/sql_metrics.jsonl,
written by benchmarks/pipeline/sql_conformance.py in its own venv). These tests need neither Ragas nor a server: our metrics run
again here on the same inputs — the demo database rebuilt from its SQL, the scripted judge answering what the
stub answered both sides — and must give Ragas's value, or differ exactly where the row declares why."""
from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from benchmarks.pipeline.sql_conformance import to_csv
from rubriceval import Sample
from rubriceval.standard_metrics import score_sample
from rubriceval.standard_metrics.sql.readonly import run_query
from rubriceval.testing.scripted_judge import ScriptedJudge
from tests.fixture_files import fixture_path
from tests.standard_metrics.test_nl2sql_readonly import build_orders_db

ROWS = [json.loads(line) for line in fixture_path("reference", "sql_metrics.jsonl").read_text(
    encoding="utf-8").splitlines() if line.strip()]
DATACOMPY = [r for r in ROWS if r["kind"] == "datacompy"]
EQUIVALENCE = [r for r in ROWS if r["kind"] == "sql_equivalence"]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_orders_db(tmp_path_factory.mktemp("nl2sql") / "orders.sqlite")


def agrees(ours: float | None, ragas: float | None) -> bool:
    return ours is not None and ragas is not None and math.isclose(ours, ragas, rel_tol=0, abs_tol=1e-12)


def test_the_fixture_covers_every_mode_and_metric_and_was_made_with_ragas_0_4_3():
    assert {(r["mode"], r["metric"]) for r in DATACOMPY} == {(m, k) for m in ("rows", "columns")
                                                             for k in ("precision", "recall", "f1")}
    assert len(DATACOMPY) >= 90 and len(EQUIVALENCE) >= 14
    assert {r["ragas"]["version"] for r in ROWS} == {"0.4.3"}
    assert sum(not r["difference"] for r in ROWS) >= 100


@pytest.mark.parametrize("row", DATACOMPY, ids=[r["key"] for r in DATACOMPY])
def test_datacompy_score_matches_ragas(row: dict, db: Path):
    # Ragas got exactly the tables our read-only runner returns today, as CSV.
    for side in ("generated", "reference"):
        table = run_query(db, row[side], timeout_s=5, row_cap=1000)
        assert to_csv(table.columns, table.rows) == row[f"{side}_csv"]
    sample = Sample(id=row["case"], question=row["note"], answer=row["generated"], ground_truth=row["reference"])
    options = {"sql": {"database": str(db), "mode": row["mode"], "metric": row["metric"]}}
    verdict = asyncio.run(score_sample(sample, ["datacompy_score"], options=options))[0]
    ragas = row["ragas"]["value"]
    if row["difference"]:
        assert not agrees(verdict.score, ragas), row["difference"]
        assert (verdict.score, verdict.unscored_kind) == (row["ours"]["score"], row["ours"]["unscored_kind"])
    else:
        assert agrees(verdict.score, ragas), f"ours {verdict.score} vs Ragas {ragas}"
    legacy = row["ragas"].get("legacy")
    if legacy is not None and not row["difference"]:
        assert agrees(verdict.score, legacy)       # where the legacy class has a value, it is the same


@pytest.mark.parametrize("row", EQUIVALENCE, ids=[r["key"] for r in EQUIVALENCE])
def test_llm_sql_equivalence_matches_ragas_given_the_same_judgment(row: dict, db: Path):
    sample = Sample(id=row["case"], question=row["question"], answer=row["answer"], ground_truth=row["ground_truth"],
                    reference_contexts=row["reference_contexts"], metadata={"database": str(db)})
    judge = ScriptedJudge({"sql_equivalence": row["judge_answer"]})
    verdict = asyncio.run(score_sample(sample, ["llm_sql_equivalence"], judge=judge))[0]
    assert verdict.details.get("decided_by") == row["ours"]["decided_by"]
    assert len(judge.requests) == row["ours"]["calls"]
    ragas = row["ragas"]["value"]
    if row["difference"]:
        assert not agrees(verdict.score, ragas), row["difference"]
        assert verdict.unscored_kind == row["ours"]["unscored_kind"]
    else:
        assert agrees(verdict.score, ragas), f"ours {verdict.score} vs Ragas {ragas}"


def test_the_precheck_saves_calls_on_the_demo_set():
    demo = [r for r in EQUIVALENCE if r["case"].startswith("sql-")]
    assert len(demo) == 14
    assert sum(r["ours"]["calls"] for r in demo) == 7            # Ragas asks the LLM 14 times
