"""The labelled conversation benchmark (issue 28): splits, the fresh held-out 情绪安抚（多轮） set, the shipped rubric's
predicates (a brush-off fails whatever a lenient judge says), the dev-half cut-off fit."""
from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from benchmarks.judge.conversation_cutoffs import TurnPoint, fit, labelled_turns
from benchmarks.judge.conversations import DATA, _row, load_set, rubrics_in_mode
from rubriceval import Conversation
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply

V2 = Path(DATA).parent / "conversations_zh_soothing_v2.jsonl"
SOOTHING = "emotional_soothing_multiturn"


def aggregate(turn_scores: dict[str, int]) -> int:
    """The rubric's turn_aggregate (share_at_least 4): 1 + 4 x the share of turns at 4+, rounded half up."""
    share = sum(1 for v in turn_scores.values() if v >= 4) / len(turn_scores)
    return math.floor(1 + 4 * share + 0.5)


def test_splits_partition_the_set_and_the_rubric_filter_keeps_one_rubric():
    dev, held, every = (load_set(DATA, split) for split in ("dev", "heldout", "all"))
    assert len(dev) + len(held) == len(every) and not {s.id for s in dev} & {s.id for s in held}
    soothing_dev = load_set(DATA, "dev", SOOTHING)
    assert soothing_dev and {s.metadata["label"]["rubric"] for s in soothing_dev} == {SOOTHING}


def test_the_fresh_soothing_set_is_labelled_by_the_rubrics_aggregate_and_new():
    rows = [json.loads(line) for line in V2.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 20 and len({r["id"] for r in rows}) == len(rows)
    assert {r["label"]["score"] for r in rows} == {1, 2, 3, 4, 5}
    old = {t.content for s in load_set(DATA, "all") for t in s.conversation.turns}
    for row in rows:
        label = row["label"]
        assistant = [str(n) for n, t in enumerate(row["turns"], 1) if t["role"] == "assistant"]
        assert row["split"] == "heldout" and label["rubric"] == SOOTHING
        assert sorted(label["turn_scores"]) == sorted(assistant)
        assert label["score"] == aggregate(label["turn_scores"]), row["id"]
        low = [int(n) for n, v in label["turn_scores"].items() if v < 4]
        assert label["violation_turn"] == (min(low) if low else None)
        assert not {t["content"] for t in row["turns"]} & old        # not the old dialogues reworded by copy


def chat(*turns: tuple[str, str]):
    sample = conversation_sample(Conversation(id="c", turns=[{"role": r, "content": c} for r, c in turns]))
    return sample.model_copy(update={"tags": ["投诉"]})


def test_a_brush_off_fails_the_soothing_rubric_even_when_the_judge_says_yes_to_everything():
    rubric = rubrics_in_mode("predicates", "stub", wanted=(SOOTHING,))[SOOTHING]
    lenient = ScriptedJudge(lambda request: yes_no_reply(0.9))
    brushed = chat(("user", "快递五天没动了"), ("assistant", "理解您的着急，请耐心等待。"),
                   ("user", "到底什么时候到"), ("assistant", "这个我们也没办法。"))
    low = asyncio.run(score_rubric(rubric, brushed, lenient))
    assert low.score == 1 and lenient.requests == []          # brush-offs are settled without asking the judge
    row = _row("predicates", brushed.model_copy(update={"metadata": {"label": {"score": 1, "violation_turn": 2}}}),
               rubric, "stub", low, 1.0)
    assert row.named_turn == 2
    good = chat(("user", "快递五天没动了"), ("assistant", "让您久等了，真抱歉。包裹卡在武汉中转站，明天发出。"),
                ("user", "能快点吗"), ("assistant", "我来看看能不能走更快的线路。"))
    high = asyncio.run(score_rubric(rubric, good, lenient))   # turn 4 shows nothing concrete: the judge is asked
    assert high.score == 5 and [a["turn"] for a in high.details["turn_questions"]] == [4]
    strict = ScriptedJudge(lambda request: yes_no_reply(0.2))
    assert asyncio.run(score_rubric(rubric, good, strict)).score == 3     # 1 of 2 turns concrete: 1 + 4 x 0.5


def test_the_cutoff_is_fitted_on_turn_labels_and_refused_when_it_does_not_beat_half():
    samples = load_set(DATA, "dev", SOOTHING)
    turns = labelled_turns(samples)
    assert turns and all(turn.role == "assistant" for s, n, _ in turns for turn in [s.conversation.turns[n - 1]])
    # p(yes) all over 0.5 but ordered by the label: a cut-off above 0.5 separates them, 0.5 does not
    ranked = [TurnPoint(id=s.id, turn=n, level=lvl, p_yes=0.55 + 0.08 * (lvl >= 4) + 0.001 * i)
              for i, (s, n, lvl) in enumerate(turns)]
    result, cutoff = fit("q", ranked, "local")
    assert result.accepted and cutoff is not None and 0.55 < cutoff.value < 0.64 and cutoff.judge_model == "local"
    flat = [p.model_copy(update={"p_yes": 0.3}) for p in ranked]
    result, cutoff = fit("q", flat, "local")
    assert not result.accepted and cutoff is None


def test_the_dry_run_does_not_plan_questions_that_unless_phrases_settle():
    from rubriceval.scoring.turn_questions import plan_turn_questions

    rubric = rubrics_in_mode("predicates", "stub", wanted=(SOOTHING,))[SOOTHING]
    convo = chat(("user", "快递五天没动了"), ("assistant", "您好，请耐心等待。"),
                 ("user", "到底什么时候到"), ("assistant", "我来看看能不能走更快的线路。"))
    planned = plan_turn_questions(rubric.check_items, convo.conversation)
    concrete = [p for p in planned if "具体的原因" in p.messages[-1]["content"].split("# 问题")[-1]]
    assert [p.item_id for p in concrete] == ["turn4"]          # turn 2 says 请耐心等待 and nothing concrete


def test_both_entry_points_take_and_forward_split_rubric_modes_and_data(monkeypatch, tmp_path, capsys):
    from benchmarks.judge import conversations as bench
    from rubriceval.cli import main as cli

    seen = []

    async def fake_run_modes(config, modes, **kw):
        seen.append((modes, kw["split"], kw["rubric_id"], str(kw["data"]), kw["resume"]))
        return []

    monkeypatch.setattr(bench, "run_modes", fake_run_modes)
    argv = ["--split", "dev", "--rubric", SOOTHING, "--modes", "predicates", "--data", str(V2),
            "--out", str(tmp_path / "o.json"), "--resume"]
    assert cli(["benchmark-judge", "conversations", *argv]) == 0
    assert bench.main(argv) == 0
    assert seen == [(["predicates"], "dev", SOOTHING, str(V2), True)] * 2
    assert json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))["rows"] == []
    seen.clear()                     # the defaults: every mode on the held-out half; --judge-mode as one mode
    assert cli(["benchmark-judge", "conversations", "--out", str(tmp_path / "d.json")]) == 0
    assert cli(["benchmark-judge", "conversations", "--judge-mode", "checklist", "--out", str(tmp_path / "e.json")]) == 0
    assert [s[:3] for s in seen] == [(list(bench.MODES), "heldout", None), (["checklist"], "heldout", None)]
    with pytest.raises(SystemExit):
        bench.main(["--modes", "predicate", "--out", str(tmp_path / "f.json")])
