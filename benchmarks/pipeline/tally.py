"""Count what a run cost, from the stub's request log: calls and tokens per side, per metric, per prompt.

The stub sees every HTTP request either side makes, so these counts do not depend on either library's own
bookkeeping. Ragas's calls are attributed to metrics by tagging each request (see `ragas_metric_of`); ours come
per call kind here and per metric from our verdicts' `usage` (see `ours_per_metric`).

Ragas attribution by tagging, and why it is exact for a combined five-metric run:
- every Ragas prompt is recognised by the title of the output schema it embeds (responder.RAGAS_PROMPT_METRICS);
- the statement-generation prompt is sent by two metrics: faithfulness (for the response) and answer_correctness
  (for the response AND the reference). Requests for a reference are answer_correctness's; requests for a
  response come in identical pairs (same body, same tokens), one per metric, and are split alternately;
- embedding requests: answer_correctness's similarity embeds the response and the reference, answer_relevancy
  embeds the question and the generated questions; a request whose inputs are all responses/references is
  answer_correctness's.
`run_bench --check-attribution` verifies this against runs of each metric alone.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, Field

from benchmarks.pipeline.responder import RAGAS_PROMPT_METRICS, classify, prompt_text, ragas_prompt_parts
from rubriceval.testing import RequestRecord, StubStats


class Cost(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedding_tokens: int = 0

    def add_chat(self, record: RequestRecord) -> None:
        self.calls += 1
        self.prompt_tokens += record.prompt_tokens
        self.completion_tokens += record.completion_tokens

    def add_embedding(self, record: RequestRecord) -> None:
        self.embedding_calls += 1
        self.embedding_tokens += record.prompt_tokens

    def __add__(self, other: Cost) -> Cost:
        return Cost(**{k: getattr(self, k) + getattr(other, k) for k in Cost.model_fields})

    def per(self, n: int) -> dict[str, float]:
        return {k: getattr(self, k) / n for k in Cost.model_fields} if n else {}


class RunTally(BaseModel):
    side: str
    total: Cost = Field(default_factory=Cost)
    by_metric: dict[str, Cost] = Field(default_factory=dict)    # Ragas: tagged; ours: empty (see verdict usage)
    by_prompt: dict[str, Cost] = Field(default_factory=dict)    # Ragas: output model; ours: call kind
    failed_requests: int = 0                                    # non-200 answers (must be 0 for a fair run)
    stub_errors: list[str] = Field(default_factory=list)        # responder exceptions (unrecognised prompts)
    unknown_prompts: int = 0
    max_in_flight: int = 0


def _bucket(table: dict[str, Cost], key: str) -> Cost:
    return table.setdefault(key, Cost())


def tally(stats: StubStats, side: str, *, responses: Iterable[str] = (), references: Iterable[str] = ()) -> RunTally:
    responses, references = set(responses), set(references)
    result = RunTally(side=side, max_in_flight=stats.max_in_flight, stub_errors=[e[-500:] for e in stats.errors])
    pending_pairs: dict[str, int] = defaultdict(int)    # digest of a response-statement request → times seen
    for record in stats.requests:
        if record.endpoint == "models":
            continue
        if record.status != 200:
            result.failed_requests += 1
        body = record.body or {}
        if record.endpoint == "embeddings":
            result.total.add_embedding(record)
            if side == "ragas":
                _bucket(result.by_metric, _ragas_embedding_metric(body, responses, references)).add_embedding(record)
            continue
        result.total.add_chat(record)
        who, prompt = classify(body)
        if who == "unknown":
            result.unknown_prompts += 1
        _bucket(result.by_prompt, prompt or "unknown").add_chat(record)
        if side == "ragas":
            metric = ragas_metric_of(body, prompt, record.digest, pending_pairs, references)
            _bucket(result.by_metric, metric).add_chat(record)
    return result


def ragas_metric_of(body: dict, title: str, digest: str, seen: dict[str, int], references: set[str]) -> str:
    metrics = RAGAS_PROMPT_METRICS.get(title, ("unknown",))
    if len(metrics) == 1:
        return metrics[0]
    parts = ragas_prompt_parts(prompt_text(body))
    text = parts[1].get("answer", "") if parts else ""
    if text in references:
        return "answer_correctness"
    seen[digest] += 1            # the identical pair: first → faithfulness, second → answer_correctness
    return metrics[(seen[digest] - 1) % len(metrics)]


def _ragas_embedding_metric(body: dict, responses: set[str], references: set[str]) -> str:
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else list(raw or [])
    if texts and all(isinstance(t, str) and (t in responses or t in references) for t in texts):
        return "answer_correctness"
    return "answer_relevancy"


def ours_per_metric(per_scorer: dict[str, dict]) -> dict[str, Cost]:
    """Our verdicts' usage per metric: each shared call is charged whole to the first metric that consumes it."""
    out: dict[str, Cost] = {}
    for name, entry in per_scorer.items():
        usage = entry["usage"]
        out[name] = Cost(calls=usage["calls"], prompt_tokens=usage["prompt_tokens"],
                         completion_tokens=usage["completion_tokens"], embedding_calls=usage["embedding_calls"])
    return out

