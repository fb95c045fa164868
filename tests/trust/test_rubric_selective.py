"""A rubric's `auto_accept` target applied to its verdicts (issue 44; trust/rubric_selective.py): before reviews every
scored verdict waits for review (kept out of the means and counted apart); audits that agree with the judge open
acceptance on the next run, and a disagreement closes it on the run after; another judge's reviews are ignored; a
review settles a pending verdict and it then counts; pending verdicts join a review plan's risk-first part; a judge
that answers at random gets nothing accepted."""
from __future__ import annotations

import asyncio
import random
import re

import pytest

from rubriceval.audit.official import OfficialScores
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.schema import Rubric
from rubriceval.run.evaluate import start_run
from rubriceval.run.runner import execute
from rubriceval.stats.selective import clopper_pearson_lower, min_reviews
from rubriceval.store.audit import AuditStore
from rubriceval.store.runs import RunStore
from rubriceval.testing.scripted_judge import ScriptedJudge
from rubriceval.trust.rubric_selective import (
    ReviewedVerdict,
    RubricAcceptance,
    rubric_acceptance,
    rubric_mode,
    verdict_confidence,
)
from rubriceval.trust.selective import fit_region

RUBRIC = {"id": "tone", "name": "语气", "version": 1, "language": "zh", "judge_sees": ["question", "answer"],
          "threshold": 4, "criterion": "客服回答的语气是否礼貌、耐心。",
          "score_descriptions": {1: "粗鲁", 2: "冷淡", 3: "一般", 4: "礼貌", 5: "非常礼貌耐心"},
          "items": [{"id": "judge", "type": "judge"}], "auto_accept": {"agreement": 0.9, "confidence": 0.95}}
N = 32                   # conversations a week: more than the 29 reviews 0.9 at 95 % needs, all agreeing


def samples(name: str) -> list[Sample]:
    return [Sample(id=f"{name}-{i}", question="我的订单到哪了？", answer=f"您好，正在查询。编号{1 + i % 5}")
            for i in range(N)]


def scripted(random_scores: int | None = None) -> ScriptedJudge:
    """The judge gives the number the answer carries (or, seeded, a random level)."""
    rng = random.Random(random_scores)

    def reply(request):
        level = int(re.search(r"编号(\d)", request[-1]["content"]).group(1))
        if random_scores is not None:
            level = rng.randint(1, 5)
        return {"feedback": "语气评估", "score": level}
    return ScriptedJudge(reply)


def week(runs: RunStore, name: str, model: str = "small-judge", judge: ScriptedJudge | None = None) -> str:
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model=model)
    run_id, rubrics = start_run(samples(name), [Rubric.model_validate(RUBRIC)], [], store=runs, judge_config=config,
                                name=name)
    asyncio.run(execute(runs, run_id, None, rubrics, [], judge=judge or scripted(), progress=False))
    return run_id


def review(runs: RunStore, run_id: str, disagree: int = 0, truth: dict[str, int] | None = None) -> None:
    """An expert audits every verdict: agrees with the judge, except on the first `disagree` (or gives `truth`)."""
    with AuditStore(runs.path) as audit:
        for index, verdict in enumerate(sorted(runs.verdicts(run_id), key=lambda v: v.sample_id)):
            seen = audit.item(run_id, verdict.sample_id, "tone").versions
            score = int(verdict.score)
            if truth is not None:
                score = truth[verdict.sample_id]
            elif index < disagree:
                score = 1 if score != 1 else 2
            audit.save_response(run_id, verdict.sample_id, "tone", expert="ann", score=score,
                                reason="" if score == verdict.score else "太生硬", expected=seen)


