"""Non-LLM answer-vs-reference metrics: exact match, string presence, edit-distance similarities, BLEU, ROUGE, chrF.

Each function takes (reference, response) and returns a float in [0, 1] (ROUGE: precision/recall/F).
The Sample-level wrappers in `standard_metrics.string_verdicts` decide what an empty ground truth means.

Conformance (tests/standard_metrics/test_metrics_strings.py, fixtures from ragas 0.2.15 / rapidfuzz 3.14.6 / sacrebleu 2.6.0 /
rouge-score 0.1.2):
- exact match, string presence, Levenshtein / Hamming / Jaro / Jaro-Winkler: identical to Ragas on every
  fixture pair (rapidfuzz does the work; Hamming pads the shorter string, as rapidfuzz ≥ 3 does by default).
- BLEU deliberately differs from Ragas: Ragas splits both texts on ". ", pairs only the first sentences and
  runs *corpus* BLEU without effective order, so (a) only the first sentence of a multi-sentence answer is
  scored and (b) identical texts of 1–3 tokens score 0. We run sacrebleu's sentence BLEU over the whole text
  (all sentences), with exponential smoothing and effective order (identical short texts score 1.0), and the
  'zh' tokenizer whenever either text contains CJK (Ragas's 13a tokenizer sees a Chinese sentence as one
  token, so every Chinese pair scores 0). English single-sentence pairs of ≥ 4 tokens equal Ragas exactly.
- ROUGE is our own implementation: rouge-score drops every non-[a-z0-9] character, so Chinese scores 0. We
  tokenize CJK per character (or with jieba) and NFKC-normalise. For English it equals rouge-score without
  stemming; Ragas enables the Porter stemmer, so English pairs that differ only by inflection ("cats"/"cat")
  score lower here. We do not stem: Chinese has no inflection, and stemming English needs nltk.
- chrF: sacrebleu's sentence chrF (character 6-grams, β=2), identical to sacrebleu.
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

from pydantic import BaseModel
from rapidfuzz.distance import Hamming, Jaro, JaroWinkler, LCSseq, Levenshtein
from sacrebleu.metrics import BLEU, CHRF

from rubriceval.standard_metrics.text import RougeTokenizer, SimilarityMeasure, detect_language, rouge_tokens

_MEASURES = {"levenshtein": Levenshtein, "hamming": Hamming, "jaro": Jaro, "jaro_winkler": JaroWinkler}


def exact_match(reference: str, response: str) -> float:
    return float(reference == response)


def string_presence(reference: str, response: str) -> float:
    """1.0 when the reference occurs verbatim in the response (an empty reference trivially does)."""
    return float(reference in response)


def levenshtein_distance(a: str, b: str) -> int:
    """Minimum number of single-character insertions, deletions and substitutions: 故宫在北京 → 故宫位于北京 = 2."""
    return Levenshtein.distance(a, b)


def normalized_levenshtein_distance(a: str, b: str) -> float:
    """distance / max(len): 2 / 6 = 0.333 for the seeds' 故宫 example."""
    return Levenshtein.normalized_distance(a, b)


def string_similarity(reference: str, response: str, measure: SimilarityMeasure = "levenshtein") -> float:
    """1 − normalized distance under the chosen measure (Ragas's NonLLMStringSimilarity). Two empty strings → 1."""
    try:
        distance = _MEASURES[measure]
    except KeyError:
        raise ValueError(f"unknown similarity measure {measure!r}; use one of {sorted(_MEASURES)}") from None
    return 1.0 - distance.normalized_distance(reference, response)


@lru_cache(maxsize=4)
def _bleu(tokenize: str) -> BLEU:
    return BLEU(tokenize=tokenize, effective_order=True, smooth_method="exp")


def bleu_tokenizer_for(reference: str, response: str) -> str:
    return "zh" if detect_language(reference, response) == "zh" else "13a"


def bleu(reference: str, response: str, tokenize: str | None = None) -> float:
    """Sentence BLEU in [0, 1] over the whole response (every sentence), smoothed, effective order."""
    tokenize = tokenize or bleu_tokenizer_for(reference, response)
    return _bleu(tokenize).sentence_score(response, [reference]).score / 100.0


@lru_cache(maxsize=1)
def _chrf() -> CHRF:
    return CHRF()


def chrf(reference: str, response: str) -> float:
    """Sentence chrF in [0, 1] (character n-grams: no tokenizer, so it suits Chinese as it is)."""
    return _chrf().sentence_score(response, [reference]).score / 100.0


class RougeScore(BaseModel):
    precision: float
    recall: float
    fmeasure: float


def _prf(overlap: int, response_len: int, reference_len: int) -> RougeScore:
    precision = overlap / response_len if response_len else 0.0
    recall = overlap / reference_len
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return RougeScore(precision=precision, recall=recall, fmeasure=f)


def rouge_n(reference: str, response: str, n: int = 1, tokenizer: RougeTokenizer = "char") -> RougeScore | None:
    """ROUGE-N: clipped n-gram overlap. None when the reference has no n-grams (nothing to recall)."""
    ref_tokens, resp_tokens = rouge_tokens(reference, tokenizer), rouge_tokens(response, tokenizer)
    ref_grams = Counter(tuple(ref_tokens[i:i + n]) for i in range(len(ref_tokens) - n + 1))
    resp_grams = Counter(tuple(resp_tokens[i:i + n]) for i in range(len(resp_tokens) - n + 1))
    if not ref_grams:
        return None
    overlap = sum((ref_grams & resp_grams).values())
    return _prf(overlap, sum(resp_grams.values()), sum(ref_grams.values()))


def rouge_l(reference: str, response: str, tokenizer: RougeTokenizer = "char") -> RougeScore | None:
    """ROUGE-L: longest common subsequence of tokens. None when the reference has no tokens."""
    ref_tokens, resp_tokens = rouge_tokens(reference, tokenizer), rouge_tokens(response, tokenizer)
    if not ref_tokens:
        return None
    lcs = LCSseq.similarity(ref_tokens, resp_tokens) if resp_tokens else 0
    return _prf(lcs, len(resp_tokens), len(ref_tokens))
