"""Borderline checklist levels (issue 32.9): a level the judge's prefix-cache noise could flip is said to be so."""
from __future__ import annotations

from rubriceval import load_rubric
from rubriceval.scoring.borderline import P_YES_JITTER, borderline, borderline_note
from rubriceval.scoring.checklist import fitted_level

SOOTHING = load_rubric("rubrics/emotional_soothing.yaml")
ITEM = SOOTHING.checklist_items[0]
# delay-curt answered three ways on the embedded judge (first run / warm rerun / each question cold): z 8.39, 8.38,
# 8.54 — 0.2 to 0.36 below the 3→4 cutpoint 8.7451.
CURT_RUN = {"soothe": 0.4588, "soothe_first": 0.4947, "status": 0.3311, "eta": 0.4179, "reason": 0.3262,
            "follow_up": 0.4683, "rude": 0.1756}
CURT_COLD = {"soothe": 0.4546, "soothe_first": 0.5148, "status": 0.3254, "eta": 0.4153, "reason": 0.3564,
             "follow_up": 0.4756, "rude": 0.1761}


def test_a_fitted_level_near_a_cutpoint_is_borderline_and_one_far_from_it_is_not():
    level, _ = fitted_level(ITEM.fitted, CURT_RUN)
    found = borderline(ITEM, CURT_RUN, "checklist_fitted")
    assert level == 3 and found is not None and found["cutpoint"] == 8.7451
    assert found["margin"] < found["bound"] == round(P_YES_JITTER * sum(ITEM.fitted.weights.values()), 3)
    assert borderline(ITEM, CURT_COLD, "checklist_fitted") is not None
    clear = {qid: 1.0 for qid in ITEM.fitted.weights} | {"rude": 0.0}
    assert borderline(ITEM, clear, "checklist_fitted") is None
    assert "8.7451" in borderline_note(found, "en") and "临界" in borderline_note(found, "zh")


def test_a_rule_answer_within_the_noise_of_one_half_is_borderline():
    answers = {q.id: 0.9 for q in ITEM.questions} | {"reason": 0.4996}
    found = borderline(ITEM, answers, "checklist")
    assert found == {"questions": {"reason": 0.4996}, "bound": P_YES_JITTER}
    assert borderline(ITEM, {q.id: 0.9 for q in ITEM.questions}, "checklist") is None
