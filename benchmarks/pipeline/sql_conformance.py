"""Ragas's NL2SQL metrics on the inputs ours sees → tests/fixtures/reference/sql_metrics.jsonl

    .venv/bin/python benchmarks/pipeline/sql_conformance.py        # creates benchmarks/pipeline/.venv-ragas-sql-0.4.3 once (pip)

datacompy_score: Ragas's DataCompyScore compares two CSV texts, not SQL. Each case's two queries run through our
read-only runner (`standard_metrics/sql/readonly.py`) on the demo order database (built from datasets/nl2sql/
orders.sql into a temporary file); the two result tables go to Ragas as CSV (Python's csv module, NULL → empty
cell) and to our metric as they are, for every mode × metric. Ragas is run twice: the legacy
`ragas.metrics.DataCompyScore` and the modern `ragas.metrics.collections.DataCompyScore`; ours is held to the
modern one (they differ only where the legacy one divides by zero).

llm_sql_equivalence: both sides ask the loopback stub server (rubriceval/testing/stub_server.py), which answers
from the case's scripted verdict — Ragas's LLMSQLEquivalence prompt (recognised by its output schema's title, as
benchmarks/pipeline/responder.py does) with its own JSON, ours (schema name `sql_equivalence`) with {"feedback", "score"} —
so both see the same judgment. Both read the same schema text (the database's CREATE statements as the one
reference context). Our side runs the real judge path (JudgeClient over HTTP, no cache); what our pre-check
decides costs no call, which the row records.

Every row holds Ragas's value and ours. A row where they differ must declare the difference (documented in
standard_metrics/README.md); an undeclared difference, a declared one that no longer shows, or a Ragas error
stops the script before anything is written. Tests (tests/standard_metrics/test_nl2sql_conformance.py) replay the rows with the
scripted judge and need neither Ragas nor a server.

The same file is the Ragas side: `--ragas-side` (run by this script with the Ragas venv's python) imports only
the standard library and Ragas.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RAGAS_REQUIREMENTS = "sql-0.4.3"
RAGAS_VERSION = "0.4.3"
OUT = REPO / "tests" / "fixtures" / "reference" / "sql_metrics.jsonl"
DEMO = REPO / "datasets" / "demo_nl2sql_zh.jsonl"
MODES = ("rows", "columns")
METRICS = ("precision", "recall", "f1")

TEXT_VS_NUMBER = ("Ragas reads both tables back from CSV, so text '1' and the number 1 are the same cell; ours "
                  "compares the values SQLite returns, where they differ")
EMPTY_VS_NULL = "in CSV an empty string and NULL are both an empty cell (NaN to pandas); ours tells '' from NULL"
BOTH_EMPTY = ("neither query returns a row: Ragas 0.4.3 scores 0.0 (legacy: division by zero → NaN); ours is "
              "unscored no_statements — identical empty results are not a wrong answer")
SYNTAX_ERROR = ("the generated SQL does not parse: Ragas still asks the LLM (here: not equivalent → 0); ours is "
                "unscored with sqlglot's line/column and makes no call")

# Each case: id, note, generated, reference; `differences` maps a mode (datacompy) to the declared reason.
DATACOMPY_CASES: list[dict] = [
    {"id": "same_rows", "note": "identical result, different spelling",
     "generated": "select o.id from orders o where o.status='已发货' order by o.id",
     "reference": "SELECT id FROM orders WHERE status = '已发货' ORDER BY id"},
    {"id": "missing_row", "note": "one reference row missing: positions 0-1 align, then shift",
     "generated": "SELECT id FROM orders WHERE carrier = '顺丰' AND status = '已签收' ORDER BY id",
     "reference": "SELECT id FROM orders WHERE carrier = '顺丰' ORDER BY id"},
    {"id": "extra_column", "note": "the generated query adds a column",
     "generated": "SELECT id, total_amount FROM orders WHERE status = '已发货' ORDER BY id",
     "reference": "SELECT id FROM orders WHERE status = '已发货' ORDER BY id"},
    {"id": "renamed_aggregate", "note": "same values, the aggregate column named differently",
     "generated": "SELECT city, AVG(total_amount) FROM customers JOIN orders ON orders.customer_id = customers.id "
                  "GROUP BY city ORDER BY city",
     "reference": "SELECT c.city, AVG(o.total_amount) AS avg_amount FROM orders o JOIN customers c "
                  "ON o.customer_id = c.id GROUP BY c.city ORDER BY c.city"},
    {"id": "wrong_aggregate", "note": "COUNT instead of SUM: both columns differ",
     "generated": "SELECT category, COUNT(quantity) AS total FROM items GROUP BY category ORDER BY total DESC, "
                  "category LIMIT 1",
     "reference": "SELECT category, SUM(quantity) AS total FROM items GROUP BY category ORDER BY total DESC, "
                  "category LIMIT 1"},
    {"id": "missing_filter", "note": "filter left out: more rows, none aligned",
     "generated": "SELECT DISTINCT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
                  "JOIN refunds r ON r.order_id = o.id ORDER BY c.name",
     "reference": "SELECT DISTINCT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
                  "JOIN refunds r ON r.order_id = o.id WHERE r.status = '处理中' ORDER BY c.name"},
    {"id": "generated_empty", "note": "the generated query returns no row",
     "generated": "SELECT id FROM orders WHERE status = '不存在'",
     "reference": "SELECT id FROM orders WHERE status = '已发货' ORDER BY id"},
    {"id": "reference_empty", "note": "the reference returns no row",
     "generated": "SELECT id FROM orders WHERE status = '已发货' ORDER BY id",
     "reference": "SELECT id FROM orders WHERE status = '不存在'"},
    {"id": "both_empty", "note": "neither returns a row", "differences": {"rows": BOTH_EMPTY},
     "generated": "SELECT id FROM orders WHERE status = '不存在'",
     "reference": "SELECT id FROM orders WHERE total_amount < 0"},
    {"id": "nulls", "note": "NULL cells on both sides compare equal",
     "generated": "SELECT id, delivered_at AS shipped_at FROM orders WHERE customer_id = 3 ORDER BY id",
     "reference": "SELECT id, shipped_at FROM orders WHERE customer_id = 3 ORDER BY id"},
    {"id": "int_vs_real", "note": "an integer sum and the same sum as REAL",
     "generated": "SELECT category, SUM(quantity * 1.0) AS n FROM items GROUP BY category ORDER BY category",
     "reference": "SELECT category, SUM(quantity) AS n FROM items GROUP BY category ORDER BY category"},
    {"id": "column_case", "note": "column names differ only in case",
     "generated": "SELECT id AS ID, name AS Name FROM customers WHERE level = '金卡' ORDER BY id",
     "reference": "SELECT id, name FROM customers WHERE level = '金卡' ORDER BY id"},
    {"id": "duplicate_columns", "note": "two columns called id (pandas: id, id.1)",
     "generated": "SELECT o.id, c.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id < 1004 "
                  "ORDER BY o.id",
     "reference": "SELECT o.id, c.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id < 1004 "
                  "ORDER BY o.id"},
    {"id": "columns_swapped", "note": "same columns in another order (compared by name)",
     "generated": "SELECT city, name FROM customers ORDER BY id",
     "reference": "SELECT name, city FROM customers ORDER BY id"},
    {"id": "order_reversed", "note": "same rows in reverse order: positions decide",
     "generated": "SELECT name FROM customers WHERE city = '上海' ORDER BY id DESC",
     "reference": "SELECT name FROM customers WHERE city = '上海' ORDER BY id"},
    {"id": "text_vs_number", "note": "text '1' against the number 1",
     "differences": {"rows": TEXT_VS_NUMBER, "columns": TEXT_VS_NUMBER},
     "generated": "SELECT '1' AS v", "reference": "SELECT 1 AS v"},
    {"id": "empty_text_vs_null", "note": "'' against NULL", "differences": {"rows": EMPTY_VS_NULL,
                                                                         "columns": EMPTY_VS_NULL},
     "generated": "SELECT '' AS v", "reference": "SELECT NULL AS v"},
]

# Beyond the demo rows: cases the pre-check decides and one it must not.
EXTRA_EQUIVALENCE_CASES: list[dict] = [
    {"id": "star_vs_columns", "question": "上海的客户资料", "verdict": True,
     "answer": "SELECT * FROM customers WHERE city = '上海'",
     "ground_truth": "SELECT id, name, phone, city, level, created_at FROM customers WHERE '上海' = city"},
    {"id": "literal_case", "question": "状态为 x 的订单", "verdict": False,
     "answer": "SELECT id FROM orders WHERE status = 'X'", "ground_truth": "SELECT id FROM orders WHERE status = 'x'"},
    {"id": "limit_differs", "question": "最近 3 个订单", "verdict": False,
     "answer": "SELECT id FROM orders ORDER BY created_at DESC LIMIT 5",
     "ground_truth": "SELECT id FROM orders ORDER BY created_at DESC LIMIT 3"},
]
WRONG_IDS = {"sql-sf-orders", "sql-top-category", "sql-refund-customers", "sql-shanghai-count",
             "sql-status-injection", "sql-update-attempt", "sql-attach-attempt"}


def equivalence_cases() -> list[dict]:
    """The demo rows with the verdict a correct judge gives (only the wrong ones are not equivalent), plus extras."""
    demo = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases = [{"id": r["id"], "question": r["question"], "answer": r["answer"], "ground_truth": r["ground_truth"],
              "verdict": r["id"] not in WRONG_IDS} for r in demo] + EXTRA_EQUIVALENCE_CASES
    for case in cases:
        case["difference"] = SYNTAX_ERROR if case["id"] == "sql-shanghai-count" else None
    return cases


def feedback_for(case: dict) -> str:
    return ("两条 SQL 在同一数据库上返回相同的结果。" if case["verdict"]
            else "两条 SQL 的逻辑不同，返回的结果不一样。")


def our_answer(case: dict) -> dict:
    return {"feedback": feedback_for(case), "score": int(case["verdict"])}


def ragas_answer(case: dict) -> dict:
    return {"response_query_explaination": feedback_for(case), "reference_query_explaination": feedback_for(case),
            "equivalence": case["verdict"]}


def to_csv(columns: list[str], rows: list[tuple]) -> str:
    """A result table as Ragas's DataCompyScore takes it: a CSV text with a header, NULL as an empty cell."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([["" if v is None else v for v in row] for row in rows])
    return out.getvalue()


