"""The runner's entry point: which metrics exist, what they need, what they will cost, and scoring a sample.

    verdicts = await score_sample(sample, ["answer_correctness", "faithfulness"], judge=judge, embedder=embedder)

`score_sample` plans the judge calls once for all requested metrics of the sample (see `calls.py`), runs them
and computes every metric from the shared outputs.

Usage attribution: each judge call (re-ask included) and the embedding request is charged, whole, to the FIRST
requested metric that consumes it; the others list it in `details["shared_calls"]` with `charged_to`. Summing
`Verdict.usage` over a sample's verdicts therefore gives exactly the calls, tokens and cost that were spent.
A reply served from the judge cache counts as a cache hit with no tokens or cost.
"""
from __future__ import annotations

from typing import Any, Iterable

from pydantic import BaseModel

from rubriceval.data.sample import Sample
from rubriceval.common.errors import ConfigError
from rubriceval.scoring.verdict import Usage, Verdict
from standard_metrics import (answer_correctness, answer_relevancy, context_precision, context_recall,
                              datacompy_score, faithfulness, naive_testers, nonllm_context, sql_equivalence,
                              string_verdicts)
from standard_metrics.calls import (CALLS_VERSION, EMBEDDING, CacheLookup, CallPlan, JudgeRequest, PlannedCall,
                                    RequestBuilder, SampleRun, plan_requests)
from standard_metrics.context import MetricContext, Unscorable
from standard_metrics.conversation.catalog import CONVERSATION_METRICS
from standard_metrics.conversation.planning import planned_conversation_requests
from standard_metrics.conversation.scoring import score_conversation
from standard_metrics.options import MetricOptions
from standard_metrics.prompts import prompt_library
from standard_metrics.protocols import Embedder, Judge
from standard_metrics.spec import MetricSpec
from standard_metrics.sql.spec import SelfRunMetricSpec

METRICS: dict[str, MetricSpec] = {spec.name: spec for spec in [
    answer_correctness.SPEC,
    faithfulness.SPEC,
    answer_relevancy.SPEC,
    context_precision.SPEC,
    context_precision.UTILIZATION_SPEC,
    context_recall.SPEC,
    naive_testers.VALIDITY_SPEC,
    naive_testers.USEFULNESS_SPEC,
    nonllm_context.PRECISION_SPEC,
    nonllm_context.RECALL_SPEC,
    *string_verdicts.SPECS,
    datacompy_score.SPEC,       # NL2SQL: these two run their own SQL / judge question (SelfRunMetricSpec)
    sql_equivalence.SPEC,
]}

# The classic Ragas five, for "--metrics ragas"-style shortcuts.
RAGAS_FIVE = ["answer_correctness", "faithfulness", "answer_relevancy", "context_precision", "context_recall"]


class MetricInfo(BaseModel):
    name: str
    family: str
    summary: str
    required_fields: list[str]
    needs_judge: bool
    needs_embedder: bool
    # What one verdict scores, as standard_metrics/scope.py decides for runs: a single-turn sample ("single-turn"),
    # also each assistant turn of a conversation, averaged per conversation ("single-turn, per turn"), or a whole
    # conversation (agent metrics: "conversation").
    scope: str


def list_metrics(options: MetricOptions | dict | None = None) -> list[MetricInfo]:
    from standard_metrics.scope import scope_label      # it reads this registry

    opts = MetricOptions.coerce(options)
    return [MetricInfo(name=s.name, family=s.family, summary=s.summary, required_fields=list(s.required_fields),
                       needs_judge=s.needs_judge(opts), needs_embedder=s.needs_embedder(opts), scope=scope_label(s.name))
            for s in METRICS.values()] + [
        MetricInfo(name=s.name, family=s.family, summary=s.summary, required_fields=list(s.required_fields),
                   needs_judge=s.needs_judge, needs_embedder=False, scope=scope_label(s.name))
        for s in CONVERSATION_METRICS.values()]


def check_known(names: Iterable[str]) -> list[str]:
    """The names as given, single-turn or conversation metrics; an unknown name is a user error (the one check)."""
    names = list(names)
    unknown = [n for n in names if n not in METRICS and n not in CONVERSATION_METRICS]
    if unknown:
        raise ConfigError(f"unknown metric(s): {', '.join(repr(n) for n in unknown)}", field="metrics",
                          hint="available: " + ", ".join([*METRICS, *CONVERSATION_METRICS]))
    return names


