"""details["item_scores"] is typed (issue 38, item 7): the scorer writes ItemScores, the store keeps it as the same plain
JSON object earlier releases wrote, and the official-score code reads it back typed through ItemScores.read — a check's
result stays a bool and a judge item's score an int, so a failed check is a deduction and a score of 1 is not."""
from __future__ import annotations

from pathlib import Path

from rubriceval.audit.official import deductions, score_without
from rubriceval.audit.plan import SamplingPlan, risk_reasons
from rubriceval.core.item_scores import DETAILS_KEY, ItemScores
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import Rubric
from rubriceval.scoring.consensus import CONSENSUS_KEYS, Consensus, consensus_verdict, stored_consensus
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.scoring.score_probs import ScoreDistribution, stored_distributions
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.team_models import Candidate
from rubriceval.testing.scripted_judge import ScriptedJudge
from tests.helpers.appeal_store import CHECK, DEFINITION, RUBRIC
from tests.judge.test_ties import RUBRIC as HOLISTIC
from tests.judge.test_ties import SAMPLE, reply


def _stored(folder: Path, verdict: Verdict, sample: Sample) -> tuple[RunStore, str]:
    store = RunStore(folder / "runs.sqlite")
    run_id = store.create_run(RunConfig(), [sample], [(RUBRIC, "rubric", "1", DEFINITION)])
    store.save_verdicts(run_id, [(verdict, "")])
    return store, run_id


async def test_a_scored_verdict_round_trips_through_the_store_and_reads_back_typed(tmp_path: Path) -> None:
    rubric = Rubric.model_validate(DEFINITION)
    sample = Sample(id="s1", question="我的快递还没到", answer="非常抱歉，给您包邮补发")     # the must check fails
    verdict = await score_rubric(rubric, sample, ScriptedJudge(['{"feedback": "先道歉了", "score": 4}']))
    assert verdict.score == 2                    # judge 4, capped at 2 by the failed must check
    store, run_id = _stored(tmp_path, verdict, sample)
    try:
        [back] = store.verdicts(run_id)
    finally:
        store.close()
    scores = ItemScores.read(back.details)
    assert scores is not None and scores.items() == [("judge", 4), (CHECK, False)]
    assert [type(result) for _, result in scores.items()] == [int, bool]
    assert deductions("rubric", back.details) == [CHECK]
    assert score_without("rubric", DEFINITION, back.details, [CHECK]) == 4.0


def test_a_verdict_stored_by_an_earlier_release_still_reads(tmp_path: Path) -> None:
    """Earlier releases wrote details as a plain dict: the JSON row is read as it is, with no migration."""
    sample = Sample(id="s1", question="q", answer="a")
    store, run_id = _stored(tmp_path, Verdict(sample_id="s1", scorer=RUBRIC, score=5.0, passed=True), sample)
    try:
        with store.lock, store.conn:
            store.conn.execute("UPDATE verdicts SET details_json = ? WHERE run_id = ?",
                               ('{"combine": "judge", "item_scores": {"judge": 5, "no_free_shipping": false}}',
                                run_id))
        [back] = store.verdicts(run_id)
    finally:
        store.close()
    assert ItemScores.read(back.details) == ItemScores({"judge": 5, CHECK: False})
    assert deductions("rubric", back.details) == [CHECK]
    assert score_without("rubric", DEFINITION, back.details, [CHECK]) == 5.0


def test_check_results_and_judge_scores_keep_their_types() -> None:
    scores = ItemScores.read({DETAILS_KEY: {"judge": 1, "a": True, "b": False, "c": None}})
    assert scores is not None and scores.failed_checks() == ["b"]
    assert [type(result) for _, result in scores.items()] == [int, bool, bool, type(None)]
    assert scores.details() == {DETAILS_KEY: {"judge": 1, "a": True, "b": False, "c": None}}


def test_details_without_item_results_read_as_none() -> None:
    assert ItemScores.read(None) is None
    assert ItemScores.read({"combine": "judge"}) is None                    # an unscored verdict keeps none
    assert ItemScores.read({DETAILS_KEY: {}}) is None
    assert ItemScores.read({DETAILS_KEY: ["judge", 4]}) is None             # not an object: nothing to recompute from
    assert ItemScores.read({DETAILS_KEY: {"judge": "four"}}) is None
    assert deductions("rubric", {DETAILS_KEY: {"judge": "four"}}) == []


async def test_score_probs_round_trip_and_the_audit_plan_reads_them_typed(tmp_path: Path) -> None:
    judge = ScriptedJudge([reply(4, {"4": 0.50, "3": 0.45})], score_logprobs=True)
    verdict = await score_rubric(HOLISTIC, SAMPLE, judge)
    store = RunStore(tmp_path / "runs.sqlite")
    try:
        run_id = store.create_run(RunConfig(), [SAMPLE], [(HOLISTIC.id, "rubric", "1", HOLISTIC.model_dump(mode="json"))])
        store.save_verdicts(run_id, [(verdict, "")])
        [back] = store.verdicts(run_id)
    finally:
        store.close()
    [(item, distribution)] = stored_distributions(back.details).items()
    assert item == "judge" and isinstance(distribution, ScoreDistribution)
    assert distribution.tie and (distribution.first, distribution.second) == (4, 3)
    candidate = Candidate(sample_id=SAMPLE.id, scorer=HOLISTIC.id, judge_score=back.score)
    plan = SamplingPlan(n=1, risk=["low_confidence"])
    assert risk_reasons(back.details, [], candidate, set(), set(), plan) == ["low_confidence"]
    sure = {"score_probs": {"judge": {**distribution.model_dump(), "tie": False, "margin": 0.9}}}
    assert risk_reasons(sure, [], candidate, set(), set(), plan) == []
    assert stored_distributions({"score_probs": {"judge": {"tie": True}}}) == {}      # not a distribution: left out


def test_several_judgements_round_trip_and_read_back_typed(tmp_path: Path) -> None:
    sample = Sample(id="s1", question="q", answer="a")
    judged = [Verdict(sample_id="s1", scorer=RUBRIC, score=float(score), passed=score >= 4) for score in (1, 4, 5)]
    for key in CONSENSUS_KEYS:                  # self-consistency's key, then the panel's
        verdict = consensus_verdict(judged, Consensus(n=3), threshold=4, min_scored=2, details_key=key,
                                    label="judgements")
        store, run_id = _stored(tmp_path / key, verdict, sample)
        try:
            [back] = store.verdicts(run_id)
        finally:
            store.close()
        several = stored_consensus(back.details)
        assert several is not None and (several.scores, several.spread, several.disagreement) == ([1.0, 4.0, 5.0], 4.0, True)
    assert stored_consensus({"combine": "judge"}) is None                       # judged once
    assert stored_consensus({CONSENSUS_KEYS[0]: {"spread": 2}}) is None         # not a Consensus (no n)
