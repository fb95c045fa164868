"""llm_sql_equivalence — Ragas's LLMSQLEquivalence: given the schema, are the generated and the reference SQL
equivalent? 1 or 0. A deterministic pre-check answers first, so only genuinely different queries cost a call:

    reference SQL not one read-only query            → unscored (the dataset's problem, named)
    generated SQL with a syntax error                → unscored, with sqlglot's line/column
    generated SQL not one read-only SELECT/WITH      → 0, no call (DROP/UPDATE/ATTACH or a second statement can
                                                       never be equivalent to a SELECT)
    same normal form (sql/statement.py, sqlglot)     → 1, no call
    otherwise                                        → the judge: feedback first (what each query does, the
                                                       difference), then score 0/1, read by the shared parser;
                                                       one re-ask when unreadable, else unscored parse_error

`details["decided_by"]` says which ("precheck" or "judge"). The schema the judge reads is `reference_contexts`
joined by newlines (as Ragas), else the CREATE statements of the sample's database; sqlglot qualifies with the
database's tables when there is one. The SQL is never executed here.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from rubriceval.common.errors import ConfigError
from rubriceval.core.verdict import Usage
from rubriceval.judge.ask import JudgeRequest, Reading, TemplateReask, ask
from rubriceval.judge.parser import ParsedOutput, parse_judge_output
from rubriceval.prompt.environment import templates_fingerprint
from rubriceval.standard_metrics.context import MetricContext, MetricResult, Unscorable
from rubriceval.standard_metrics.prompts import prompt_library
from rubriceval.standard_metrics.protocols import Judge
from rubriceval.standard_metrics.schemas import STRING, obj
from rubriceval.standard_metrics.sql.source import SchemaInfo, checked_query, schema_of
from rubriceval.standard_metrics.sql.spec import Outcome, SelfRunMetricSpec
from rubriceval.standard_metrics.sql.statement import NoNormalForm, SqlProblem, normal_form, parse_query, same_query

NAME = "llm_sql_equivalence"
CALL = "sql_equivalence"
VERSION = "1"
SCHEMA = obj({"feedback": STRING, "score": {"type": "integer", "enum": [0, 1]}})


class Precheck(BaseModel):
    """What the deterministic pre-check found: a decided score (no call needed), or why the judge must decide."""

    score: float | None = None          # None → the judge decides
    reason: str
    generated_normal: str | None = None
    reference_normal: str | None = None

    @property
    def decided(self) -> bool:
        return self.score is not None


def precheck(ctx: MetricContext, schema: SchemaInfo) -> Precheck:
    """Raises Unscorable for a broken reference or a syntax error in the generated SQL."""
    _, reference = checked_query(ctx, "reference")
    try:
        generated = parse_query(ctx.sample.answer)
    except SqlProblem as problem:
        if problem.problem in ("syntax_error", "empty"):
            raise Unscorable("error", ctx.text(f"生成的 SQL（answer）：{problem.reason}",
                                               f"the generated SQL (answer): {problem.reason}"),
                             details={"sql_problem": problem.problem, "side": "generated"}) from None
        return Precheck(score=0.0, reason=ctx.text(f"生成的 SQL 不是单条只读查询，不可能与参考 SQL 等价：{problem.reason}",
                                                   "the generated SQL is not a single read-only query, so it cannot "
                                                   f"be equivalent to the reference: {problem.reason}"))
    try:
        a, b = normal_form(generated, schema.tables), normal_form(reference, schema.tables)
    except NoNormalForm as unavailable:
        return Precheck(reason=str(unavailable))
    shown = dict(generated_normal=a.sql(dialect="sqlite"), reference_normal=b.sql(dialect="sqlite"))
    if same_query(a, b):
        return Precheck(score=1.0, reason=ctx.text("两条 SQL 规范化（sqlglot）后完全相同：等价",
                                                   "both queries have the same normal form (sqlglot): equivalent"),
                        **shown)
    return Precheck(reason="different normal forms", **shown)


def read_equivalence(reply) -> Reading[ParsedOutput]:
    """Feedback and a 0/1 score from the reply (JSON or text), through the shared parser."""
    parsed = parse_judge_output(reply.text or "", data=reply.data, min_score=0, max_score=1)
    if parsed.score is None:
        return Reading(problems=[parsed.error or "no score"], kind="parse_error", feedback=parsed.feedback)
    return Reading(value=parsed, feedback=parsed.feedback)


def _fingerprint(ctx: MetricContext) -> str:
    env = prompt_library(ctx.options.template_dir).env
    lang = ctx.language
    return templates_fingerprint(env, ["_macros.j2", f"{lang}/system.j2", f"{lang}/reask.j2", f"{lang}/{CALL}.j2"])


def version_of(ctx: MetricContext) -> str:
    return f"{VERSION}+tpl.{_fingerprint(ctx)}"


def judge_request(ctx: MetricContext, schema: SchemaInfo) -> JudgeRequest:
    library = prompt_library(ctx.options.template_dir)
    messages = library.render(CALL, ctx.language, schema=schema.text, reference_sql=ctx.sample.ground_truth,
                              generated_sql=ctx.sample.answer)
    return JudgeRequest(messages=messages, json_schema=SCHEMA, schema_name=CALL,
                        cache_tag=f"standard_metrics/{CALL}/v{VERSION}+tpl.{_fingerprint(ctx)}")


def _decided_by(check: Precheck, by: Literal["precheck", "judge"]) -> dict:
    return {"decided_by": by, "precheck": check.reason, "generated_normal": check.generated_normal,
            "reference_normal": check.reference_normal}


async def _judge(ctx: MetricContext, judge: Judge | None, schema: SchemaInfo, check: Precheck) -> Outcome:
    if not schema.text:
        return schema_missing(ctx), Usage()
    if judge is None:
        raise ConfigError(f"{NAME} needs a judge for queries the pre-check cannot decide", field="judge")
    library = prompt_library(ctx.options.template_dir)
    reask = TemplateReask(template=library.template("reask", ctx.language)) if ctx.options.reask_invalid else None
    config = getattr(judge, "config", None)
    asked = await ask(judge, judge_request(ctx, schema), read_equivalence, reask=reask,
                      max_input_tokens=getattr(config, "max_input_tokens", None))
    details = {**_decided_by(check, "judge"), "schema_from": schema.origin, "attempts": asked.attempts}
    if not asked.ok:
        return Unscorable(asked.unscored_kind or "error", f"{CALL}: {asked.reason}",
                          details={**details, "feedback": asked.feedback}), asked.usage
    verdict: ParsedOutput = asked.value
    return MetricResult(score=float(verdict.score), feedback=verdict.feedback, details=details), asked.usage


def schema_missing(ctx: MetricContext) -> Unscorable:
    return Unscorable("missing_field", ctx.text(
        f"{NAME} 需要数据库结构：reference_contexts（表结构说明）或数据库文件（database 列 / sql.database）",
        f"{NAME} needs the schema: reference_contexts (table descriptions) or a database ('database' column / "
        "sql.database option)"))


async def run(ctx: MetricContext, judge: Judge | None) -> Outcome:
    try:
        schema = schema_of(ctx)
        check = precheck(ctx, schema)
    except Unscorable as unscorable:
        return unscorable, Usage()
    if check.decided:
        return MetricResult(score=check.score, feedback=check.reason, details=_decided_by(check, "precheck")), Usage()
    return await _judge(ctx, judge, schema, check)


def planned_request(ctx: MetricContext) -> JudgeRequest | None:
    """The judge request `run` will send, or None when the pre-check decides or the sample is unscorable."""
    try:
        schema = schema_of(ctx)
        return None if precheck(ctx, schema).decided or not schema.text else judge_request(ctx, schema)
    except Unscorable:
        return None


SPEC = SelfRunMetricSpec(
    name=NAME, family="sql", run=run, planned_request=planned_request, version_of=version_of, uses_judge=True,
    required_fields=("answer", "ground_truth"),
    summary="Ragas LLMSQLEquivalence: generated vs reference SQL equivalent given the schema (1/0); sqlglot "
            "pre-check decides identical normal forms without a call")
