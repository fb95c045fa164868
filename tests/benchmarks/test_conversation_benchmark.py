"""The labelled conversation set and its benchmark (issue 28.5), with a scripted judge: the set's shape and labels,
every mode runs on the held-out half through the run's own path, rows resume, the table is computed from them."""
from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from benchmarks.judge import conversations as bench
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.loader import load_rubric
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply


def test_the_set_has_40_plus_dialogues_half_held_out_with_labels_from_the_level_descriptions():
    rows = [json.loads(line) for line in bench.DATA.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 40
    by_rubric = Counter(r["label"]["rubric"] for r in rows)
    assert by_rubric == {"identity_verification": 24, "emotional_soothing_multiturn": 24}
    held = [r for r in rows if r["split"] == "heldout"]
    assert 20 <= len(held) <= 28
    for rubric in by_rubric:                       # every level 1-5 appears in the held-out half of each rubric
        assert {r["label"]["score"] for r in held if r["label"]["rubric"] == rubric} == {1, 2, 3, 4, 5}
    for r in rows:
        if "turn_scores" in r["label"]:            # the per-turn rubric's own aggregate, share_at_least 4
            scores = list(r["label"]["turn_scores"].values())
            assert r["label"]["score"] == int(1 + 4 * sum(s >= 4 for s in scores) / len(scores) + 0.5)
        turn = r["label"]["violation_turn"]
        assert turn is None or r["turns"][turn - 1]["role"] == "assistant"


def reply(request):
    if request.schema_name == "checklist_answer":
        return yes_no_reply(0.8)
    if request.schema_name == "turn_verdicts":
        turns = request.json_schema["properties"]["turns"]["items"]["properties"]["turn"]["enum"]
        return {"turns": [{"turn": t, "feedback": "ok", "score": 4} for t in turns]}
    return {"feedback": "第 2 轮透露了订单号", "score": 2}


def test_every_mode_runs_resumes_and_reports(monkeypatch, tmp_path):
    judge = ScriptedJudge(reply)
    monkeypatch.setattr("rubriceval.local.backends.make_judge", lambda config, announce=True: judge)
    partial = tmp_path / "b.partial.jsonl"
    rows = asyncio.run(bench.run_modes(JudgeConfig(model="scripted"), list(bench.MODES), partial=partial,
                                       progress=False))
    held = len(bench.load_set())
    assert len(rows) == 3 * held and all(r.score is not None for r in rows)
    calls = len(judge.requests)
    again = asyncio.run(bench.run_modes(JudgeConfig(model="scripted"), list(bench.MODES), partial=partial,
                                        resume=True, progress=False))
    assert [r.model_dump() for r in again] == [r.model_dump() for r in rows] and len(judge.requests) == calls
    summaries = {(s.rubric, s.mode): s for s in bench.summarise(rows, n_boot=50)}
    assert set(summaries) == {(r, m) for r in ("identity_verification", "emotional_soothing_multiturn")
                              for m in bench.MODES}
    holistic = summaries[("identity_verification", "holistic")]
    assert holistic.localisable > 0 and holistic.localised >= 1       # the feedback cites 第 2 轮
    assert summaries[("identity_verification", "checklist")].localisable == 0     # a checklist names no turn
    predicates = summaries[("emotional_soothing_multiturn", "predicates")]
    assert predicates.calls_per_dialogue > 0
    assert "κ [95 % CI]" in bench.table(list(summaries.values()))


def test_predicates_mode_levels_a_dialogue_from_its_checks():
    rubric = load_rubric("rubrics/identity_verification.yaml")
    assert rubric.predicate_levels and rubric.judge_mode == "holistic"
    moded = bench.rubrics_in_mode("predicates", "scripted")["identity_verification"]
    assert moded.judge_mode == "predicates" and moded.judge_items == []
    with pytest.raises(SystemExit):
        bench.rubrics_in_mode("checklist_fitted", "scripted")
