"""The diagnosis calls a failing LLM checklist what it is (issue 32.10): the judge's yes/no answers, not a
deterministic check ("这是确定性检查（checklist）" was wrong); a deterministic check keeps its wording."""
from __future__ import annotations

from rubriceval import Evidence, Rubric, Sample, Verdict
from rubriceval.report.aggregate import summarize
from rubriceval.report.diagnosis import diagnose

LEVELS = {1: "差", 2: "较差", 3: "一般", 4: "较好", 5: "很好"}
RUBRIC = Rubric(id="soothing", name="情绪安抚", criterion="先安抚再说明", score_descriptions=LEVELS, threshold=4,
                combine={"rule": "weighted_mean"},
                items=[{"id": "checklist", "type": "checklist",
                        "questions": [{"id": "soothe", "ask": "回答是否先道歉或安抚？"}],
                        "levels": {5: "all", 4: "all", 3: "any", 2: "any", 1: "otherwise"}},
                       {"id": "short", "type": "max_length", "max_chars": 10}])
SAMPLES = [Sample(id=f"s{i}", question="快递还没到", answer="请耐心等待，包裹正在派送中，预计明天送达。") for i in range(4)]


def verdict(sample_id: str) -> Verdict:
    return Verdict(sample_id=sample_id, scorer="soothing", score=1, passed=False, feedback="没有先安抚",
                   evidence=[Evidence(item="checklist", passed=False, score=1, detail="soothe: 否"),
                             Evidence(item="short", passed=False, detail="42 字，超过 10 字")])


def test_a_failing_checklist_is_the_judges_not_a_deterministic_check():
    verdicts = [verdict(s.id) for s in SAMPLES]
    scorers = [{"scorer": "soothing", "kind": "rubric", "version": RUBRIC.version_tag,
                "definition": RUBRIC.model_dump(mode="json")}]
    findings = diagnose(summarize(verdicts, scorers, samples=SAMPLES), verdicts, scorers, SAMPLES)
    by_code = {f.code: f for f in findings}
    checklist, check = by_code["rubric_checklist_failing"], by_code["rubric_check_failing"]
    zh_title, zh_explain, zh_actions = checklist.text("zh")
    assert "检查清单 checklist" in zh_title and "不是确定性检查" in zh_explain and "确定性检查（" not in zh_explain
    assert "judge answers yes/no" in checklist.text("en")[1]
    assert [d.sample_id for d in checklist.samples] == ["s0", "s1", "s2", "s3"]      # the samples it failed on
    assert "确定性检查（max_length）" in check.text("zh")[1]
