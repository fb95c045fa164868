"""Calibration: split, example choice, no leakage of few-shot items into evaluation, version bookkeeping."""
from __future__ import annotations

import json
import re

import pytest

from rubriceval import Rubric, load_rubric
from rubriceval.testing.scripted_judge import ScriptedJudge
from rubriceval.trust.calibrate import (
    CalibrationError,
    accept_version,
    calibrate_async,
    choose_examples,
    list_versions,
    next_version,
    reject_version,
    rubric_yaml,
    split_holdout,
)
from rubriceval.trust.human_scores import audited_items
from rubriceval.trust.store import TrustStoreError
from tests.trust.test_trust_audits import Row, make_audited_store, sample, tone_rubric

TRUE_SCORE = re.compile(r"true quality (\d)")
REVIEWED_ANSWER = re.compile(r"# Material under review.*?<<<CHATBOT ANSWER>>>\n(.*?)\n<<<END CHATBOT ANSWER>>>", re.S)


def learning_judge(messages: list[dict]) -> str:
    """Scores the answer under review: right when the prompt has expert examples, 2 points too kind without."""
    user = messages[-1]["content"]
    answer = REVIEWED_ANSWER.search(user).group(1)
    truth = int(TRUE_SCORE.search(answer).group(1))
    with_examples = "# Examples scored by an expert" in user
    score = truth if with_examples else min(5, truth + 2)
    return json.dumps({"feedback": f"looks like {score}", "score": score})


def quality_rows(n: int, *, start: int = 0, intent: str = "") -> list[Row]:
    """n items whose answers state their true quality 1..5; the experts give that score, the judge +2."""
    rows = []
    for i in range(start, start + n):
        truth = i % 5 + 1
        rows.append(Row(sample(i, answer=f"reply {i}: true quality {truth}", intent=intent),
                        min(5, truth + 2), {"alice": truth}))
    return rows


def reviewed_answers(judge: ScriptedJudge) -> list[str]:
    return [REVIEWED_ANSWER.search(messages[-1]["content"]).group(1) for messages in judge.requests]


@pytest.fixture
def store(store_target):
    """An audited run in a SQLite file, then in a PostgreSQL database (every test using it runs on both)."""
    make_audited_store(store_target, tone_rubric(), quality_rows(20))
    return store_target


# ------------------------------------------------------------------------------------------------ pure steps


def test_split_is_stratified_seeded_and_disjoint(store):
    items = audited_items(store, "tone").items
    pool, holdout = split_holdout(items, 0.5, seed=3)
    assert {i.key for i in pool}.isdisjoint({i.key for i in holdout})
    assert len(pool) + len(holdout) == 20
    for level in range(1, 6):                                            # 4 items per level → 2 and 2
        assert sum(i.human_score == level for i in holdout) == 2
    again = split_holdout(list(reversed(items)), 0.5, seed=3)            # input order does not matter
    assert [i.key for i in again[1]] == [i.key for i in holdout]
    assert [i.key for i in split_holdout(items, 0.5, seed=4)[1]] != [i.key for i in holdout]
    with pytest.raises(CalibrationError):
        split_holdout(items, 1.0, seed=0)


def test_examples_cover_the_scale_and_prefer_disagreements(tmp_path):
    path = tmp_path / "runs.sqlite"
    rows = [Row(sample(0), 5, {"alice": 5}), Row(sample(1), 5, {"alice": 1}),    # gap 4
            Row(sample(2), 2, {"alice": 1}), Row(sample(3), 3, {"alice": 3}),    # gap 1, agreement
            Row(sample(4), None, {"alice": 3}), Row(sample(5), 3, {"alice": 5})]  # unscored, gap 2
    make_audited_store(path, tone_rubric(), rows)
    items = audited_items(path, "tone").items
    chosen = choose_examples(items, 3, seed=0)
    assert [i.key for i in chosen] == ["s1", "s5", "s4"]     # one per human score, worst disagreement first
    assert [i.key for i in choose_examples(items, 6, seed=0)][3:] == ["s2", "s0", "s3"]
    assert len(choose_examples(items, 50, seed=0)) == 6


def test_next_version():
    assert next_version(1, []) == 2
    assert next_version(1, ["1", "2", "3"]) == 4
    assert next_version("7", []) == 8
    assert next_version("v2", ["v3"]) == "v4"
    assert next_version("beta", []) == "beta.1"


def test_rubric_yaml_round_trips(tmp_path):
    rubric = tone_rubric(criterion="Line one.\nLine two: 中文也可以。")
    path = tmp_path / "tone.yaml"
    path.write_text(rubric_yaml(rubric, "a header"), encoding="utf-8")
    assert path.read_text(encoding="utf-8").startswith("# a header\n")
    assert load_rubric(path).content_hash() == rubric.content_hash()


# ------------------------------------------------------------------------------------------------ calibration