# ── Ragas side (inside the Ragas venv: standard library + Ragas only) ──────────────────────────────────────────

def _ragas_side(cases_path: str, base_url: str) -> None:
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    import warnings

    from langchain_openai import ChatOpenAI
    from ragas import __version__ as ragas_version
    from ragas.dataset_schema import SingleTurnSample
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import DataCompyScore as LegacyDataCompyScore
    from ragas.metrics import LLMSQLEquivalence
    from ragas.metrics.collections import DataCompyScore

    chat = ChatOpenAI(model="stub", base_url=base_url, api_key="not-needed", temperature=0, max_retries=0,
                      timeout=60)
    llm = LangchainLLMWrapper(chat)

    async def one(case: dict) -> dict:
        if case["kind"] == "datacompy":
            modern = await DataCompyScore(mode=case["mode"], metric=case["metric"]).ascore(
                reference=case["reference_csv"], response=case["generated_csv"])
            try:
                legacy = await LegacyDataCompyScore(mode=case["mode"], metric=case["metric"]).single_turn_ascore(
                    SingleTurnSample(response=case["generated_csv"], reference=case["reference_csv"]))
                legacy_value, legacy_error = float(legacy), None
            except Exception as exc:  # noqa: BLE001 — the legacy class divides by zero on empty tables
                legacy_value, legacy_error = None, f"{type(exc).__name__}: {exc}"[:200]
            return {"value": _number(modern.value), "legacy": _number(legacy_value), "legacy_error": legacy_error}
        value = await LLMSQLEquivalence(llm=llm).single_turn_ascore(SingleTurnSample(
            response=case["answer"], reference=case["ground_truth"], reference_contexts=case["reference_contexts"]))
        return {"value": _number(value)}

    async def run_all(cases: list[dict]) -> tuple[dict, dict]:
        values, errors = {}, {}
        for case in cases:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    values[case["key"]] = await one(case)
            except Exception as exc:  # noqa: BLE001 — reported; the orchestrator refuses to write on errors
                errors[case["key"]] = f"{type(exc).__name__}: {exc}"[:300]
        return values, errors

    with open(cases_path, encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    values, errors = asyncio.run(run_all(cases))
    print(json.dumps({"ragas_version": ragas_version, "values": values, "errors": errors}, ensure_ascii=False))


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


# ── project side ─────────────────────────────────────────────────────────────────────────────────────────────

_GENERATED_BLOCK = re.compile(r"<<<(?:生成的SQL|GENERATED SQL)>>>\n(.*?)\n<<<END (?:生成的SQL|GENERATED SQL)>>>", re.S)


def make_responder(cases: list[dict]):
    """The stub's answer to either side, from the scripted verdict of the case whose generated SQL is asked about."""
    sys.path.insert(0, str(REPO))
    from benchmarks.pipeline.responder import prompt_text, ragas_prompt_parts

    by_sql = {c["answer"].strip(): c for c in cases}

    def respond(body: dict) -> dict:
        text = prompt_text(body)
        if ((body.get("response_format") or {}).get("type")) == "json_schema":
            return our_answer(by_sql[_GENERATED_BLOCK.findall(text)[-1].strip()])
        parts = ragas_prompt_parts(text)
        if parts is None or parts[0] != "EquivalenceOutput":
            raise ValueError(f"neither our call nor Ragas's equivalence prompt: {text[:160]!r}")
        return ragas_answer(by_sql[parts[1]["response"].strip()])
    return respond


def _key(*parts: str) -> str:
    return "|".join(parts)


def _run_ragas(base_url: str, rows: list[dict]) -> dict[str, dict]:
    from benchmarks.pipeline.ragas_env import run_ragas_side

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        f.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return run_ragas_side(RAGAS_REQUIREMENTS, Path(__file__).resolve(), "--ragas-side", "--cases", f.name,
                          "--base-url", base_url)["values"]


def _check(key: str, ragas: float | None, ours: float | None, difference: str | None) -> None:
    same = ragas is not None and ours is not None and math.isclose(ragas, ours, rel_tol=0, abs_tol=1e-12)
    if not same and not difference:
        raise SystemExit(f"{key}: ragas {ragas} vs ours {ours} differ and no difference is declared")
    if same and difference:
        raise SystemExit(f"{key}: declared difference {difference!r} but both give {ragas}")


async def _project_side(base_url: str, db: Path, schema_text: str, eq_cases: list[dict]) -> tuple[list, list]:
    from rubriceval import JudgeConfig, Sample
    from rubriceval.judge.client import JudgeClient
    from rubriceval.standard_metrics import score_sample
    from rubriceval.standard_metrics.sql.readonly import run_query

    datacompy_rows = []
    for case in DATACOMPY_CASES:
        tables = {side: run_query(db, case[side], timeout_s=5, row_cap=1000) for side in ("generated", "reference")}
        sample = Sample(id=case["id"], question=case["note"], answer=case["generated"], ground_truth=case["reference"])
        for mode in MODES:
            for metric in METRICS:
                options = {"sql": {"database": str(db), "mode": mode, "metric": metric}}
                verdict = (await score_sample(sample, ["datacompy_score"], options=options))[0]
                datacompy_rows.append({
                    "key": _key("datacompy_score", case["id"], mode, metric), "kind": "datacompy",
                    "case": case["id"], "note": case["note"], "mode": mode, "metric": metric,
                    "generated": case["generated"], "reference": case["reference"],
                    "generated_csv": to_csv(tables["generated"].columns, tables["generated"].rows),
                    "reference_csv": to_csv(tables["reference"].columns, tables["reference"].rows),
                    "difference": case.get("differences", {}).get(mode),
                    "ours": {"score": verdict.score, "unscored_kind": verdict.unscored_kind}})
    judge = JudgeClient(JudgeConfig(base_url=base_url, model="stub", cache=False, max_retries=0))
    equivalence_rows = []
    try:
        for case in eq_cases:
            sample = Sample(id=case["id"], question=case["question"], answer=case["answer"],
                            ground_truth=case["ground_truth"], reference_contexts=[schema_text],
                            metadata={"database": str(db)})
            verdict = (await score_sample(sample, ["llm_sql_equivalence"], judge=judge))[0]
            equivalence_rows.append({
                "key": _key("llm_sql_equivalence", case["id"]), "kind": "sql_equivalence", "case": case["id"],
                "question": case["question"], "answer": case["answer"], "ground_truth": case["ground_truth"],
                "reference_contexts": [schema_text], "scripted_verdict": case["verdict"],
                "judge_answer": our_answer(case), "ragas_judge_answer": ragas_answer(case),
                "difference": case["difference"],
                "ours": {"score": verdict.score, "unscored_kind": verdict.unscored_kind,
                         "decided_by": verdict.details.get("decided_by"), "calls": verdict.usage.calls}})
    finally:
        await judge.close()
    return datacompy_rows, equivalence_rows


def main() -> None:
    sys.path.insert(0, str(REPO))
    from rubriceval.standard_metrics.sql.readonly import read_schema
    from rubriceval.testing.stub_server import StubServer

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "orders.sqlite"
        subprocess.run([sys.executable, str(REPO / "datasets" / "nl2sql" / "build_orders_db.py"), "--out", str(db)],
                       check=True, capture_output=True)
        schema_text = "\n\n".join(read_schema(db)[1])
        eq_cases = equivalence_cases()
        with StubServer(responder=make_responder(eq_cases)) as stub:
            datacompy_rows, equivalence_rows = asyncio.run(_project_side(stub.base_url, db, schema_text, eq_cases))
            ragas = _run_ragas(stub.base_url, datacompy_rows + equivalence_rows)
            if stub.stats.errors:
                raise SystemExit("the stub could not answer:\n" + "\n".join(stub.stats.errors[:5]))
    rows = datacompy_rows + equivalence_rows
    for row in rows:
        row["ragas"] = {**ragas[row["key"]], "version": RAGAS_VERSION}
        _check(row["key"], row["ragas"]["value"], row["ours"]["score"], row["difference"])
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    differing = [r for r in rows if r["difference"]]
    judged = sum(r["ours"]["calls"] for r in equivalence_rows)
    print(f"{len(rows)} rows → {OUT.relative_to(REPO)}: {len(rows) - len(differing)} equal to Ragas {RAGAS_VERSION}, "
          f"{len(differing)} declared differences; llm_sql_equivalence made {judged} judge calls for "
          f"{len(equivalence_rows)} samples (Ragas: {len(equivalence_rows)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ragas-side", action="store_true", help="internal: run Ragas (inside its venv)")
    parser.add_argument("--cases")
    parser.add_argument("--base-url")
    args = parser.parse_args()
    if args.ragas_side:
        _ragas_side(args.cases, args.base_url)
    else:
        main()