def resolve_names(names: Iterable[str]) -> list[str]:
    """Distinct known single-turn metric names in the order given."""
    resolved: list[str] = []
    for name in check_known(names):
        if name in CONVERSATION_METRICS:
            raise ConfigError(f"{name} scores whole conversations, not single-turn samples", field="metrics",
                              hint="give a conversation dataset (turns/messages), or leave it out")
        if name not in resolved:
            resolved.append(name)
    return resolved


def _split(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(single-turn names, conversation metric names); either kind may be asked for on conversations."""
    names = list(names)
    return [n for n in names if n not in CONVERSATION_METRICS], [n for n in names if n in CONVERSATION_METRICS]


def needs_judge(names: Iterable[str], options: MetricOptions | dict | None = None) -> bool:
    opts = MetricOptions.coerce(options)
    single, conversation = _split(names)
    return (any(CONVERSATION_METRICS[n].needs_judge for n in conversation)
            or any(METRICS[n].needs_judge(opts) for n in resolve_names(single)))


def needs_embedder(names: Iterable[str], options: MetricOptions | dict | None = None) -> bool:
    opts = MetricOptions.coerce(options)
    single, _ = _split(names)
    return any(METRICS[n].needs_embedder(opts) for n in resolve_names(single))


def _language(sample: Sample, options: MetricOptions) -> str:
    return options.language or sample.language


def _missing_field(spec: MetricSpec, sample: Sample, lang: str) -> Unscorable | None:
    for field_name in spec.required_fields:
        value = getattr(sample, field_name)
        empty = not value.strip() if isinstance(value, str) else not value
        if empty:
            reason = (f"样本缺少 {field_name}（为空），{spec.name} 无法计算" if lang == "zh"
                      else f"{spec.name} needs a non-empty {field_name}")
            return Unscorable("missing_field", reason)
    return None


def _plan(sample: Sample, names: list[str], options: MetricOptions) -> tuple[CallPlan, dict[str, Unscorable]]:
    lang = _language(sample, options)
    missing = {n: m for n in names if (m := _missing_field(METRICS[n], sample, lang)) is not None}
    needs = {n: METRICS[n].needs(options) for n in names if n not in missing}
    return CallPlan({n: v for n, v in needs.items() if v}), missing


def _builder(sample: Sample, options: MetricOptions) -> RequestBuilder:
    return RequestBuilder(sample, _language(sample, options), options, prompt_library(options.template_dir))


def planned_calls(sample: Sample, names: Iterable[str], options: MetricOptions | dict | None = None) -> int:
    """Judge calls `score_sample` makes for this sample when every reply is valid (re-asks come on top; a
    statement list that comes back empty can only remove a call)."""
    opts = MetricOptions.coerce(options)
    if sample.conversation is not None:
        return len(planned_requests(sample, names, opts))
    plan, missing = _plan(sample, names := resolve_names(names), opts)
    return len(plan.judge_calls) + len(_self_run_requests(sample, names, missing, opts))


def planned_requests(sample: Sample, names: Iterable[str], options: MetricOptions | dict | None = None, *,
                     lookup: CacheLookup | None = None) -> list[PlannedCall]:
    """The exact messages/schema/cache tag of each planned call, for dry-run token counts and cache checks.

    Calls that depend on the statement extraction are exact when `lookup` finds the extraction's reply (pass
    `judge_cache_lookup(judge)`); otherwise they are rendered with the texts' sentences standing in for the
    statements and marked `exact=False`. A conversation sample plans its agent metrics' calls and each assistant
    turn's calls (`standard_metrics.conversation.planning`).
    """
    opts = MetricOptions.coerce(options)
    if sample.conversation is not None:
        single, _ = _split(names)
        resolve_names(single)
        return planned_conversation_requests(sample.conversation, list(dict.fromkeys(names)), opts, opts.agent,
                                             lookup)
    plan, missing = _plan(sample, names := resolve_names(names), opts)
    shared = plan_requests(plan, _builder(sample, opts), lookup) if plan.judge_calls else []
    return shared + _self_run_requests(sample, names, missing, opts)


def _self_run_requests(sample: Sample, names: list[str], missing: dict[str, Unscorable],
                       options: MetricOptions) -> list[PlannedCall]:
    """The judge requests of metrics that ask their own question (`SelfRunMetricSpec`), one consumer each."""
    ctx = MetricContext(sample, options, _language(sample, options))
    requests = [(name, spec.planned_request(ctx)) for name in names if name not in missing
                and isinstance(spec := METRICS[name], SelfRunMetricSpec)]
    return [PlannedCall(kind=r.schema_name, messages=r.messages, json_schema=r.json_schema or {},
                        schema_name=r.schema_name, cache_tag=r.cache_tag, consumers=[name])
            for name, r in requests if r is not None]


def judge_cache_lookup(judge: Any) -> CacheLookup:
    """A lookup into a `JudgeClient`'s cache (None when the judge has no cache)."""
    def lookup(request: JudgeRequest) -> dict | None:
        cache = getattr(judge, "cache", None)
        if cache is None:
            return None
        return cache.get(judge.key_for(request.messages, request.json_schema, request.cache_tag))
    return lookup


