"""Which standard metrics score which kind of sample, so a run never scores a conversation's first user turn
against its last agent turn as if they were one question and one answer.

* Agent metrics (`standard_metrics.conversation`: tool calls, goal, topics) score whole conversations only.
* A single-turn metric scores single-turn samples, and conversations per agent turn (averaged per conversation,
  `standard_metrics/conversation/per_turn.py`) only when everything it reads is something a turn has: the user's
  words since the last reply, the reply, the turn's contexts. Metrics that need a ground truth or reference
  contexts (answer_correctness, context_precision/recall, string and SQL metrics) have nothing to compare a turn
  with, so they are single-turn only.

A metric that applies to no sample of a dataset is left out of the run with a note, as rubrics are.

Cross-check twins (issue 29): an LLM retrieval metric and the non-LLM metric that measures the same thing from the
reference contexts without a judge call. A run asking for the first on samples with reference contexts computes
the second beside it (rubriceval/run/cross_check.py); the report flags samples where they disagree strongly.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Literal

from rubriceval.data.sample import Sample

SampleKind = Literal["sample", "conversation"]
# LLM retrieval metric → its non-LLM twin (needs reference contexts; no judge call).
CROSS_CHECK_TWINS: dict[str, str] = {"context_recall": "nonllm_context_recall",
                                     "context_precision": "nonllm_context_precision"}
# What a per-turn sample carries (standard_metrics/conversation/per_turn.py: turn_samples).
TURN_FIELDS = frozenset({"question", "answer", "contexts"})


def sample_kind(sample: Sample) -> SampleKind:
    return "conversation" if sample.conversation is not None else "sample"


@cache      # the registry is fixed; a run asks for every sample
def metric_kinds(name: str) -> tuple[SampleKind, ...]:
    """The kinds of sample a metric scores (the name must be known to the registry)."""
    # Read on first use: every run imports this module, a run with no metric must not load the metrics (32.14).
    from rubriceval.standard_metrics.catalog import METRICS
    from rubriceval.standard_metrics.conversation.catalog import CONVERSATION_METRICS

    if name in CONVERSATION_METRICS:
        return ("conversation",)
    if set(METRICS[name].required_fields) <= TURN_FIELDS:
        return ("sample", "conversation")
    return ("sample",)


# How `rubriceval metrics` and `list_metrics` name what a metric scores.
SCOPE_LABELS: dict[tuple[SampleKind, ...], str] = {
    ("sample",): "single-turn",
    ("sample", "conversation"): "single-turn, per turn",
    ("conversation",): "conversation",
}


def scope_label(name: str) -> str:
    """single-turn / single-turn, per turn (also each assistant turn of a conversation) / conversation."""
    return SCOPE_LABELS[metric_kinds(name)]


def metrics_for(sample: Sample, names: Iterable[str]) -> list[str]:
    """The requested metrics that score this sample, in the order asked."""
    kind = sample_kind(sample)
    return [name for name in names if kind in metric_kinds(name)]


def unused_metrics(samples: Sequence[Sample], names: Iterable[str]) -> dict[str, str]:
    """Metric → why it scores no sample of this dataset (empty when every metric has a sample)."""
    present = {sample_kind(s) for s in samples}
    why = {"conversation": "scores whole conversations and the dataset has none",
           "sample": "needs fields conversation turns do not have (a ground truth or reference contexts) and the "
                     "dataset has no single-turn sample"}
    unused = {}
    for name in names:
        kinds = metric_kinds(name)
        if not present & set(kinds):
            unused[name] = why[kinds[0]] if len(kinds) == 1 else "the dataset has no sample"
    return unused


def unused_metrics_note(unused: dict[str, str]) -> str:
    return "note: metric(s) applying to no sample in this dataset are left out: " + "; ".join(
        f"{name} ({reason})" for name, reason in unused.items())