async def test_calibration_never_evaluates_on_its_examples(store, tmp_path):
    judge = ScriptedJudge(learning_judge)
    result = await calibrate_async(store, "tone", judge, k_examples=5, holdout_fraction=0.5, seed=0, n_boot=100,
                                   proposal_dir=tmp_path / "proposals")
    example_keys = {e.key for e in result.examples}
    assert len(example_keys) == 5 and {e.human_score for e in result.examples} == {1, 2, 3, 4, 5}
    assert example_keys.isdisjoint(result.eval_keys)
    assert len(result.eval_keys) == 10
    # Every judge call scored a held-out item (old and new rubric once each) and never an example's text.
    proposed = load_rubric(result.yaml_path)
    example_answers = {e.answer for e in proposed.examples}
    answers = reviewed_answers(judge)
    assert len(answers) == 2 * len(result.eval_keys)
    assert example_answers.isdisjoint(answers)
    # The scripted judge is right only with examples: agreement goes up on the held-out items.
    assert result.before.n == result.after.n == 10
    assert result.after.exact.value == 1.0 and result.before.exact.value < 0.5
    assert result.kappa_delta is not None and result.kappa_delta > 0
    assert proposed.version == 2 and proposed.content_hash() == result.proposed_version_tag.split("@")[1]


async def test_held_out_twins_of_examples_are_dropped_from_evaluation(tmp_path):
    """The same question+answer under another id (another intent, so another item) must not be evaluated."""
    path = tmp_path / "runs.sqlite"
    rows = quality_rows(10) + [Row(r.sample.model_copy(update={"id": f"twin-{r.sample.id}", "intent": "other"}),
                                   r.judge, r.experts) for r in quality_rows(10)] + quality_rows(10, start=10)
    make_audited_store(path, tone_rubric(), rows)
    judge = ScriptedJudge(learning_judge)
    # Every pool item becomes an example, so every held-out twin of one must be excluded.
    result = await calibrate_async(path, "tone", judge, k_examples=30, seed=1, n_boot=0, write_yaml=False)
    example_texts = {e.answer for e in Rubric.model_validate_json(json.dumps(
        list_versions(path, "tone")[-1].rubric)).examples}
    assert result.excluded_from_eval, "the seed should put some twins on both sides"
    assert example_texts.isdisjoint(reviewed_answers(judge))
    assert len(reviewed_answers(judge)) == 2 * len(result.eval_keys)
    assert result.yaml_path is None


async def test_too_few_audits_is_a_clear_error(tmp_path):
    path = tmp_path / "runs.sqlite"
    make_audited_store(path, tone_rubric(), quality_rows(2))
    with pytest.raises(CalibrationError, match="held-out item"):
        await calibrate_async(path, "tone", ScriptedJudge(learning_judge), k_examples=2, n_boot=0,
                              write_yaml=False)


async def test_versions_are_proposed_accepted_rejected_and_kept(store, tmp_path):
    judge = ScriptedJudge(learning_judge)
    first = await calibrate_async(store, "tone", judge, k_examples=3, n_boot=0, proposal_dir=tmp_path)
    versions = list_versions(store, "tone")
    assert [(v.version, v.status) for v in versions] == [("1", "accepted"), ("2", "proposed")]
    assert versions[1].parent_version_tag == first.base_version_tag
    assert versions[1].kappa_after == first.after.kappa_quadratic.value
    assert versions[1].example_keys == [e.key for e in first.examples]

    target = tmp_path / "rubrics" / "tone.yaml"
    target.parent.mkdir()
    record = accept_version(store, "tone", 2, decided_by="lead", note="better on held-out", write_to=target)
    assert record.status == "accepted" and record.decided_by == "lead" and record.decided_at is not None
    assert load_rubric(target).version_tag == first.proposed_version_tag
    with pytest.raises(TrustStoreError, match="already accepted"):
        reject_version(store, "tone", 2)

    second = await calibrate_async(store, "tone", judge, k_examples=2, seed=5, n_boot=0, proposal_dir=tmp_path)
    assert second.proposed_version == "3"       # bumped past every recorded version
    reject_version(store, "tone", second.proposed_version_tag, decided_by="lead", note="no gain")
    assert [(v.version, v.status) for v in list_versions(store, "tone")] == [
        ("1", "accepted"), ("2", "accepted"), ("3", "rejected")]
    with pytest.raises(TrustStoreError, match="no recorded version '7'"):
        accept_version(store, "tone", 7)


async def test_calibration_records_agreement_per_version_and_tolerates_an_unbumped_edit(store, tmp_path):
    from rubriceval.trust.store import TrustStore

    judge = ScriptedJudge(learning_judge)
    first = await calibrate_async(store, "tone", judge, k_examples=3, n_boot=0, write_yaml=False)
    with TrustStore(store) as trust:
        stored = {(r.version_tag, r.source): r.n for r in trust.agreement_results("tone")}
    assert stored == {(first.base_version_tag, "calibration_before"): len(first.eval_keys),
                      (first.proposed_version_tag, "calibration_after"): len(first.eval_keys)}
    # Edited in place, still "version 1": calibrating from it must not fail at the end over the version number.
    edited = tone_rubric(criterion="Is the answer polite, warm and brief?")
    second = await calibrate_async(store, "tone", judge, k_examples=3, n_boot=0, write_yaml=False, rubric=edited)
    assert second.proposed_version == "3"
    assert any("without a version bump" in note for note in second.notes)
    assert any("the audits were made on" in note for note in second.notes)
