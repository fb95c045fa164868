"""String metrics against the reference fixtures: equal where the reference is right, documented where not."""
from __future__ import annotations

import json

import pytest

from rubriceval import Sample
from rubriceval.standard_metrics.registry import score_sample
from rubriceval.standard_metrics.string_metrics import (
    bleu,
    chrf,
    exact_match,
    levenshtein_distance,
    normalized_levenshtein_distance,
    rouge_l,
    rouge_n,
    string_presence,
    string_similarity,
)
from rubriceval.standard_metrics.text import has_cjk, rouge_tokens
from tests.fixture_files import fixture_path

REFERENCE = fixture_path("reference")
STRING_ROWS = [json.loads(line) for line in (REFERENCE / "string_metrics.jsonl").read_text("utf-8").splitlines()
               if line.strip()]
RAGAS_TEST_ROWS = [json.loads(line) for line in
                   (REFERENCE / "ragas_test_inputs_values.jsonl").read_text("utf-8").splitlines() if line.strip()]

EDIT_METRICS = {
    "ragas_exact_match": exact_match,
    "ragas_string_presence": string_presence,
    "ragas_nonllm_string_similarity_levenshtein": lambda r, s: string_similarity(r, s, "levenshtein"),
    "ragas_nonllm_string_similarity_hamming": lambda r, s: string_similarity(r, s, "hamming"),
    "ragas_nonllm_string_similarity_jaro": lambda r, s: string_similarity(r, s, "jaro"),
    "ragas_nonllm_string_similarity_jaro_winkler": lambda r, s: string_similarity(r, s, "jaro_winkler"),
}

# Where our BLEU deliberately differs from Ragas 0.2.15 (see string_metrics.py), and why.
BLEU_DIFFERS_FROM_RAGAS = {
    "zh_identical": "chinese_tokenizer", "zh_one_char": "chinese_tokenizer", "zh_paraphrase": "chinese_tokenizer",
    "zh_substring": "chinese_tokenizer", "zh_vs_en": "chinese_tokenizer", "zh_fullwidth": "chinese_tokenizer",
    "zh_spaced_tokens": "chinese_tokenizer", "mixed_zh_en": "chinese_tokenizer",
    "en_multisent_same_count": "first_sentence_only", "en_multisent_diff_count": "first_sentence_only",
    "en_whitespace": "first_sentence_only", "newline": "first_sentence_only",
    "emoji": "short_text_zero", "en_reordered": "short_text_zero",
}


def _value(row: dict, source: str, key: str):
    return row[source][key]["value"]


@pytest.mark.parametrize("row", STRING_ROWS, ids=lambda r: r["id"])
def test_edit_distance_metrics_equal_ragas(row):
    for key, formula in EDIT_METRICS.items():
        assert formula(row["reference"], row["response"]) == pytest.approx(_value(row, "ragas", key), abs=1e-9), key
    direct = row["direct"]
    assert levenshtein_distance(row["reference"], row["response"]) == direct["rapidfuzz_levenshtein_distance"]["value"]
    assert normalized_levenshtein_distance(row["reference"], row["response"]) == pytest.approx(
        direct["rapidfuzz_levenshtein_normalized_distance"]["value"], abs=1e-9)


@pytest.mark.parametrize("row", STRING_ROWS, ids=lambda r: r["id"])
def test_bleu_is_sacrebleu_sentence_bleu_with_the_right_tokenizer(row):
    ours = bleu(row["reference"], row["response"])
    chinese = has_cjk(row["reference"]) or has_cjk(row["response"])
    expected = _value(row, "direct", "sacrebleu_sentence_bleu_zh" if chinese else "sacrebleu_sentence_bleu_13a") / 100
    assert ours == pytest.approx(expected, abs=1e-9)


def test_bleu_differs_from_ragas_exactly_where_documented():
    differing = {row["id"] for row in STRING_ROWS
                 if abs(bleu(row["reference"], row["response"]) - _value(row, "ragas", "ragas_bleu_score")) > 1e-9}
    assert differing == set(BLEU_DIFFERS_FROM_RAGAS)
    by_id = {row["id"]: row for row in STRING_ROWS}
    for row_id, why in BLEU_DIFFERS_FROM_RAGAS.items():
        row = by_id[row_id]
        ours, theirs = bleu(row["reference"], row["response"]), _value(row, "ragas", "ragas_bleu_score")
        if why in ("chinese_tokenizer", "short_text_zero"):
            assert theirs < ours, row_id          # Ragas scores these too low (mostly 0)
    # identical Chinese text is a perfect match, not 0
    assert bleu("埃菲尔铁塔位于巴黎。", "埃菲尔铁塔位于巴黎。") == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["test", "Hello World", "Text A", "故宫", "退款"])
