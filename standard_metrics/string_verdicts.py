"""Answer vs ground-truth string metrics as Sample-level metrics (formulas in `string_metrics`).

Edge cases: an empty (or blank) answer or ground truth → unscored "missing_field" — on the raw functions,
Ragas scores "" against "" as an exact match and "" as present in any text, which says nothing about a
chatbot. ROUGE over a ground truth with no word or CJK token (e.g. "...") → unscored "no_statements".
"""
from __future__ import annotations

from collections.abc import Callable

from rubriceval.standard_metrics import string_metrics as sm
from rubriceval.standard_metrics.context import MetricContext, MetricResult, Unscorable
from rubriceval.standard_metrics.spec import MetricSpec
from rubriceval.standard_metrics.text import rouge_tokens

_FIELDS = ("answer", "ground_truth")


def _simple(name: str, summary: str, formula: Callable[[str, str], float]) -> MetricSpec:
    def compute(ctx: MetricContext) -> MetricResult:
        return MetricResult(score=formula(ctx.sample.ground_truth, ctx.sample.answer))
    return MetricSpec(name=name, family="string", summary=summary, required_fields=_FIELDS, compute=compute)


def _similarity(measure: sm.SimilarityMeasure) -> Callable[[str, str], float]:
    return lambda reference, response: sm.string_similarity(reference, response, measure)


def _bleu(ctx: MetricContext) -> MetricResult:
    reference, response = ctx.sample.ground_truth, ctx.sample.answer
    tokenize = ctx.options.bleu_tokenize or sm.bleu_tokenizer_for(reference, response)
    return MetricResult(score=sm.bleu(reference, response, tokenize), details={"tokenize": tokenize})


def _rouge(n: int | None) -> Callable[[MetricContext], MetricResult]:
    def compute(ctx: MetricContext) -> MetricResult:
        reference, response = ctx.sample.ground_truth, ctx.sample.answer
        tokenizer = ctx.options.rouge_tokenizer
        result = (sm.rouge_l(reference, response, tokenizer) if n is None
                  else sm.rouge_n(reference, response, n, tokenizer))
        if result is None:
            raise Unscorable("no_statements", ctx.text("标准答案中没有可比较的词或汉字",
                                                       "the ground truth has no word or CJK character to compare"))
        return MetricResult(score=result.fmeasure,
                            details={**result.model_dump(), "tokenizer": tokenizer,
                                     "reference_tokens": len(rouge_tokens(reference, tokenizer))})
    return compute


SPECS: list[MetricSpec] = [
    _simple("exact_match", "1 if the answer equals the ground truth exactly", sm.exact_match),
    _simple("string_presence", "1 if the ground truth appears verbatim in the answer", sm.string_presence),
    _simple("levenshtein_similarity", "1 − normalized Levenshtein distance (answer vs ground truth)",
            _similarity("levenshtein")),
    _simple("hamming_similarity", "1 − normalized Hamming distance (shorter text padded)", _similarity("hamming")),
    _simple("jaro_similarity", "Jaro similarity", _similarity("jaro")),
    _simple("jaro_winkler_similarity", "Jaro-Winkler similarity", _similarity("jaro_winkler")),
    MetricSpec(name="bleu", family="string", required_fields=_FIELDS, compute=_bleu,
               summary="sentence BLEU over all sentences (sacrebleu; 'zh' tokenizer for Chinese), smoothed"),
    MetricSpec(name="rouge_1", family="string", required_fields=_FIELDS, compute=_rouge(1),
               summary="ROUGE-1 F over CJK characters / words"),
    MetricSpec(name="rouge_l", family="string", required_fields=_FIELDS, compute=_rouge(None),
               summary="ROUGE-L F (longest common subsequence) over CJK characters / words"),
    MetricSpec(name="chrf", family="string", required_fields=_FIELDS,
               compute=lambda ctx: MetricResult(score=sm.chrf(ctx.sample.ground_truth, ctx.sample.answer)),
               summary="chrF character n-gram F-score (sacrebleu)"),
]
