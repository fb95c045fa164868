"""Self-consistency: n distinct sampled judgements → median score, spread, and the unscored rules."""
from __future__ import annotations

import json

import pytest

from rubriceval import Verdict
from rubriceval.judge.client import JudgeClient
from rubriceval.scoring.combine import round_half_up
from rubriceval.testing.scripted_judge import ScriptedJudge
from rubriceval.trust.self_consistency import (
    DETAILS_KEY,
    score_with_self_consistency,
    summarize_scores,
    uncertainty,
)
from tests.trust.test_trust_audits import sample, tone_rubric


class SeededJudge(ScriptedJudge):
    """Answers by the call's seed (as a sampling judge would differ per seed); records the sampling settings."""

    def __init__(self, by_seed: dict[int, int | None]):
        super().__init__(lambda messages: "")
        self.by_seed = by_seed
        self.settings: list[tuple[float, int]] = []

    async def complete(self, messages, **kwargs):
        self.settings.append((self.config.temperature, self.config.seed))
        score = self.by_seed[self.config.seed]
        self.script = lambda _: "no score here" if score is None else json.dumps({"feedback": f"f{score}",
                                                                                  "score": score})
        return await super().complete(messages, **kwargs)


def test_arithmetic():
    assert summarize_scores([2, 5, 3, 3, 4]) == (3.0, 3.0, pytest.approx(1.0198, abs=1e-4))
    assert summarize_scores([4, 4]) == (4.0, 0.0, 0.0)
    assert round_half_up(3.5) == 4 and round_half_up(2.5) == 3 and round_half_up(2.49) == 2


async def test_median_and_spread_from_distinct_seeds():
    judge = SeededJudge({1: 2, 2: 5, 3: 3, 4: 3, 5: 4})                 # config seed 0 → seeds 1..5
    verdict = await score_with_self_consistency(tone_rubric(), sample(1), judge, n=5, temperature=0.7)
    assert verdict.score == 3.0 and verdict.passed is False
    info = verdict.details[DETAILS_KEY]
    assert info["scores"] == [2, 5, 3, 3, 4] and info["median"] == 3 and info["spread"] == 3
    assert info["agreement"] == pytest.approx(2 / 5) and info["n_unscored"] == 0
    assert sorted(judge.settings) == [(0.7, s) for s in range(1, 6)]   # five distinct calls, sampling on
    assert verdict.feedback == "f3"                                     # text of a call that gave the final score
    assert verdict.usage.calls == 5
    assert uncertainty(verdict) == 3.0
    assert uncertainty(Verdict(sample_id="x", scorer="tone", score=3.0)) is None


async def test_even_count_rounds_half_up_and_notes_the_unscored_call():
    judge = SeededJudge({1: 2, 2: 3, 3: None, 4: 4, 5: 5})
    verdict = await score_with_self_consistency(tone_rubric(), sample(1), judge, n=5)
    info = verdict.details[DETAILS_KEY]
    assert info["median"] == 3.5 and verdict.score == 4.0 and info["n_unscored"] == 1
    assert info["unscored_reasons"] and verdict.unscored_reason is None


async def test_feedback_is_marked_when_no_call_gave_the_median():
    judge = SeededJudge({1: 2, 2: 5})
    verdict = await score_with_self_consistency(tone_rubric(), sample(1), judge, n=2)
    assert verdict.score == 4.0                                         # median 3.5 → 4, which no call gave
    assert verdict.feedback.startswith("[median of 2 judgements = 4; this feedback is from a 5]")


async def test_without_a_scored_majority_the_verdict_is_unscored():
    judge = SeededJudge({1: 4, 2: None, 3: None, 4: 5})
    verdict = await score_with_self_consistency(tone_rubric(), sample(1), judge, n=4)
    assert verdict.score is None and verdict.unscored_kind == "parse_error"
    assert "only 2 of 4 self-consistency calls were scored" in verdict.unscored_reason
    assert verdict.details[DETAILS_KEY]["scores"] == [4, 5]


async def test_bad_arguments():
    with pytest.raises(ValueError):
        await score_with_self_consistency(tone_rubric(), sample(1), SeededJudge({}), n=0)
    with pytest.raises(ValueError, match="temperature"):
        await score_with_self_consistency(tone_rubric(), sample(1), SeededJudge({}), n=3, temperature=0)


