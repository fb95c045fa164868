"""The scorecard stage's bar on a small judge (issue 39): the plan counts a question item as one call, but the
embedded judge asks it of each turn of its party, so a conversation can ask more than planned — the bar's target
follows what was asked, up as well as down, and ends at calls/calls (it showed "judge 11/5 calls" in the demo)."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

from rubriceval.data.io import read_dataset
from rubriceval.judge.config import JudgeConfig
from rubriceval.run.evaluate import start_run
from rubriceval.run.scorecard_stage import score_run_scorecards
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.store.runs import RunStore
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply

ROOT = Path(__file__).resolve().parents[2]


def test_the_bar_ends_at_what_a_small_judge_asked(tmp_path, capsys):
    card = load_scorecard(ROOT / "scorecards" / "ecommerce_qa_zh.yaml")
    samples = list(read_dataset(ROOT / "datasets" / "demo_conversations_zh.jsonl"))
    runs = RunStore(tmp_path / "runs.sqlite")
    run_id, _ = start_run(samples, [], [], store=runs, judge_config=JudgeConfig(base_url="http://127.0.0.1:9/v1",
                                                                                 model="m"))
    judge = ScriptedJudge(lambda request: yes_no_reply(0.1))
    judge.config = judge.config.model_copy(update={"base_url": None})     # the embedded judge: decomposed per turn
    asyncio.run(score_run_scorecards(runs, run_id, [card], judge, progress=True))
    err = capsys.readouterr().err
    asked = len(judge.requests)
    bars = re.findall(r"judge (\d+)/(\d+) calls", err)
    assert asked > 0 and bars
    assert bars[-1] == (str(asked), str(asked)), bars[-3:]
    runs.close()
