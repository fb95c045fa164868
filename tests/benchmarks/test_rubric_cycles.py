"""The rubric cycles benchmark (issue 44, benchmarks/judge/rubric_cycles.py) deals every conversation labelled for
emotional_soothing_multiturn into four weeks of 20, each with its 1–5 label, and its table says each week's figures."""
from __future__ import annotations

from benchmarks.judge.rubric_cycles import Week, table, weeks


def test_weeks_hold_the_labelled_conversations_once_each():
    dealt = weeks()
    assert [len(w) for w in dealt] == [20, 20, 20, 20]
    ids = [s.id for w in dealt for s, _ in w]
    assert len(set(ids)) == 80
    assert all(1 <= label <= 5 for w in dealt for _, label in w)


def test_the_table_says_a_weeks_region_and_agreement():
    week = Week(week=3, conversations=20, scored=20, accepted=20, accepted_exact=17, exact=17, same_side=19,
                accepts="all", n_reviewed=40, lower_bound=0.786, reviewed_now=20, calls=19, wall_s=154)
    assert "| 3 | 20 (0) | all (40, 0.79) | 20 | 17 | 0 | 17/20 | 19/20 | 20 | 19, 154 s |" in table([week])
