"""Standard RAG metrics — Ragas's formulas, correct in Chinese and English, at a fraction of the judge calls.

    from standard_metrics import score_sample, list_metrics, RAGAS_FIVE
    verdicts = await score_sample(sample, RAGAS_FIVE, judge=judge_client, embedder=embedding_client)

One module per metric, each reading like its formula: answer_correctness, faithfulness, answer_relevancy,
context_precision (+ context_utilization), context_recall, naive_testers (answer_validity, context_usefulness),
nonllm_context, string_metrics/string_verdicts. The judge calls they share live in `calls.py`, the prompts in
`templates/` (zh and en, replaceable per team), the entry points in `registry.py`. See README.md beside this file.
"""
from standard_metrics.options import MetricOptions
from standard_metrics.registry import list_metrics, needs_embedder, needs_judge, planned_calls, planned_requests, score_sample
from standard_metrics.single_turn import judge_cache_lookup
from standard_metrics.catalog import METRICS, RAGAS_FIVE

__all__ = ["METRICS", "RAGAS_FIVE", "MetricOptions", "judge_cache_lookup", "list_metrics", "needs_embedder",
           "needs_judge", "planned_calls", "planned_requests", "score_sample"]