def test_identical_short_texts_score_one_unlike_ragas(text):
    assert bleu(text, text) == pytest.approx(1.0)


def test_bleu_scores_every_sentence_not_only_the_first():
    reference = "The cat sat on the mat. It was happy."
    same_first_sentence = "The cat sat on the mat. It was sad."
    assert bleu(reference, reference) == pytest.approx(1.0)
    assert bleu(reference, same_first_sentence) < 0.9        # Ragas gives 1.0: it never reads sentence two


@pytest.mark.parametrize("row", STRING_ROWS, ids=lambda r: r["id"])
def test_chrf_equals_sacrebleu(row):
    assert chrf(row["reference"], row["response"]) == pytest.approx(
        _value(row, "direct", "sacrebleu_sentence_chrf") / 100, abs=1e-9)


ENGLISH_ROWS = [r for r in STRING_ROWS if not (has_cjk(r["reference"]) or has_cjk(r["response"]))]


@pytest.mark.parametrize("row", ENGLISH_ROWS, ids=lambda r: r["id"])
def test_rouge_equals_rouge_score_without_stemming_on_english(row):
    for ours, key in ((rouge_l(row["reference"], row["response"]), "rouge_score_nostem_rougeL"),
                      (rouge_n(row["reference"], row["response"], 1), "rouge_score_nostem_rouge1")):
        expected = _value(row, "direct", key)
        if ours is None:   # reference without any token: rouge-score says 0, we decline to score
            assert not rouge_tokens(row["reference"]) and expected["fmeasure"] == 0
            continue
        for part in ("precision", "recall", "fmeasure"):
            assert getattr(ours, part) == pytest.approx(expected[part], abs=1e-9), (key, part)


def test_rouge_differs_from_ragas_on_english_only_by_stemming():
    differing = set()
    for row in ENGLISH_ROWS:
        ours = rouge_l(row["reference"], row["response"])
        if abs((ours.fmeasure if ours else 0.0) - _value(row, "ragas", "ragas_rouge_score_rougeL_fmeasure")) > 1e-9:
            differing.add(row["id"])
            stem, nostem = (_value(row, "direct", f"rouge_score_{v}_rougeL")["fmeasure"] for v in ("stem", "nostem"))
            assert stem != nostem            # the whole difference is Ragas's Porter stemmer
    assert differing == {"en_stemming"}


@pytest.mark.parametrize("reference,response,expected", [
    ("埃菲尔铁塔位于巴黎。", "埃菲尔铁塔位于巴黎。", 1.0),            # rouge-score: 0
    ("您的订单已发货。", "您的订单未发货。", 6 / 7),                # 7 characters each, LCS 6
    ("七天无理由退货", "本店支持七天无理由退货，请保留包装。", 14 / 23),  # P 7/16, R 1
    ("订单号：ABC123", "订单号:ＡＢＣ１２３", 1.0),                 # NFKC folds full-width forms
    ("發貨時間", "发货时间", 0.0),                                 # different characters
])
def test_rouge_l_reads_chinese(reference, response, expected):
    assert rouge_l(reference, response).fmeasure == pytest.approx(expected, abs=1e-12)


def test_rouge_score_drops_chinese_but_we_do_not():
    row = next(r for r in STRING_ROWS if r["id"] == "zh_paraphrase")
    # rouge-score keeps only the digits 3 and 5 and reports a perfect 1.0 for a paraphrase
    assert _value(row, "direct", "rouge_score_nostem_rougeL")["fmeasure"] == 1.0
    ours = rouge_l(row["reference"], row["response"]).fmeasure
    assert 0.3 < ours < 0.9


def test_rouge_jieba_mode_scores_words_from_the_segmenter(monkeypatch):
    # A stub segmenter keeps the test fast (jieba builds its dictionary in ~4 s); what is tested is that CJK runs
    # go through the segmenter and its words, not characters, become the ROUGE tokens.
    import rubriceval.standard_metrics.text as text

    class StubJieba:
        @staticmethod
        def lcut(chunk: str) -> list[str]:
            return [chunk[i:i + 2] for i in range(0, len(chunk), 2)]

    monkeypatch.setattr(text, "_jieba", lambda: StubJieba)
    assert rouge_tokens("退款将在3个工作日内到账", "jieba") == ["退款", "将在", "3", "个工", "作日", "内到", "账"]
    words = rouge_n("退款将在三个工作日", "退款将在五个工作日", 1, "jieba")      # 退款 将在 三个/五个 工作 日
    assert words.fmeasure == pytest.approx(4 / 5)
    assert rouge_n("退款将在三个工作日", "退款将在五个工作日", 1, "char").fmeasure == pytest.approx(8 / 9)


