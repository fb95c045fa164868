"""Where a sample's SQL metrics get their inputs: the two queries, the database, the schema.

- generated SQL = `sample.answer` (Ragas's `response`), reference SQL = `sample.ground_truth` (Ragas's `reference`);
  a ```sql fence around either is removed.
- database = the sample's own `database` field (a free column, so `Sample.metadata["database"]`) or else the
  `sql.database` option: a SQLite file, read from the current working directory when relative.
- schema shown to the judge = `reference_contexts` joined by newlines (as Ragas), else the CREATE statements read
  from the database; the table → columns map sqlglot qualifies with always comes from the database when there is one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict
from sqlglot import exp

from rubriceval.standard_metrics.context import MetricContext, Unscorable
from rubriceval.standard_metrics.sql.readonly import read_schema
from rubriceval.standard_metrics.sql.statement import Schema, SqlProblem, parse_query

Side = Literal["generated", "reference"]
DATABASE_FIELD = "database"


class SqlPair(BaseModel):
    """The two queries of a sample, each parsed and checked to be one read-only SELECT/WITH."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    generated_sql: str
    reference_sql: str
    generated: exp.Query
    reference: exp.Query


class SchemaInfo(BaseModel):
    text: str                              # what the judge reads ("" when neither source has one)
    origin: Literal["reference_contexts", "database", "none"]
    tables: Schema | None = None           # for sqlglot's qualify; None without a database


def side_label(ctx: MetricContext, side: Side) -> str:
    if side == "generated":
        return ctx.text("生成的 SQL（answer）", "the generated SQL (answer)")
    return ctx.text("参考 SQL（ground_truth）", "the reference SQL (ground_truth)")


def sql_unscorable(ctx: MetricContext, side: Side, problem: str, reason: str) -> Unscorable:
    kind = "timeout" if problem == "timeout" else "error"
    return Unscorable(kind, f"{side_label(ctx, side)}: {reason}", details={"sql_problem": problem, "side": side})


def checked_query(ctx: MetricContext, side: Side) -> tuple[str, exp.Query]:
    """(text, parsed query) of one side; `Unscorable` naming the side when it is not one read-only query."""
    text = ctx.sample.answer if side == "generated" else ctx.sample.ground_truth
    try:
        return text, parse_query(text)
    except SqlProblem as problem:
        raise sql_unscorable(ctx, side, problem.problem, problem.reason) from None


def checked_pair(ctx: MetricContext) -> SqlPair:
    """Both queries, the reference first (a broken reference is the dataset's problem, whatever the answer)."""
    reference_sql, reference = checked_query(ctx, "reference")
    generated_sql, generated = checked_query(ctx, "generated")
    return SqlPair(generated_sql=generated_sql, reference_sql=reference_sql, generated=generated,
                   reference=reference)


def database_of(ctx: MetricContext) -> Path | None:
    """The sample's database file, or None when neither the sample nor the options name one."""
    raw = ctx.sample.metadata.get(DATABASE_FIELD) or ctx.options.sql.database
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise Unscorable("missing_field", ctx.text(f"字段 {DATABASE_FIELD} 应为 SQLite 文件路径，实际为 {raw!r}",
                                                   f"field {DATABASE_FIELD!r} must be a SQLite file path, got {raw!r}"))
    return Path(raw.strip()).expanduser()


def required_database(ctx: MetricContext, metric: str) -> Path:
    database = database_of(ctx)
    if database is None:
        raise Unscorable("missing_field", ctx.text(
            f"{metric} 需要数据库：在数据集中加一列 {DATABASE_FIELD}（SQLite 文件路径），或设置选项 sql.database",
            f"{metric} needs a database: a {DATABASE_FIELD!r} column (SQLite file) in the dataset, or the "
            "sql.database option"))
    if not database.is_file():
        raise Unscorable("error", ctx.text(f"找不到数据库文件：{database}", f"database file not found: {database}"),
                         details={"sql_problem": "no_database"})
    return database


def schema_of(ctx: MetricContext) -> SchemaInfo:
    """The schema text for the judge ("" when there is none) and the database's tables for sqlglot."""
    database = database_of(ctx)
    tables: Schema | None = None
    ddl: list[str] = []
    if database is not None:
        try:
            tables, ddl = read_schema(database)
        except SqlProblem as failed:
            raise Unscorable("error", failed.reason, details={"sql_problem": failed.problem}) from None
    contexts = [c for c in ctx.sample.reference_contexts if c.strip()]
    if contexts:
        return SchemaInfo(text="\n".join(contexts), origin="reference_contexts", tables=tables)
    if ddl:
        return SchemaInfo(text="\n\n".join(ddl), origin="database", tables=tables)
    return SchemaInfo(text="", origin="none", tables=tables)