async def test_real_client_sends_distinct_calls_and_caches_them(stub_server, judge_config):
    """Through the HTTP client: n different requests (seed in the body), and a rerun comes from the cache."""
    stub_server.responder = lambda body: {"feedback": "ok", "score": 1 + body["seed"] % 5}
    judge = JudgeClient(judge_config)
    try:
        first = await score_with_self_consistency(tone_rubric(), sample(1), judge, n=3, temperature=0.9)
        again = await score_with_self_consistency(tone_rubric(), sample(1), judge, n=3, temperature=0.9)
    finally:
        await judge.close()
    bodies = [r.body for r in stub_server.stats.requests]
    assert sorted(b["seed"] for b in bodies) == [1, 2, 3] and {b["temperature"] for b in bodies} == {0.9}
    assert first.details[DETAILS_KEY]["scores"] == [2, 3, 4] and first.score == 3.0
    assert again.score == first.score and again.usage.cache_hits == 3 and judge.stats.calls == 3


def test_a_run_with_self_consistency_judges_n_times_plans_it_and_orders_the_audit_queue(tmp_path):
    """End to end against the loopback stub: `JudgeConfig.self_consistency = 3` (CLI `--self-consistency 3`)."""
    from rubriceval import AuditStore, JudgeConfig, evaluate, load_rubrics, plan_cost, read_dataset
    from rubriceval.store.audit_models import QueueFilter
    from rubriceval.testing.stub_server import StubServer

    # Every row: the order-delay rows the rubric applies to must be several, so the stub's seeded spreads can differ
    # (with the first 6 rows only 2 were judged, and a rubric edit that re-seeds the stub left both at spread 3).
    samples = read_dataset("datasets/demo_cs_zh.jsonl")
    rubrics = [r for r in load_rubrics("rubrics") if r.id in {"emotional_soothing", "required_link"}]
    with StubServer() as stub:
        cfg = JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(tmp_path / "cache.sqlite"),
                          timeout_s=2, self_consistency=3)
        plan = plan_cost(samples, rubrics, [], cfg)
        result = evaluate(samples, rubrics=rubrics, judge=cfg, store=tmp_path / "runs.sqlite", progress=False)
        judged = [v for v in result.verdicts if v.scorer == "emotional_soothing"]
        # The rubric ships checklist_fitted, with weights fitted for the embedded judge: on this judge it runs its
        # level rule, one call per checklist question, n times (rubriceval/scoring/judge_mode.py).
        from rubriceval.scoring.judge_mode import with_judge_mode

        (in_run,), _ = with_judge_mode([r for r in rubrics if r.id == "emotional_soothing"], None,
                                       judge_models=[cfg.model])
        assert in_run.judge_mode == "checklist"
        per_judgment = len(in_run.checklist_items[0].questions)
        assert judged and stub.stats.calls["chat"] == 3 * per_judgment * len(judged) == plan.calls
        for verdict in judged:
            info = verdict.details[DETAILS_KEY]
            assert info["n"] == 3 and info["seeds"] == [1, 2, 3] and info["temperature"] == 0.7
        # A checks-only rubric has no judge to ask again.
        assert all(DETAILS_KEY not in v.details for v in result.verdicts if v.scorer == "required_link")
        assert plan_cost(samples, rubrics, [], cfg).cached == plan.calls   # the n calls are cached

    # The audit queue can put the items the judge was least sure of first.
    with AuditStore(tmp_path / "runs.sqlite") as audits:
        rows = audits.queue(result.run_id, QueueFilter(scorer="emotional_soothing", order="uncertain_first"))
    spreads = [r.spread for r in rows]
    assert len(set(spreads)) > 1, spreads        # the stub answers by seed, so the n calls differ
    assert spreads == sorted(spreads, reverse=True)
    assert spreads == sorted(v.details[DETAILS_KEY]["spread"] for v in judged)[::-1]


def test_cli_self_consistency_flag_reaches_the_plan(tmp_path, capsys):
    import re

    from rubriceval.cli import main

    def planned_calls(*extra):
        args = ["run", "datasets/demo_cs_zh.jsonl", "--rubrics", "rubrics", "--only", "emotional_soothing",
                "--dry-run", "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--no-cache", *extra]
        assert main(args) == 0
        out = capsys.readouterr().out
        return int(re.search(r"emotional_soothing\D+?(\d+)\D+?(\d+)", out).group(2)), out

    once, out = planned_calls()
    thrice, _ = planned_calls("--self-consistency", "3")
    assert once > 0 and thrice == 3 * once, out
