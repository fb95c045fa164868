"""Weights fitted to audited items: the ordinal model, cross-fitting, and `calibrate --fit-weights` proposing a
version only when it beats the declared level rule on held-out items (refused otherwise)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rubriceval import load_rubric
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply
from rubriceval.trust.calibrate_weights import fit_weights_async
from rubriceval.trust.fit_weights import cross_fitted_levels, fit_ordinal, predict_level, stratified_folds
from rubriceval.trust.store import TrustStore
from tests.trust.test_trust_audits import Row, make_audited_store, sample, tone_rubric

QUESTIONS = [{"id": f"at_least_{k}", "ask": f"Is the answer at least quality {k}?"} for k in (2, 3, 4, 5)]
QUESTIONS.append({"id": "noise", "ask": "Is the answer long?"})
TRUTH = re.compile(r"true quality (\d)")
ASKED = re.compile(r"at least quality (\d)")


def staircase(truth: int) -> dict[str, float]:
    features = {f"at_least_{k}": 0.9 if truth >= k else 0.1 for k in (2, 3, 4, 5)}
    return {**features, "noise": 0.5}


def test_fit_recovers_a_staircase_and_ignores_noise():
    rows = [staircase(t) for t in (1, 2, 3, 4, 5) * 4]
    scores = [t for t in (1, 2, 3, 4, 5) * 4]
    model = fit_ordinal(rows, scores, [q["id"] for q in QUESTIONS])
    assert [predict_level(model, staircase(t)) for t in (1, 2, 3, 4, 5)] == [1, 2, 3, 4, 5]
    assert min(model.weights[f"at_least_{k}"] for k in (2, 3, 4, 5)) > abs(model.weights["noise"])
    assert model.cutpoints == sorted(model.cutpoints) and model.n_train == 20


def test_cross_fitting_predicts_each_item_from_the_other_fold():
    scores = [1, 2, 3, 4, 5] * 4
    folds = stratified_folds(scores, 2, seed=0)
    assert sorted(folds) == [0] * 10 + [1] * 10
    for level in range(1, 6):                                     # each level split 2 and 2
        assert sum(f for f, s in zip(folds, scores) if s == level) == 2
    predicted = cross_fitted_levels([staircase(s) for s in scores], scores, [q["id"] for q in QUESTIONS])
    assert predicted == scores
    # A label the model never sees for that row cannot leak into its own prediction.
    flipped = list(scores)
    flipped[0] = 5
    again = cross_fitted_levels([staircase(s) for s in scores], flipped, [q["id"] for q in QUESTIONS])
    assert again[0] == 1


def checklist_rubric(levels: dict[int, str]):
    return tone_rubric(judge_mode="checklist", items=[
        {"id": "judge", "type": "judge"},
        {"id": "checklist", "type": "checklist", "questions": QUESTIONS, "levels": levels}])


def staircase_judge() -> ScriptedJudge:
    """p(yes) 0.9 when the answer's true quality reaches the asked level, else 0.1; 0.5 for the noise question."""
    def reply(request):
        user = request[-1]["content"]
        truth = int(TRUTH.search(user).group(1))
        asked = ASKED.search(user)
        return yes_no_reply(0.5 if asked is None else (0.9 if truth >= int(asked.group(1)) else 0.1))
    return ScriptedJudge(reply)


def audited(store, levels):
    """30 audited items of a checklist rubric in `store` (a folder: its runs.sqlite; or a PostgreSQL URL)."""
    rubric = checklist_rubric(levels)
    rows = [Row(sample(i, answer=f"reply {i}: true quality {i % 5 + 1}"), 3, {"alice": i % 5 + 1})
            for i in range(30)]
    path = store / "runs.sqlite" if isinstance(store, Path) and store.is_dir() else store
    make_audited_store(path, rubric, rows)
    return path, rubric


async def test_fit_beating_a_poor_rule_is_proposed_as_a_new_version(store_target, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)             # a PostgreSQL store's proposals go to ./out/proposed_rubrics
    # The declared rule only looks at one question: it cannot tell 2 from 5.
    path, rubric = audited(store_target, {5: "at_least_2", 1: "otherwise"})
    result = await fit_weights_async(path, "tone", staircase_judge(), n_boot=50)
    assert result.accepted, result.reason
    beside = tmp_path / ("proposed_rubrics" if isinstance(store_target, Path) else "out/proposed_rubrics")
    assert Path(result.yaml_path).resolve().parent == beside.resolve()
    assert result.fitted.kappa_quadratic.value > result.rule.kappa_quadratic.value
    assert result.n_train + result.n_heldout == 30 and result.n_heldout >= 10
    proposed = load_rubric(result.yaml_path)
    assert proposed.judge_mode == "checklist_fitted" and str(proposed.version) == "2"
    fitted = proposed.checklist_items[0].fitted
    assert fitted.kappa_heldout == result.fitted.kappa_quadratic.value and fitted.n_train == result.n_train
    with TrustStore(path) as trust:
        assert [v.status for v in trust.versions("tone")][-1] == "proposed"


async def test_fit_that_does_not_beat_the_rule_is_refused(tmp_path):
    # The declared rule already reads the staircase exactly: κ = 1 on held-out items; a fit cannot beat it.
    rule = {5: "at_least_5", 4: "at_least_4", 3: "at_least_3", 2: "at_least_2", 1: "otherwise"}
    path, _ = audited(tmp_path, rule)
    result = await fit_weights_async(path, "tone", staircase_judge(), n_boot=50)
    assert not result.accepted and "does not beat" in result.reason
    assert result.rule.kappa_quadratic.value == pytest.approx(1.0)
    assert result.yaml_path is None and not (tmp_path / "proposed_rubrics").exists()
    with TrustStore(path) as trust:
        assert not trust.versions("tone")


async def test_answers_are_reused_from_the_judge_for_the_fitted_evaluation(tmp_path):
    path, _ = audited(tmp_path, {5: "at_least_2", 1: "otherwise"})
    judge = staircase_judge()
    result = await fit_weights_async(path, "tone", judge, n_boot=50)
    # Every audited item once (5 questions each), then the held-out items once more with the fitted rubric;
    # with a caching client the second pass costs nothing (same messages, options and cache tag).
    assert len(judge.requests) == 5 * (30 + result.n_heldout)
    first = {(r.cache_tag, r[-1]["content"]) for r in judge.requests[:150]}
    assert {(r.cache_tag, r[-1]["content"]) for r in judge.requests[150:]} <= first
