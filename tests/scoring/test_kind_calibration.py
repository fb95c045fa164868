"""rubriceval's shipped calibration of an evidence kind on one judge (scoring/judgement/kind_calibration.py, issue 39
round 3): used only with the judge and the wording it was fitted for; an item's own calibration comes first; the
item's examples only where neither exists; a mood kind's turns are then asked in the kind's wording."""
from __future__ import annotations

import asyncio

import pytest

from rubriceval.judge.embedded_model import embedded_judge_identity
from rubriceval.rubric.calibration import ItemCalibration
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.scoring.judgement import kind_calibration as kinds
from rubriceval.scoring.judgement.decide import JudgementSpec, rule_in_place
from rubriceval.scoring.judgement.evidence import KINDS
from tests.scoring.test_judgement import LEAK, SOOTHE, UPSET, by_turn, convo

EMBEDDED = embedded_judge_identity()
UPSET_WORDING = next(k for k in KINDS if k.name == "upset").turn_question["zh"]
LEAK_WORDING = next(k for k in KINDS if k.name == "personal_data").claim_question["zh"]


def shipped_entry(kind: str, question: str, judge: str = EMBEDDED, cutoff: float = 0.15,
                  band: tuple[float, float] = (0.12, 0.18)) -> kinds.KindCalibration:
    return kinds.KindCalibration(kind=kind, lang="zh", question=question, calibration=ItemCalibration(
        judge=judge, cutoff=cutoff, undecided=band, method="labelled_set", n=96, score="turn_max"))


@pytest.fixture
def ship(monkeypatch):
    """Ship these kind calibrations, and no turn checker (turn_checker.py comes before them: test_turn_checker.py)."""
    from rubriceval.scoring.judgement import turn_checker

    monkeypatch.setattr(turn_checker, "shipped", lambda: ())

    def install(*entries):
        monkeypatch.setattr(kinds, "shipped", lambda: tuple(entries))
    return install


def small(judge):
    judge.config = judge.config.model_copy(update={"base_url": None})      # the embedded judge: decomposed
    return judge


def test_a_shipped_calibration_names_its_judge_and_wording(ship):
    ship(shipped_entry("upset", UPSET_WORDING))
    assert kinds.kind_calibration("upset", "zh", UPSET_WORDING, EMBEDDED).cutoff == 0.15
    assert kinds.kind_calibration("upset", "zh", UPSET_WORDING, "qwen-max") is None      # another judge
    assert kinds.kind_calibration("upset", "zh", UPSET_WORDING + "？", EMBEDDED) is None  # another wording
    assert kinds.kind_calibration("upset", "en", UPSET_WORDING, EMBEDDED) is None
    assert kinds.kind_calibration("upset", "zh", UPSET_WORDING, None) is None


def test_the_shipped_file_reads_and_names_the_embedded_judge():
    kinds.shipped.cache_clear()
    for entry in kinds.shipped():
        assert entry.calibration.judge == EMBEDDED and entry.calibration.method == "labelled_set"
        kind = next(k for k in KINDS if k.name == entry.kind)
        assert entry.question == kind.wording(entry.lang, sees_policy=True)     # fitted for today's wording


def test_the_rule_in_place_prefers_the_items_own_then_the_shipped_then_the_examples(ship):
    judge = small(by_turn({}, 0.05))
    own = ItemCalibration(judge=EMBEDDED, cutoff=0.3, method="reviews", n=40, score="turn_max")
    examples = [{"yes": "另一位顾客张三的电话 13900001111"}, {"no": "您的订单已发货"}]
    spec = JudgementSpec.model_validate({"question": LEAK, "examples": examples, "fatal": True})
    ship(shipped_entry("personal_data", LEAK_WORDING))
    rule, usage, kind_wording = asyncio.run(rule_in_place(spec, "assistant", judge))
    assert rule.method == "labelled_set" and usage.calls == 0 and kind_wording       # no example asked
    rule, _, _ = asyncio.run(rule_in_place(spec.model_copy(update={"calibration": [own]}), "assistant", judge))
    assert rule.method == "reviews"
    ship()                                                                            # nothing shipped
    rule, usage, kind_wording = asyncio.run(rule_in_place(spec, "assistant", judge))
    assert rule.method == "examples" and usage.calls == 2 and not kind_wording
    # a large (hosted) judge asks whole: the shipped calibration of the small judge's per-turn wording is not its
    ship(shipped_entry("personal_data", LEAK_WORDING, judge="scripted"))
    rule, _, _ = asyncio.run(rule_in_place(spec, "assistant", by_turn({}, 0.05)))
    assert rule.method == "examples"


def test_a_mood_kind_is_asked_in_its_shipped_wording_and_decided_on_its_band(ship):
    ship(shipped_entry("upset", UPSET_WORDING, cutoff=0.15, band=(0.12, 0.18)))
    card = Scorecard.model_validate({"id": "s", "name": "s", "dimensions": [{"id": "d"}], "items": [
        {"id": "soothe", "dimension": "d", "points": -5, "question": SOOTHE,
         "applies_when": {"question": "客户是否不满？"}}]})
    judge = small(by_turn({"还没到": 0.2}, 0.05))
    verdict = asyncio.run(score_scorecard(card, convo("东西还没到", "请提供订单号"), judge))
    asked = [r[-1]["content"] for r in judge.requests]
    assert any(UPSET_WORDING in text for text in asked) and not any("客户是否不满" in text for text in asked)
    # 0.2 is above the shipped band (0.12–0.18): the customer is upset, and not soothed → the item is hit
    assert verdict.outcome("soothe").status == "hit"
    ship()
    judge = small(by_turn({"还没到": 0.2}, 0.05))
    verdict = asyncio.run(score_scorecard(card, convo("东西还没到", "请提供订单号"), judge))
    assert any("客户是否不满" in r[-1]["content"] for r in judge.requests)        # the item's own wording again
    assert verdict.outcome("soothe").status == "not_applicable"                  # and 0.5: 0.2 reads "no"


def test_examples_rules_report_the_shipped_rule_as_the_one_to_beat(ship):
    from rubriceval.trust.fit_examples import examples_rules

    ship(shipped_entry("personal_data", LEAK_WORDING))
    card = Scorecard.model_validate({"id": "q", "name": "q", "dimensions": [{"id": "d"}], "items": [
        {"id": "leak", "dimension": "d", "fatal": True, "question": LEAK, "hit_on": "yes"}]})
    made = asyncio.run(examples_rules(card, small(by_turn({}, 0.05))))
    assert made["leak"].method == "labelled_set"


assert UPSET in UPSET_WORDING      # the kind's wording is the shipped card's applies question, asked of one turn