@pytest.fixture
def runs(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    yield store
    store.close()


def counted(runs: RunStore, run_id: str):
    return rubric_acceptance(runs, run_id)[0].items[0]


def test_nothing_is_accepted_before_reviews_and_pending_verdicts_are_in_no_mean(runs, capsys):
    run_id = week(runs, "w1")
    row = counted(runs, run_id)
    assert (row.decisions, row.accepted, row.pending, row.waiting) == (N, 0, N, N)
    assert row.region.accepts == "none"
    assert row.region.reason is not None and row.region.reason.key == "aa_cannot_yet"
    official = OfficialScores.load(runs.conn, run_id)
    assert official.n_pending("tone") == N
    assert official.score("w1-0", "tone", 1.0) is None
    from rubriceval.report.run_data import load_run

    summary = load_run(runs, run_id).summary.get("tone")
    assert summary.n_pending == N and summary.n_scored == 0 and summary.mean is None and summary.n_unscored == 0
    # the judge's own view (machine_only) is unchanged: every verdict with its score
    machine = load_run(runs, run_id, machine_only=True).summary.get("tone")
    assert machine.n_scored == N and machine.n_pending == 0


def test_agreeing_reviews_open_acceptance_and_a_disagreement_closes_it_on_the_next_run(runs):
    review(runs, week(runs, "w1"))                               # 32 audits, all agreeing
    second = week(runs, "w2")
    row = counted(runs, second)
    assert row.region.accepts == "all" and row.region.n_reviewed == N
    assert row.region.lower_bound == pytest.approx(clopper_pearson_lower(N, N, 0.95))
    assert row.region.lower_bound >= 0.9
    assert (row.accepted, row.pending) == (N, 0)
    assert OfficialScores.load(runs.conn, second).n_pending("tone") == 0
    review(runs, second, disagree=4)                             # 60 of 64 agree: the bound falls under 0.9
    assert clopper_pearson_lower(2 * N - 4, 2 * N, 0.95) < 0.9
    third = counted(runs, week(runs, "w3"))
    assert third.region.accepts == "none" and (third.accepted, third.pending) == (0, N)
    assert third.region.reason is not None and third.region.reason.key == "aa_below_target"


def test_another_judges_reviews_are_ignored(runs):
    review(runs, week(runs, "w1", model="big-judge"))
    row = counted(runs, week(runs, "w2", model="small-judge"))
    assert row.region.n_reviewed == 0 and row.region.judge == "small-judge"
    assert (row.accepted, row.pending) == (0, N)


def test_a_review_settles_a_pending_verdict_which_then_counts(runs):
    run_id = week(runs, "w1")
    verdict = next(v for v in runs.verdicts(run_id) if v.sample_id == "w1-3")
    with AuditStore(runs.path) as audit:
        seen = audit.item(run_id, "w1-3", "tone").versions
        audit.save_response(run_id, "w1-3", "tone", expert="ann", score=5, reason="其实很耐心", expected=seen)
    official = OfficialScores.load(runs.conn, run_id)
    assert official.n_pending("tone") == N - 1
    assert official.score("w1-3", "tone", verdict.score) == 5
    from rubriceval.report.run_data import load_run

    summary = load_run(runs, run_id).summary.get("tone")
    assert (summary.n_scored, summary.mean, summary.n_pending, summary.n_human) == (1, 5.0, N - 1, 1)
    row = counted(runs, run_id)
    assert (row.pending, row.waiting) == (N, N - 1)


def test_pending_verdicts_join_the_review_plan_first(runs):
    from rubriceval.audit.plan import parse_plan
    from rubriceval.audit.team import TeamStore
    from rubriceval.audit.team_plan import plan_items

    run_id = week(runs, "w1")
    with TeamStore(runs.path) as team:
        items = plan_items(team, run_id, "tone", parse_plan("2"), seed=1)
    risk = [i for i in items if i.selection.startswith("risk:")]
    assert len(risk) == N - 2 and all(i.selection == "risk:pending_review" for i in risk)


def test_the_run_says_why_a_rubric_accepts_nothing_yet(runs):
    run_id = week(runs, "w1")
    rubric = Rubric.model_validate(RUBRIC)
    lines = RubricAcceptance(runs, run_id, [rubric]).notes()
    assert lines == ["rubric tone: auto_accept on judge small-judge: accepts nothing automatically, every scored "
                     "verdict waits for review: cannot accept anything yet: 0 reviews (at least 29, all agreeing, "
                     "are needed)"]


def test_a_random_judge_gets_nothing_accepted(runs):
    """Reviewers give the true level (the one the answer carries); a judge answering at random agrees about 1 time in
    5: two weeks of reviews accept nothing on the third."""
    truth = {f"{w}-{i}": 1 + i % 5 for w in ("w1", "w2") for i in range(N)}
    review(runs, week(runs, "w1", judge=scripted(random_scores=1)), truth=truth)
    review(runs, week(runs, "w2", judge=scripted(random_scores=2)), truth=truth)
    row = counted(runs, week(runs, "w3", judge=scripted(random_scores=3)))
    assert row.region.n_reviewed == 2 * N and row.accepted == 0 and row.pending == N


@pytest.mark.parametrize("seed", range(200))
def test_random_confidences_and_agreements_accept_nothing(seed):
    """The confidence-ranked fit on a judge whose verdicts agree with reviewers at random (1 in 5, as five levels)
    accepts nothing, whatever the confidences it claims."""
    rng = random.Random(seed)
    reviewed = [ReviewedVerdict(rubric="tone", run_id="r", sample_id=str(i), machine_score=rng.randint(1, 5),
                                reviewed_score=rng.randint(1, 5), source="override", confidence=rng.random())
                for i in range(120)]
    assert rubric_mode(reviewed) == "confidence"
    region = fit_region("tone", "confidence", reviewed, Rubric.model_validate(RUBRIC).auto_accept, "j")
    assert region.accepts == "none"


def test_confidence_is_the_judges_probability_of_its_own_answers():
    details = {"score_probs": {"judge": {"probs": {3: 0.2, 4: 0.7, 5: 0.1}, "expected": 3.9, "written": 4, "first": 4,
                                         "second": 3, "margin": 0.5, "coverage": 1.0, "tie": False}}}
    assert verdict_confidence(details, []) == pytest.approx(0.7)
    assert verdict_confidence({}, [{"item": "q", "p_yes": 0.2}, {"item": "r", "p_yes": 0.9}]) == pytest.approx(0.8)
    assert verdict_confidence({}, [{"item": "c", "passed": True}]) is None
    # a per-turn question a check asked (predicates mode): its answer's probability
    asked = {"item_scores": {"concrete": True}, "turn_questions": [{"turn": 2, "question": "q", "p_yes": 0.3}]}
    assert verdict_confidence(asked, []) == pytest.approx(0.7)
    # decided by deterministic checks alone: ranks first, as a card's evidence-decided decision
    assert verdict_confidence({"item_scores": {"concrete": True, "apologise_once": False}}, []) == 1.0
    # the judge answered without a probability (no logprobs): nothing says how sure it was
    assert verdict_confidence({"item_scores": {"judge": 4, "concrete": True}}, []) is None
    unsure = {"item_scores": {"concrete": True}, "turn_questions": [{"turn": 2, "question": "q", "source": "label"}]}
    assert verdict_confidence(unsure, []) is None
    assert min_reviews(0.9, 0.95) == 29


def test_a_confident_region_accepts_only_the_verdicts_as_sure_as_its_threshold():
    """Reviewed verdicts carrying the judge's probability rank by it: the sure ones agree, the unsure ones do not, so
    the region is the sure band; a run's verdict below it waits, one in it is accepted, an unscored one is left."""
    from rubriceval.core.pending_review import PendingReview
    from rubriceval.core.verdict import Verdict
    from rubriceval.trust.rubric_selective import pending_mark

    reviewed = [ReviewedVerdict(rubric="tone", run_id="r", sample_id=f"s{i}", machine_score=4,
                                reviewed_score=4 if i < 40 else 2, source="override",
                                confidence=0.95 - i / 1000 if i < 40 else 0.5 + i / 1000) for i in range(60)]
    region = fit_region("tone", rubric_mode(reviewed), reviewed, Rubric.model_validate(RUBRIC).auto_accept, "j")
    assert region.accepts == "confident" and region.n == 40 and region.threshold == pytest.approx(0.911)

    def verdict(p: float) -> Verdict:
        probs = {"probs": {4: p, 3: 1 - p}, "expected": 4.0, "written": 4, "first": 4, "second": 3,
                 "margin": 2 * p - 1, "coverage": 1.0, "tie": False}
        return Verdict(sample_id="x", scorer="tone", score=4, details={"score_probs": {"judge": probs}})

    assert PendingReview.read(pending_mark(verdict(0.93), region).details) is None
    waiting = PendingReview.read(pending_mark(verdict(0.7), region).details)
    assert waiting is not None and waiting.confidence == pytest.approx(0.7) and waiting.judge == "j"
    unscored = Verdict.unscored("x", "tone", "undecided", "the judge cannot tell")
    assert pending_mark(unscored, region) is unscored