def _version(spec: MetricSpec, sample: Sample, options: MetricOptions) -> str:
    if spec.family != "llm":
        return spec.version
    fingerprint = prompt_library(options.template_dir).fingerprint(_language(sample, options))
    return f"{spec.version}+calls{CALLS_VERSION}+tpl.{fingerprint}"


def _attribute(plan: CallPlan, run: SampleRun | None) -> tuple[dict[str, Usage], dict[str, list[dict]]]:
    usage: dict[str, Usage] = {}
    notes: dict[str, list[dict]] = {}
    if run is None:
        return usage, notes
    spent = [(kind, o.usage, o.attempts) for kind, o in run.outcomes.items()]
    if run.embedding is not None:
        spent.append((EMBEDDING, run.embedding.usage, 1))
    for kind, cost, attempts in spent:
        consumers = plan.consumers(kind)
        charged = consumers[0]
        usage[charged] = usage.get(charged, Usage()) + cost
        for name in consumers:
            notes.setdefault(name, []).append({"call": kind, "charged_to": charged, "attempts": attempts,
                                               "shared_with": [c for c in consumers if c != name]})
    return usage, notes


async def score_sample(sample: Sample, metric_names: Iterable[str], *, judge: Judge | None = None,
                       embedder: Embedder | None = None,
                       options: MetricOptions | dict | None = None) -> list[Verdict]:
    """One Verdict per distinct requested metric, in the order asked; judge work is shared across them.

    A sample that carries a conversation is scored as one (`score_conversation`: agent metrics on the whole
    dialogue, single-turn metrics per assistant turn), with the agent options in `options.agent`."""
    if sample.conversation is not None:
        return await score_conversation(sample.conversation, metric_names, judge=judge, embedder=embedder,
                                        options=options)
    opts = MetricOptions.coerce(options)
    names = resolve_names(metric_names)
    lang = _language(sample, opts)
    plan, missing = _plan(sample, names, opts)
    if plan.judge_calls and judge is None:
        raise ConfigError(f"{', '.join(plan.needs_by_metric)} need a judge", field="judge")
    if plan.needs_embedding and embedder is None:
        raise ConfigError("these metrics need an embedder: " + ", ".join(
            n for n in plan.needs_by_metric if METRICS[n].needs_embedder(opts)), field="embedder")

    run: SampleRun | None = None
    if plan.judge_calls or plan.needs_embedding:
        run = SampleRun(plan, sample, _builder(sample, opts) if plan.judge_calls else None, judge, embedder)
        await run.execute()
    ctx = MetricContext(sample, opts, lang, run.outcomes if run else {}, run.embedding if run else None)
    usage, notes = _attribute(plan, run)

    verdicts: list[Verdict] = []
    for name in names:
        spec = METRICS[name]
        common: dict[str, Any] = dict(sample_id=sample.id, scorer=name, kind="metric",
                                      scorer_version=_version(spec, sample, opts), usage=usage.get(name, Usage()))
        shared = {"shared_calls": notes[name]} if name in notes else {}
        try:
            if name in missing:
                raise missing[name]
            if isinstance(spec, SelfRunMetricSpec):
                outcome, spent = await spec.run(ctx, judge)
                common.update(usage=common["usage"] + spent, scorer_version=spec.scorer_version(ctx))
                if isinstance(outcome, Unscorable):
                    raise outcome
                result = outcome
            else:
                result = spec.compute(ctx)
            verdicts.append(Verdict(**common, score=result.score, feedback=result.feedback,
                                    evidence=result.evidence, details={**result.details, **shared}))
        except Unscorable as reason:
            # Verdict.unscored() cannot be used: its `kind` parameter shadows Verdict.kind ("metric").
            verdicts.append(Verdict(**common, unscored_kind=reason.kind, unscored_reason=reason.reason,
                                    details={**reason.details, **shared}))
    return verdicts
