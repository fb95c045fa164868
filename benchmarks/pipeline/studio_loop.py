"""Time the studio loop for a new rubric on the demo data with the embedded judge, through the studio actions the app
calls (issue 30): validate, test a check, preview, plan, try on the demo samples, mark, save. Run: nice .venv/bin/python
benchmarks/pipeline/studio_loop.py [FOLDER] (default out/studio_loop; a fresh folder for a cold judge cache)."""
import json
import sys
import time
from pathlib import Path

from rubriceval import evaluate, load_rubrics
from rubriceval.judge.config import JudgeConfig
from rubriceval.studio.form import CheckSpec, RubricForm
from rubriceval.ui.studio.actions import Studio, values_of

root = Path(sys.argv[1] if len(sys.argv) > 1 else "out/studio_loop")
(root / "rubrics").mkdir(parents=True, exist_ok=True)
store = root / "runs.sqlite"
if not store.exists():
    evaluate("datasets/demo_zh.jsonl", rubrics=load_rubrics("rubrics", only=["required_link"]),
             judge=JudgeConfig(model="local"), store=store, name="demo", progress=False)
judge = JudgeConfig(model="local", cache_path=str(root / "cache.sqlite"))
s = Studio(root / "rubrics", store, judge)
t0 = time.perf_counter()
steps = {}
form = RubricForm(id="polite_delay", name="礼貌与安抚", criterion="回答是否礼貌，并先安抚用户情绪再给出办法。",
                  levels={1: "粗鲁或无视情绪", 2: "冷淡", 3: "礼貌但未安抚", 4: "先安抚再给办法", 5: "安抚、办法、后续都有"},
                  judge_sees=["question", "answer"],
                  checks=[CheckSpec(id="no_rude", type="must_not_mention", values=["你自己看", "不知道"])])
values = tuple(values_of(form))
def step(name, fn):
    a = time.perf_counter()
    out = fn()
    steps[name] = round(time.perf_counter() - a, 2)
    return out
run = s.runs()[0][1]
step("validate", lambda: s.validate(values, ""))
step("test_checks", lambda: s.test_checks(values, "", "您好，非常抱歉让您久等了。", None, None))
sid = s.samples(run)[0].id
step("preview", lambda: s.preview(values, "", run, sid))
plan = step("plan", lambda: s.plan(values, "", run, "first", 5, ""))
rows = step("try", lambda: list(s.try_draft(values, "", run, "first", 5, "")))
frame, trial_run, ids = rows[-1]
step("mark", lambda: s.mark(trial_run, ids[0], "polite_delay", "lead", "👎", 2, "没有安抚", "zh"))
step("save", lambda: s.save(values, "", "", "zh"))
total = round(time.perf_counter() - t0, 1)
print(json.dumps({"steps_s": steps, "total_s": total, "samples_tried": len(ids), "plan": plan.splitlines()[-1]}, ensure_ascii=False))
print(frame.to_string())
