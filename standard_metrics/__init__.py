"""Standard RAG metrics — Ragas's formulas, correct in Chinese and English, at a fraction of the judge calls.

    from rubriceval.standard_metrics import score_sample, list_metrics, RAGAS_FIVE
    verdicts = await score_sample(sample, RAGAS_FIVE, judge=judge_client, embedder=embedding_client)

One module per metric, each reading like its formula: answer_correctness, faithfulness, answer_relevancy,
context_precision (+ context_utilization), context_recall, naive_testers (answer_validity, context_usefulness),
nonllm_context, string_metrics/string_verdicts. The judge calls they share live in `calls.py`, the prompts in
`templates/` (zh and en, replaceable per team), the entry points in `registry.py`. See README.md beside this file.
"""
from rubriceval.common.lazy import lazy_exports

# Imported on first use: a run that asks for no metric (or reads only scope.py / thresholds.py) does not load the
# metrics, their prompts and sqlglot (issue 32.14: 0.3 s of an evaluate() with one rubric).
_HOME = {
    "MetricOptions": "rubriceval.standard_metrics.options",
    "list_metrics": "rubriceval.standard_metrics.registry", "needs_embedder": "rubriceval.standard_metrics.registry",
    "needs_judge": "rubriceval.standard_metrics.registry", "planned_calls": "rubriceval.standard_metrics.registry",
    "planned_requests": "rubriceval.standard_metrics.registry", "score_sample": "rubriceval.standard_metrics.registry",
    "judge_cache_lookup": "rubriceval.standard_metrics.single_turn",
    "METRICS": "rubriceval.standard_metrics.catalog", "RAGAS_FIVE": "rubriceval.standard_metrics.catalog",
}
__all__ = sorted(_HOME)

__getattr__ = lazy_exports(__name__, _HOME, globals())