def test_rouge_tokens_match_rouge_score_on_ascii():
    assert rouge_tokens("Hello, World! It's high-level_code 42.") == ["hello", "world", "it", "s", "high", "level",
                                                                        "code", "42"]
    assert rouge_tokens("请登录App查看订单status。") == ["请", "登", "录", "app", "查", "看", "订", "单", "status"]


@pytest.mark.parametrize("row", RAGAS_TEST_ROWS, ids=lambda r: (r["description"] or "none").replace(" ", "_"))
def test_ragas_own_test_inputs(row):
    ref, resp, values = row["reference"], row["response"], row["ragas_0.2.15_values"]
    assert exact_match(ref, resp) == values["exact_match"]
    assert string_presence(ref, resp) == values["string_presence"]
    for measure in ("levenshtein", "hamming", "jaro", "jaro_winkler"):
        assert string_similarity(ref, resp, measure) == pytest.approx(values[f"string_similarity_{measure}"],
                                                                      abs=1e-9)
    for name, ours in (("rougeL", rouge_l(ref, resp)), ("rouge1", rouge_n(ref, resp, 1))):
        for part in ("precision", "recall", "fmeasure"):
            assert (getattr(ours, part) if ours else 0.0) == pytest.approx(values[f"{name}_{part}"], abs=1e-9)
    ours_bleu = bleu(ref, resp)
    short = len(resp.split()) <= 3      # a hypothesis without any 4-gram
    multi_sentence = ". " in ref or ". " in resp
    if short and ref and resp:
        # Ragas: corpus BLEU without effective order → 0 for every text of 1-3 tokens, identical or not
        assert values["bleu"] == 0.0
        if ref.strip() == resp.strip():
            assert ours_bleu == pytest.approx(1.0)
        elif set(ref.split()) & set(resp.split()):
            assert ours_bleu > 0.0                                    # shared words earn credit
    elif multi_sentence and ref != resp:
        assert ours_bleu != pytest.approx(values["bleu"], abs=1e-6)   # Ragas pairs sentence 1 only
    else:
        assert ours_bleu == pytest.approx(values["bleu"], abs=1e-9)


def test_seed_edit_distance_example():
    # 故宫在北京 → 故宫位于北京: substitute 在→位, insert 于 — distance 2, normalised 2/6
    assert levenshtein_distance("故宫在北京", "故宫位于北京") == 2
    assert normalized_levenshtein_distance("故宫在北京", "故宫位于北京") == pytest.approx(1 / 3, abs=1e-12)
    assert string_similarity("故宫位于北京", "故宫在北京") == pytest.approx(2 / 3, abs=1e-12)


async def test_string_metrics_as_verdicts_and_their_edge_cases():
    names = ["exact_match", "string_presence", "levenshtein_similarity", "bleu", "rouge_l", "rouge_1", "chrf"]
    sample = Sample(id="s", question="故宫位于哪里？", answer="故宫在北京。", ground_truth="故宫位于北京。")
    verdicts = {v.scorer: v for v in await score_sample(sample, names)}
    assert verdicts["exact_match"].score == 0.0
    assert verdicts["levenshtein_similarity"].score == pytest.approx(1 - 2 / 7)
    assert verdicts["bleu"].details["tokenize"] == "zh"
    # characters: 故宫在北京 (5) vs 故宫位于北京 (6), LCS 故宫北京 = 4 → P 4/5, R 4/6
    assert verdicts["rouge_l"].score == pytest.approx(2 * (4 / 5) * (4 / 6) / (4 / 5 + 4 / 6))
    assert all(v.kind == "metric" and v.usage.calls == 0 for v in verdicts.values())

    no_truth = sample.model_copy(update={"ground_truth": "  "})
    for verdict in await score_sample(no_truth, names):
        assert verdict.score is None and verdict.unscored_kind == "missing_field"
        assert "ground_truth" in verdict.unscored_reason

    punctuation_truth = sample.model_copy(update={"ground_truth": "……"})
    rouge = (await score_sample(punctuation_truth, ["rouge_l"]))[0]
    assert rouge.score is None and rouge.unscored_kind == "no_statements"
