"""The third, fresh held-out 情绪安抚（多轮） set (issue 28): its shape, and labels that follow the shipped rubric's own
turn aggregate, so a score in the file can't drift from its turn scores."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from benchmarks.judge.conversations import DATA, load_set
from rubriceval.rubric.loader import load_rubric
from rubriceval.scoring.conversation_scorer import TurnJudgement, aggregate_turns

V3 = Path(DATA).parent / "conversations_zh_soothing_v3.jsonl"
V2 = Path(DATA).parent / "conversations_zh_soothing_v2.jsonl"
SOOTHING = "emotional_soothing_multiturn"
RUBRIC = Path(__file__).parents[2] / "rubrics" / f"{SOOTHING}.yaml"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_row_is_a_heldout_soothing_dialogue_of_the_rubrics_tags():
    data = rows(V3)
    assert [r["id"] for r in data] == [f"sv3-{n:02d}" for n in range(1, 31)]
    applies = set(load_rubric(RUBRIC).applies_to.tags)
    for row in data:
        assert row["split"] == "heldout" and row["label"]["rubric"] == SOOTHING, row["id"]
        assert row["tags"] and set(row["tags"]) <= applies, row["id"]
        roles = [t["role"] for t in row["turns"]]
        assert roles == ["user", "assistant"] * (len(roles) // 2), row["id"]   # user first, strictly alternating
        assert 2 <= roles.count("assistant") <= 4 and all(t["content"].strip() for t in row["turns"]), row["id"]
        assert row["label"]["note"].strip(), row["id"]
    assert len(load_set(V3, "all", SOOTHING)) == len(data)             # the benchmark's own reader takes it


def test_labels_follow_the_rubrics_turn_aggregate_and_name_the_first_low_turn():
    rule = load_rubric(RUBRIC).turn_aggregate
    for row in rows(V3):
        label = row["label"]
        assistant = [str(n) for n, t in enumerate(row["turns"], 1) if t["role"] == "assistant"]
        assert sorted(label["turn_scores"], key=int) == assistant, row["id"]
        assert all(isinstance(v, int) and 1 <= v <= 5 for v in label["turn_scores"].values()), row["id"]
        verdicts = [TurnJudgement(turn=int(n), score=v, feedback="") for n, v in label["turn_scores"].items()]
        assert label["score"] == aggregate_turns(verdicts, rule)[0], row["id"]
        low = [int(n) for n, v in label["turn_scores"].items() if v < rule.threshold]
        assert label["violation_turn"] == (min(low) if low else None), row["id"]


def test_every_level_is_present_at_least_four_times_and_nothing_is_copied_from_the_spent_sets():
    data = rows(V3)
    levels = Counter(r["label"]["score"] for r in data)
    assert set(levels) == {1, 2, 3, 4, 5} and min(levels.values()) >= 4, levels
    spent = {t.content for s in load_set(DATA, "all") for t in s.conversation.turns}
    spent |= {t["content"] for r in rows(V2) for t in r["turns"]}
    for row in data:
        assert not {t["content"] for t in row["turns"]} & spent, row["id"]
