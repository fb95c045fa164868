"""Scoring one single-turn sample: plan the judge calls once for all requested metrics (calls.py), run them, compute
every metric from the shared outputs, and attribute usage to the first consumer."""
from __future__ import annotations

from typing import Any

from rubriceval.common.errors import ConfigError
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.standard_metrics.call_modes import call_modes, judge_model_of
from rubriceval.standard_metrics.calls import (
    CALLS_VERSION,
    EMBEDDING,
    CacheLookup,
    CallPlan,
    JudgeRequest,
    PlannedCall,
    RequestBuilder,
    SampleRun,
    plan_requests,
)
from rubriceval.standard_metrics.catalog import METRICS
from rubriceval.standard_metrics.context import MetricContext, Unscorable
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.prompts import prompt_library
from rubriceval.standard_metrics.protocols import Embedder, Judge
from rubriceval.standard_metrics.spec import MetricSpec
from rubriceval.standard_metrics.sql.spec import SelfRunMetricSpec


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


def _plan(sample: Sample, names: list[str], options: MetricOptions,
          judge_model: str | None = None) -> tuple[CallPlan, dict[str, Unscorable]]:
    """The calls, cut into requests as this judge's are (call_modes.py), and the metrics missing a field."""
    lang = _language(sample, options)
    missing = {n: m for n in names if (m := _missing_field(METRICS[n], sample, lang)) is not None}
    needs = {n: METRICS[n].needs(options) for n in names if n not in missing}
    return CallPlan({n: v for n, v in needs.items() if v}, modes=call_modes(options, judge_model)), missing


def _builder(sample: Sample, options: MetricOptions) -> RequestBuilder:
    return RequestBuilder(sample, _language(sample, options), options, prompt_library(options.template_dir))


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


def _version(spec: MetricSpec, sample: Sample, options: MetricOptions, plan: CallPlan) -> str:
    if spec.family != "llm":
        return spec.version
    fingerprint = prompt_library(options.template_dir).fingerprint(_language(sample, options))
    return f"{spec.version}+calls{CALLS_VERSION}.{plan.modes.tag}+tpl.{fingerprint}"


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


def planned_single_turn_calls(sample: Sample, names: list[str], opts: MetricOptions,
                              judge_model: str | None = None) -> int:
    """Judge requests of a single-turn sample's metrics (`names` resolved) when every reply is valid."""
    plan, missing = _plan(sample, names, opts, judge_model)
    return plan.request_count(len(sample.contexts)) + len(_self_run_requests(sample, names, missing, opts))


def planned_single_turn_requests(sample: Sample, names: list[str], opts: MetricOptions, *,
                                 lookup: CacheLookup | None = None,
                                 judge_model: str | None = None) -> list[PlannedCall]:
    """The planned calls of a single-turn sample's metrics (`names` resolved); see registry.planned_requests."""
    plan, missing = _plan(sample, names, opts, judge_model)
    shared = plan_requests(plan, _builder(sample, opts), lookup, judge_model=judge_model) if plan.judge_calls else []
    return shared + _self_run_requests(sample, names, missing, opts)


async def score_single_turn(sample: Sample, names: list[str], *, judge: Judge | None, embedder: Embedder | None,
                            options: MetricOptions) -> list[Verdict]:
    """One Verdict per metric of `names` (resolved, distinct) for a single-turn sample, judge work shared."""
    opts = options
    lang = _language(sample, opts)
    plan, missing = _plan(sample, names, opts, judge_model_of(judge))
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
                                      scorer_version=_version(spec, sample, opts, plan),
                                      usage=usage.get(name, Usage()))
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
