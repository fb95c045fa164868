"""The spine and the metrics on the real embedded judge (slow; still part of `make test`)."""
import asyncio

import pytest

from rubriceval import EmbedderConfig, JudgeConfig, load_rubric, read_dataset
from rubriceval.local.backends import make_embedder, make_judge
from rubriceval.scoring.rubric_scorer import score_rubric

pytestmark = pytest.mark.local_model

SAMPLES = {s.id: s for s in read_dataset("datasets/demo_cs_zh.jsonl")}


def test_emotional_soothing_good_answer_scores_above_curt_answer(tmp_path):
    rubric = load_rubric("rubrics/emotional_soothing.yaml")

    async def go():
        judge = make_judge(JudgeConfig(cache_path=str(tmp_path / "cache.sqlite")), announce=False)
        try:
            return await asyncio.gather(score_rubric(rubric, SAMPLES["delay-good"], judge),
                                        score_rubric(rubric, SAMPLES["delay-curt"], judge))
        finally:
            await judge.close()

    good, curt = asyncio.run(go())
    assert good.score is not None and curt.score is not None, (good.unscored_reason, curt.unscored_reason)
    assert good.score > curt.score, (good.feedback, curt.feedback)
    assert good.feedback and good.usage.calls >= 1 and good.usage.prompt_tokens > 0


def test_every_llm_metric_runs_on_the_embedded_judge(tmp_path):
    from rubriceval.standard_metrics.registry import score_sample

    names = ["answer_correctness", "faithfulness", "answer_relevancy", "context_precision", "context_recall",
             "answer_validity", "context_usefulness"]

    async def go():
        judge = make_judge(JudgeConfig(cache_path=str(tmp_path / "cache.sqlite")), announce=False)
        embedder = make_embedder(EmbedderConfig(), announce=False)
        try:
            return await score_sample(SAMPLES["exp-good"], names, judge=judge, embedder=embedder)
        finally:
            await judge.close()

    verdicts = asyncio.run(go())
    assert [v.scorer for v in verdicts] == names
    for v in verdicts:
        # The 1.5B judge is weak, so values are not asserted; every metric must end scored in [0, 1] or say why.
        assert (v.score is not None and 0.0 <= v.score <= 1.0) or v.unscored_reason, v
    # Shared work: 4 calls for the five metrics + 2 naive testers; each call may be re-asked once on invalid output.
    assert sum(v.usage.calls for v in verdicts) <= 12
