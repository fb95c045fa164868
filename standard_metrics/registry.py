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

from collections.abc import Iterable

from pydantic import BaseModel

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.standard_metrics.calls import CacheLookup, PlannedCall
from rubriceval.standard_metrics.catalog import METRICS
from rubriceval.standard_metrics.conversation.catalog import CONVERSATION_METRICS
from rubriceval.standard_metrics.conversation.planning import planned_conversation_requests
from rubriceval.standard_metrics.conversation.scoring import score_conversation
from rubriceval.standard_metrics.names import resolve_names, split_kinds
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.protocols import Embedder, Judge
from rubriceval.standard_metrics.scope import scope_label
from rubriceval.standard_metrics.single_turn import (
    planned_single_turn_calls,
    planned_single_turn_requests,
    score_single_turn,
)


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
    opts = MetricOptions.coerce(options)
    return [MetricInfo(name=s.name, family=s.family, summary=s.summary, required_fields=list(s.required_fields),
                       needs_judge=s.needs_judge(opts), needs_embedder=s.needs_embedder(opts), scope=scope_label(s.name))
            for s in METRICS.values()] + [
        MetricInfo(name=s.name, family=s.family, summary=s.summary, required_fields=list(s.required_fields),
                   needs_judge=s.needs_judge, needs_embedder=False, scope=scope_label(s.name))
        for s in CONVERSATION_METRICS.values()]


def needs_judge(names: Iterable[str], options: MetricOptions | dict | None = None) -> bool:
    opts = MetricOptions.coerce(options)
    single, conversation = split_kinds(names)
    return (any(CONVERSATION_METRICS[n].needs_judge for n in conversation)
            or any(METRICS[n].needs_judge(opts) for n in resolve_names(single)))


def needs_embedder(names: Iterable[str], options: MetricOptions | dict | None = None) -> bool:
    opts = MetricOptions.coerce(options)
    single, _ = split_kinds(names)
    return any(METRICS[n].needs_embedder(opts) for n in resolve_names(single))


def planned_calls(sample: Sample, names: Iterable[str], options: MetricOptions | dict | None = None, *,
                  judge_model: str | None = None) -> int:
    """Judge requests `score_sample` makes for this sample with a judge of this model (its request cut:
    call_modes.py) when every reply is valid (re-asks come on top; a statement list that comes back empty can
    only remove a call)."""
    opts = MetricOptions.coerce(options)
    if sample.conversation is not None:
        return len(planned_requests(sample, names, opts, judge_model=judge_model))
    return planned_single_turn_calls(sample, resolve_names(names), opts, judge_model)


def planned_requests(sample: Sample, names: Iterable[str], options: MetricOptions | dict | None = None, *,
                     lookup: CacheLookup | None = None, judge_model: str | None = None) -> list[PlannedCall]:
    """The exact messages/schema/cache tag of each planned call, for dry-run token counts and cache checks.

    Calls that depend on the statement extraction are exact when `lookup` finds the extraction's reply (pass
    `judge_cache_lookup(judge)`); otherwise they are rendered with the texts' sentences standing in for the
    statements and marked `exact=False`. A conversation sample plans its agent metrics' calls and each assistant
    turn's calls (`standard_metrics.conversation.planning`).
    """
    opts = MetricOptions.coerce(options)
    if sample.conversation is not None:
        single, _ = split_kinds(names)
        resolve_names(single)
        return planned_conversation_requests(sample.conversation, list(dict.fromkeys(names)), opts, opts.agent,
                                             lookup, judge_model=judge_model)
    return planned_single_turn_requests(sample, resolve_names(names), opts, lookup=lookup, judge_model=judge_model)


async def score_sample(sample: Sample, metric_names: Iterable[str], *, judge: Judge | None = None,
                       embedder: Embedder | None = None,
                       options: MetricOptions | dict | None = None) -> list[Verdict]:
    """One Verdict per distinct requested metric, in the order asked; judge work is shared across them.

    A sample that carries a conversation is scored as one (`score_conversation`: agent metrics on the whole
    dialogue, single-turn metrics per assistant turn), with the agent options in `options.agent`."""
    if sample.conversation is not None:
        return await score_conversation(sample.conversation, metric_names, judge=judge, embedder=embedder,
                                        options=options)
    return await score_single_turn(sample, resolve_names(metric_names), judge=judge, embedder=embedder,
                                   options=MetricOptions.coerce(options))
