"""Non-LLM context precision/recall against Ragas 0.2.15's values, and their Sample-level edge cases."""
from __future__ import annotations

import json

import pytest

from rubriceval import Sample
from rubriceval.standard_metrics.nonllm_context import (
    nonllm_context_precision,
    nonllm_context_recall,
    similarity_matrix,
)
from rubriceval.standard_metrics.registry import score_sample
from tests.fixture_files import fixture_path

REFERENCE = fixture_path("reference")
ROWS = [json.loads(line) for line in (REFERENCE / "context_metrics.jsonl").read_text("utf-8").splitlines()
        if line.strip()]
SCORABLE = [r for r in ROWS if r["retrieved_contexts"] and r["reference_contexts"]]


@pytest.mark.parametrize("row", SCORABLE, ids=lambda r: r["id"])
def test_matches_ragas_values_and_similarity_matrix(row):
    retrieved, reference, ragas = row["retrieved_contexts"], row["reference_contexts"], row["ragas"]
    matrix = similarity_matrix(retrieved, reference)
    expected_matrix = ragas["similarity_matrix_retrieved_x_reference"]
    assert len(matrix) == len(expected_matrix)
    for ours_row, their_row in zip(matrix, expected_matrix):
        assert ours_row == pytest.approx(their_row, abs=1e-9)
    precision = nonllm_context_precision(retrieved, reference)
    recall = nonllm_context_recall(retrieved, reference)
    assert precision.score == pytest.approx(ragas["ragas_nonllm_context_precision_with_reference"]["value"], abs=1e-9)
    assert recall.score == pytest.approx(ragas["ragas_nonllm_context_recall"]["value"], abs=1e-9)


def test_threshold_is_inclusive_for_precision_and_exclusive_for_recall_as_ragas():
    row = next(r for r in ROWS if r["id"] == "ctx_threshold_exact_half")
    assert similarity_matrix(row["retrieved_contexts"], row["reference_contexts"]) == [[0.5]]
    assert nonllm_context_precision(row["retrieved_contexts"], row["reference_contexts"]).score == 1.0
    assert nonllm_context_recall(row["retrieved_contexts"], row["reference_contexts"]).score == 0.0


def test_seed_example_gugong():
    # 故宫在北京 vs 故宫位于北京: similarity 1 − 2/6 = 0.667 > 0.5 → relevant and recalled (seeds print 1.0)
    precision = nonllm_context_precision(["故宫在北京"], ["故宫位于北京"])
    recall = nonllm_context_recall(["故宫在北京"], ["故宫位于北京"])
    assert precision.best_similarity == [pytest.approx(2 / 3)]
    assert precision.score == 1.0 and recall.score == 1.0


def test_ranking_matters_for_precision_not_recall():
    reference = ["Doc A about refunds.", "Doc B about shipping.", "Doc D about returns."]
    good = ["Doc A about refunds.", "Doc B about shipping.", "Unrelated zebra text!", "Doc D about returns."]
    bad = list(reversed(good))
    assert nonllm_context_precision(good, reference).verdicts == [1, 1, 0, 1]
    assert nonllm_context_precision(good, reference).score > nonllm_context_precision(bad, reference).score
    assert nonllm_context_recall(good, reference).score == nonllm_context_recall(bad, reference).score == 1.0


@pytest.mark.parametrize("row_id", ["ctx_empty_retrieved_list", "ctx_empty_reference_list"])
def test_empty_lists_raise_in_the_formula(row_id):
    row = next(r for r in ROWS if r["id"] == row_id)
    with pytest.raises(ValueError):
        nonllm_context_precision(row["retrieved_contexts"], row["reference_contexts"])
    with pytest.raises(ValueError):
        nonllm_context_recall(row["retrieved_contexts"], row["reference_contexts"])


@pytest.mark.parametrize("row_id,empty_field", [("ctx_empty_retrieved_list", "contexts"),
                                               ("ctx_empty_reference_list", "reference_contexts")])
async def test_empty_lists_are_unscored_with_a_reason_not_nan(row_id, empty_field):
    # Ragas: NaN recall for an empty reference list, an exception or 0.0 elsewhere.
    row = next(r for r in ROWS if r["id"] == row_id)
    sample = Sample(id=row_id, question="q", contexts=row["retrieved_contexts"],
                    reference_contexts=row["reference_contexts"])
    for verdict in await score_sample(sample, ["nonllm_context_precision", "nonllm_context_recall"]):
        assert verdict.score is None and verdict.unscored_kind == "missing_field"
        assert empty_field in verdict.unscored_reason


async def test_verdicts_carry_the_matrix_and_honour_options():
    sample = Sample(id="x", question="故宫位于哪里？", contexts=["北京是中国的首都", "故宫在北京"],
                    reference_contexts=["故宫位于北京"])
    precision, recall = await score_sample(sample, ["nonllm_context_precision", "nonllm_context_recall"])
    assert precision.score == pytest.approx(0.5)            # the relevant context is ranked second
    assert recall.score == 1.0
    assert precision.details["verdicts"] == [0, 1]
    assert precision.details["similarity_matrix"][1] == [pytest.approx(2 / 3)]
    strict = await score_sample(sample, ["nonllm_context_recall"], options={"nonllm_threshold": 0.7})
    assert strict[0].score == 0.0
