"""Does the llama.cpp prompt-cache state move p(yes)? (issue 32.9; docs/benchmarks.md "Prefix-cache jitter")

The emotional_soothing checklist on the demo's order-delay answers, asked of the embedded judge three times with no
judge cache: (A) the questions in order after the sample prefix (a first run), (B) the same again (the prefix warm: a
rerun), (C) each question right after an unrelated prompt (the prefix cold). Prints every p(yes) and the fitted level.
Run: nice .venv/bin/python benchmarks/pipeline/prefix_cache_jitter.py
"""
from __future__ import annotations

import asyncio
import json

from rubriceval import load_rubric, read_dataset
from rubriceval.judge.ask import JudgeRequest, Reading, ask
from rubriceval.judge.config import JudgeConfig
from rubriceval.local.backends import make_judge
from rubriceval.scoring.checklist import ask_questions, fitted_level


async def main() -> None:
    rubric = load_rubric("rubrics/emotional_soothing.yaml")
    item = rubric.checklist_items[0]
    samples = [s for s in read_dataset("datasets/demo_zh.jsonl") if "订单延迟" in s.tags]
    judge = make_judge(JudgeConfig(model="local", cache=False), announce=False)
    out: dict = {}
    try:
        for sample in samples:
            states = {}
            for state in ("A_run", "B_rerun_warm"):
                answers, _ = await ask_questions(rubric, item, item.questions, sample, judge)
                states[state] = {a.question_id: a.p_yes for a in answers}
            cold = {}
            for question in item.questions:
                await ask(judge, JudgeRequest(messages=[{"role": "user", "content": f"说一个数字 {question.id}"}]),
                          lambda reply: Reading(value=1))
                answers, _ = await ask_questions(rubric, item, [question], sample, judge)
                cold[question.id] = answers[0].p_yes
            states["C_cold_each"] = cold
            out[sample.id] = {name: {"level": fitted_level(item.fitted, p), "p_yes": p} for name, p in states.items()}
    finally:
        await judge.close()
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
