"""Reviewed turns as an item's examples (issue 44.1, trust/fit_examples.py): measured before they are shipped — the
item judged again on the held-out reviewed conversations with a reviewed yes and no as its examples (and no
calibration for the judge), against the rule the proposal would leave in place; proposed only when they beat it,
then written as the item's examples with its calibration for that judge removed (it would be read first)."""
from __future__ import annotations

import asyncio
import re

import pytest

from rubriceval.data.sample import Sample
from rubriceval.rubric.calibration import ItemCalibration, ItemExample
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.scoring.judgement.decide import judge_name
from rubriceval.studio.calibration_proposal import propose_calibration
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply
from rubriceval.trust.fit_examples import one_item_card, try_examples
from rubriceval.trust.fit_reviews import fit_card, reviewed_answers
from tests.trust.test_fit_reviews import CARD_YAML, CLEAN, PROMISES


@pytest.fixture(autouse=True)
def no_shipped_turn_checkers(monkeypatch):
    """These tests read the items' examples and reviews on a scripted small judge: rubriceval's turn checker of the
    promise kind (turn_checker.py, which asks no judge) would decide before them."""
    from rubriceval.scoring.judgement import turn_checker

    monkeypatch.setattr(turn_checker, "shipped", lambda: ())


def small_judge() -> ScriptedJudge:
    """Asked turn by turn (a judge without a server address is the embedded one): p(yes) is the number in the
    turn; a turn without one (the content-free anchor) gets 0.01."""
    def reply(request):
        found = re.findall(r"编号 ([0-9.]+)", request[-1]["content"])
        return yes_no_reply(float(found[-1]) if found else 0.01)
    judge = ScriptedJudge(reply)
    judge.config = judge.config.model_copy(update={"base_url": None, "model": "local"})
    return judge


def conversation(sid: str, p_yes: float) -> Sample:
    return Sample.model_validate({"id": sid, "question": "", "conversation": {"id": sid, "turns": [
        {"role": "user", "content": "快递怎么还没到"},
        {"role": "assistant", "content": f"给您补偿 {round(p_yes * 100)} 元现金，编号 {p_yes:.2f}，还有什么可以帮您？"}]}})


def test_reviewed_examples_are_tried_on_held_out_reviews_and_shipped_only_if_they_help(tmp_path):
    (tmp_path / "qa.yaml").write_text(CARD_YAML, encoding="utf-8")
    card = load_scorecard(tmp_path / "qa.yaml")
    judge = small_judge()
    samples = {f"p{i}": conversation(f"p{i}", p) for i, p in enumerate(PROMISES)}
    samples |= {f"c{i}": conversation(f"c{i}", p) for i, p in enumerate(CLEAN)}
    verdicts = [asyncio.run(score_scorecard(card, s, judge)) for s in samples.values()]
    assert all(v.outcome("promise").evidence[0].turn == 2 for v in verdicts)          # asked turn by turn
    decided = {(sid, "promise"): "hit" if sid.startswith("p") else "clear" for sid in samples}
    name = judge_name(judge)
    fit = fit_card(card, name, verdicts, decided)
    promise = fit.items[0]
    assert promise.accepted and promise.calibration.score == "turn_max"
    answers, _ = reviewed_answers(card, verdicts, decided)
    trial = asyncio.run(try_examples(card, promise, answers["promise"], samples, judge))
    assert trial is not None and [e.answer for e in trial.examples] == ["yes", "no"]
    shown = [float(re.search(r"编号 ([0-9.]+)", e.text).group(1)) for e in trial.examples]
    assert 0.3 <= shown[0] < 0.5 and shown[1] <= 0.2                             # a reviewed promise, a clean turn
    assert all(e.note.startswith("reviewed: ") and e.note.endswith(" turn 2") for e in trial.examples)
    assert trial.n_heldout == 10 and trial.balanced_accuracy_without == promise.fit.balanced_accuracy_heldout
    assert trial.calls > 0 and not trial.helps and "do not beat the reviewed cut-off" in trial.reason
    # the one-item card the trial judged: the examples, no calibration for this judge
    reduced = one_item_card(card.model_copy(update={"items": [card.items[0].model_copy(update={"calibration": [
        ItemCalibration(judge=name, cutoff=0.4, method="reviews", n=4),
        ItemCalibration(judge="big-judge", cutoff=0.6, method="reviews", n=4)]})]}), card.items[0], trial.examples, name)
    assert [i.id for i in reduced.items] == ["promise"] and [c.judge for c in reduced.items[0].calibration] == [
        "big-judge"]


def test_examples_that_help_are_written_in_place_of_the_calibration_for_that_judge(tmp_path):
    (tmp_path / "qa.yaml").write_text(CARD_YAML.replace("    hit_on: \"yes\"\n", "    hit_on: \"yes\"\n"
                                                        "    calibration:\n      - {judge: local-x, cutoff: 0.4, "
                                                        "method: reviews, n: 8}\n"), encoding="utf-8")
    card = load_scorecard(tmp_path / "qa.yaml")
    fit = fit_card(card, "local-x", [], {})                        # nothing fitted: the examples alone
    examples = [ItemExample(text="给您补偿 50 元现金", answer="yes", role="assistant"),
                ItemExample(text="按政策给您 10 元券", answer="no", role="assistant")]
    proposal = propose_calibration(tmp_path, fit, {"promise": examples})
    assert proposal is not None and proposal.items == ["promise"] and proposal.version == 2
    (tmp_path / "new.yaml").write_text(proposal.text, encoding="utf-8")
    promise = load_scorecard(tmp_path / "new.yaml").items[0]
    assert promise.examples == examples and promise.calibration_for("local-x") is None
    assert "+    examples:" in proposal.diff and "-    calibration:" in proposal.diff


def test_a_fit_must_beat_the_rule_an_items_examples_make_on_the_judge(tmp_path):
    """An item with examples and no calibration for the judge decides by the rule its examples make at run time
    (anchors): that is the current cut-off a reviewed fit must beat, with its undecided band."""
    from rubriceval.trust.fit_examples import examples_rules

    yaml = CARD_YAML.replace("    hit_on: \"yes\"\n", "    hit_on: \"yes\"\n    examples:\n"
                             "      - {yes: \"给您补偿 45 元现金，编号 0.45\"}\n      - {no: \"给您补偿 5 元现金，编号 0.05\"}\n")
    (tmp_path / "qa.yaml").write_text(yaml, encoding="utf-8")
    card = load_scorecard(tmp_path / "qa.yaml")
    judge = small_judge()
    made = asyncio.run(examples_rules(card, judge))
    rule = made["promise"]
    assert rule.method == "examples" and 0.05 < rule.cutoff < 0.45 and rule.undecided is not None
    samples = {f"p{i}": conversation(f"p{i}", p) for i, p in enumerate(PROMISES)}
    samples |= {f"c{i}": conversation(f"c{i}", p) for i, p in enumerate(CLEAN)}
    verdicts = [asyncio.run(score_scorecard(card, s, judge)) for s in samples.values()]
    decided = {(sid, "promise"): "hit" if sid.startswith("p") else "clear" for sid in samples}
    fit = fit_card(card, judge_name(judge), verdicts, decided, made=made).items[0]
    assert fit.current == rule.cutoff and fit.current_source == "examples calibration"
    assert not fit.accepted and f"does not beat {rule.cutoff:g} on held-out reviews" in fit.reason
    assert fit_card(card, judge_name(judge), verdicts, decided).items[0].current == 0.5   # without: plain 0.5
