"""The four-week acceptance simulation of issue 44 (benchmarks/judge/weekly_cycles.py), on a scripted judge: the
weeks hold every labelled conversation once, the simulated reviewer records `scorecard review`'s decisions from the
labels, nothing is accepted before any review, every cycle's refit goes through `scorecard fit`'s path, and the
table reports per cycle what the docs quote (coverage, agreement on the accepted part, pending)."""
from __future__ import annotations

import asyncio

from benchmarks.judge.weekly_cycles import (
    ITEMS,
    SETS,
    decision,
    labels_of,
    prepare_card,
    run_cycles,
    scripted_judge,
    soothe_label,
    table,
    weeks,
)
from rubriceval.data.io import read_dataset
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.scorecard.verdict import CardItemOutcome


def test_the_weeks_deal_every_labelled_conversation_once():
    dealt = weeks()
    assert [len(w) for w in dealt] == [28, 28, 28, 28]
    ids = [s.id for week in dealt for s, _ in week]
    assert len(ids) == len(set(ids)) == 112
    cc = [lab for week in dealt for s, lab in week if s.id.startswith("cc-")]
    assert sum(lab["promise"] for lab in cc) == 16 and sum(lab["leak_other"] for lab in cc) == 12
    assert all(set(lab) == set(ITEMS) for lab in cc)


def test_soothing_labels_follow_the_turn_levels():
    v3 = {s.id: s for s in read_dataset(str(SETS["soothing_v3"]))}
    hits = [sid for sid, s in v3.items() if soothe_label(s)]
    assert len(hits) == 2                  # every agent turn 1 or 3: the feeling never answered
    assert all(set(int(v) for v in v3[sid].metadata["label"]["turn_scores"].values()) <= {1, 3} for sid in hits)
    assert labels_of("soothing_v3", v3["sv3-01"]) == {"soothe": False}


def test_the_reviewer_says_what_the_label_says():
    hit, clear = CardItemOutcome(item="promise", status="hit"), CardItemOutcome(item="promise", status="clear")
    na = CardItemOutcome(item="soothe", status="not_applicable")
    assert [decision(hit, True), decision(hit, False), decision(clear, True), decision(clear, False)] == [
        "confirm", "reject", "missed", "clear"]
    assert decision(na, True) == "missed" and decision(na, None) is None and decision(hit, None) == "na"


def test_the_card_gets_the_target_on_its_own_lines(tmp_path):
    path = prepare_card(tmp_path)
    card = load_scorecard(path)
    assert card.auto_accept is not None and card.auto_accept.agreement == 0.9
    assert "resolve" not in {i.id for i in card.items} and "promise" in {i.id for i in card.items}
    assert "auto_accept: {agreement: 0.9, confidence: 0.95}" in path.read_text(encoding="utf-8")


def test_two_cycles_on_a_scripted_judge(tmp_path):
    judge = scripted_judge(weeks())
    cycles = asyncio.run(run_cycles(judge, tmp_path / "work", reviews_per_week=14, weeks_to_run=2, log=None))
    first, second = cycles
    assert first.total("accepted") == 0 and first.total("pending") == first.total("decisions") > 0
    assert first.reviewed == 14 and second.reviewed == 14
    assert first.fit and all("REFUSED" in line or "PROPOSED" in line for line in first.fit)
    lines = table(cycles).splitlines()
    assert len(lines) == 4 and "nothing accepted yet" in lines[2]
