"""Honest signal checks end to end (issue 29, item 3): a run whose judge gives every differing sample the same
faithfulness, and a checklist question whose p(yes) stays in a narrow band while another separates, makes both the
HTML and the Markdown report say "this judge gives no signal on …" (English and Chinese) — from the verdicts the
scorers really store, not hand-made ones."""
from __future__ import annotations

import re

import pytest

from rubriceval import JudgeConfig, RunStore, Sample, evaluate, load_rubrics, markdown_summary, write_html_report
from rubriceval.testing.scripted_judge import ScriptedJudge, fill_schema, yes_no_reply
from rubriceval.testing.stub_replies import grounded_statements, prompt_text

SAMPLES = [Sample(id=f"d{i}", question=f"我的订单已经{i + 2}天了还没到，怎么延迟这么久？", tags=["订单延迟"],
                  answer=f"非常抱歉让您久等了！您的包裹现在在{i}号转运中心，预计明天送达。",
                  contexts=[f"物流信息：包裹在{i}号转运中心，预计明天送达。"]) for i in range(10)]
SEPARATING = "对用户心情的理解"          # the 'soothe' question: p(yes) 0.1 or 0.9 by sample
NARROW = "预计送达的时间"                 # the 'eta' question: 0.55–0.59, no separation


def reply(request):
    text = prompt_text(request.messages)
    if request.options is not None and request.options.choices:          # a checklist question
        i = int(re.findall(r"(\d)号转运中心", text)[-1])
        if SEPARATING in request[-1]["content"]:
            return yes_no_reply(0.9 if i % 2 else 0.1)
        return yes_no_reply(0.55 + 0.004 * i if NARROW in request[-1]["content"] else 0.3 + 0.06 * i)
    return grounded_statements(fill_schema(True)(request), text)          # faithfulness: every statement supported


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    judge = ScriptedJudge(reply)
    monkeypatch.setattr("rubriceval.run.evaluate.make_judge", lambda config: judge)
    rubric = load_rubrics("rubrics", only=["emotional_soothing"])
    evaluate(SAMPLES, rubrics=rubric, metrics="faithfulness", store=tmp_path / "runs.sqlite", name="flat",
             judge=JudgeConfig(base_url="http://127.0.0.1:9/v1", model="scripted", judge_mode="checklist"),
             progress=False)
    return RunStore(tmp_path / "runs.sqlite")


def notices(text: str, marker: str) -> list[str]:
    return [line for line in text.splitlines() if marker in line]


def test_markdown_and_html_say_the_judge_gives_no_signal(store, tmp_path):
    faith = [v.score for v in store.verdicts("flat") if v.scorer == "faithfulness"]
    assert faith == [1.0] * 10                              # the constant the reports must not pass off as a figure
    for render in ("markdown", "html"):
        for lang, metric_notice, question_notice in (
                ("en", "this judge gives no signal on “faithfulness”: 1.00 on all 10 differing samples",
                 "question checklist.eta: p(yes) stays within 0.55–0.59"),
                ("zh", "这个判官在「faithfulness」上没有区分度：10 个不同样本全部是 1.00",
                 "检查问题 checklist.eta 上没有区分度：p(是) 始终在 0.55–0.59 之间")):
            if render == "markdown":
                text = markdown_summary(store, "flat", lang=lang)
            else:
                text = write_html_report(store, "flat", tmp_path / f"r.{lang}.html", lang=lang).read_text("utf-8")
            assert metric_notice in text, (render, lang)
            assert question_notice in text, (render, lang)
            assert "checklist.soothe" not in text, (render, lang)      # it separates yes from no: no notice
