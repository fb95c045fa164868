"""The labelled Chinese RAG set and its benchmark (issue 29): the set is what the issue asks for, its labels are
consistent with its texts, and the benchmark's per-sample diagnosis is the report's."""
from __future__ import annotations

from collections import Counter

from benchmarks.judge.rag_zh import VARIANTS, figures, first_stage, load, samples, score_row
from rubriceval.core.verdict import Verdict
from rubriceval.standard_metrics.grounding import ground
from rubriceval.standard_metrics.nonllm_context import nonllm_context_recall
from rubriceval.testing.scripted_judge import ScriptedJudge, fill_schema

ROWS = load(split="all")


def test_sixty_questions_half_held_out_over_employees_with_duplicate_names_and_policies():
    assert len(ROWS) >= 60
    assert Counter(r["split"] for r in ROWS) == {"heldout": len(ROWS) // 2, "dev": len(ROWS) // 2}
    names = Counter(chunk.split("姓名：")[1].split("｜")[0] for r in ROWS if r["topic"] == "employee"
                    for chunk in (r["correct_chunk"],))
    assert sum(1 for r in ROWS if r["topic"] == "employee") >= 20 and max(names.values()) >= 2
    assert len({r["topic"] for r in ROWS}) >= 8
    for r in ROWS:
        assert set(r["answers"]) == {"faithful", "inventing", "omitting", "wrong_retrieval"}
        assert r["retrievals"]["correct"][0] == r["reference_contexts"][0] != r["retrievals"]["wrong"][0]


def test_labels_agree_with_the_texts():
    for r in ROWS:
        a = r["answers"]
        assert a["inventing"].startswith(a["faithful"].rstrip("。")) and len(a["inventing"]) > len(a["faithful"])
        assert len(a["omitting"]) < len(a["faithful"])
        # the wrong chunk does not hold the ground truth: none of its sentences is found in the ground truth
        assert not ground([a["wrong_retrieval"].replace("根据公司规定，", "")], r["ground_truth"]).kept
        assert nonllm_context_recall(r["retrievals"]["correct"], r["reference_contexts"]).score == 1.0
        assert nonllm_context_recall(r["retrievals"]["wrong"], r["reference_contexts"]).score == 0.0


def verdict(scorer: str, score: float) -> Verdict:
    return Verdict(sample_id="x", scorer=scorer, kind="metric", scorer_version="1", score=score)


def test_the_diagnosis_of_a_sample_is_the_reports_first_finding():
    assert first_stage([verdict("context_recall", 0.0), verdict("faithfulness", 0.3)]) == "retrieval"
    assert first_stage([verdict("context_recall", 1.0), verdict("faithfulness", 0.5)]) == "generation"
    assert first_stage([verdict("context_recall", 1.0), verdict("faithfulness", 1.0)]) is None


async def test_a_row_is_scored_with_the_labels_and_the_cut():
    row = ROWS[1]
    (_, variant, sample), = [s for s in samples([row], ["wrong_retrieval"])]
    judge = ScriptedJudge({"extract_statements": {"answer_statements": ["张伟职位是课程研发工程师"],
                                                  "ground_truth_statements": [row["ground_truth"].rstrip("。")]},
                           "judge_contexts": fill_schema(True)})
    trusting = await score_row(row, variant, sample, "split_per_context", ["context_recall", "faithfulness"], judge)
    checked = await score_row(row, variant, sample, "split_per_context+text", ["context_recall", "faithfulness"],
                              judge)
    assert trusting.expected_stage == "retrieval" and not trusting.retrieval_ok
    assert trusting.scores["context_recall"] == 1.0 and trusting.stage is None    # the judge said yes to all
    assert trusting.stage_cross_checked == "retrieval"                            # nonllm recall 0 sees it
    assert checked.scores["context_recall"] == 0.0 and checked.stage == "retrieval"
    assert trusting.planned_calls == 2 + len(sample.contexts)
    result = figures([trusting, checked])
    assert result["split_per_context"]["diagnosis_accuracy"] == 0.0
    assert result["split_per_context+text"]["diagnosis_accuracy"] == 1.0
    assert set(VARIANTS) == {"good", "wrong_retrieval", "inventing", "omitting"}
