"""Honest figures in the diagnosis (issue 29): LLM and non-LLM retrieval metrics that contradict each other are
flagged per sample; a metric constant over differing samples, or a checklist question whose p(yes) does not move,
makes the report say the judge gives no signal — in memory and on a stored run (SQL index, Markdown report)."""
from __future__ import annotations

from rubriceval import RunConfig, RunStore, Sample, Verdict, markdown_summary
from rubriceval.report.aggregate import summarize
from rubriceval.report.diagnosis import diagnose

SAMPLES = [Sample(id=f"s{i}", question=f"问题{i}", answer=f"回答{i}", contexts=[f"资料{i}"], ground_truth=f"标准{i}")
           for i in range(1, 11)]


def metric(sid: str, name: str, score: float) -> Verdict:
    return Verdict(sample_id=sid, scorer=name, kind="metric", scorer_version="1", score=score, feedback="")


def checklist(sid: str, p_yes: float) -> Verdict:
    details = {"checklist": {"judge": {"questions": {"q1": {"answer": "yes", "p_yes": p_yes},
                                                     "q2": {"answer": "yes", "p_yes": 0.08 * int(sid[1:])}}}}}
    return Verdict(sample_id=sid, scorer="empathy", kind="rubric", scorer_version="v1", score=4.0, feedback="",
                   details=details)


def run_verdicts(recall_llm: dict, recall_nonllm: dict, faith: dict, p_yes: dict) -> list[Verdict]:
    return ([metric(s, "context_recall", v) for s, v in recall_llm.items()]
            + [metric(s, "nonllm_context_recall", v) for s, v in recall_nonllm.items()]
            + [metric(s, "faithfulness", v) for s, v in faith.items()]
            + [checklist(s, v) for s, v in p_yes.items()])


LLM = {"s1": 1.0, "s2": 1.0, "s3": 1.0, "s4": 0.5, "s5": 1.0, "s6": 1.0}
NONLLM = {"s1": 0.0, "s2": 1.0, "s3": 0.2, "s4": 0.5, "s5": 1.0, "s6": 0.8}
FAITH_CONSTANT = {s.id: 1.0 for s in SAMPLES}
FAITH_VARYING = {**FAITH_CONSTANT, "s3": 0.5}
P_NARROW = {s.id: 0.55 + 0.01 * i for i, s in enumerate(SAMPLES)}


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def findings_of(verdicts: list[Verdict]):
    return diagnose(summarize(verdicts, [], samples=SAMPLES), verdicts, [], SAMPLES)


def test_strong_disagreement_between_llm_and_nonllm_recall_is_flagged_with_its_samples():
    findings = findings_of(run_verdicts(LLM, NONLLM, FAITH_VARYING, {}))
    flag = next(f for f in findings if f.code == "retrieval_cross_check")
    assert flag.stage == "retrieval" and flag.scorer == "context_recall"
    assert [d.sample_id for d in flag.samples] == ["s1", "s3"]           # widest first; s4 agrees
    assert "context_recall 1.00 / nonllm_context_recall 0.00" in flag.samples[0].detail
    assert flag.value == 2 / 6 and flag.severity == "high"
    assert "2" in flag.title["zh"] and "disagree" in flag.title["en"]


def test_no_flag_when_they_agree_or_one_is_missing():
    assert "retrieval_cross_check" not in codes(findings_of(run_verdicts(LLM, LLM, FAITH_VARYING, {})))
    few = dict(list(FAITH_CONSTANT.items())[:9])        # nine rows of one value can simply be alike
    assert "no_signal_metric" not in codes(findings_of(run_verdicts({}, {}, few, {})))
    assert "retrieval_cross_check" not in codes(findings_of(run_verdicts(LLM, {}, FAITH_VARYING, {})))


def test_a_metric_constant_over_differing_samples_gives_no_signal():
    findings = findings_of(run_verdicts({}, {}, FAITH_CONSTANT, {}))
    notice = next(f for f in findings if f.code == "no_signal_metric")
    assert notice.stage == "judge" and notice.scorer == "faithfulness"
    assert notice.title["en"].startswith("this judge gives no signal on “faithfulness”")
    assert "没有区分度" in notice.title["zh"]
    assert "no_signal_metric" not in codes(findings_of(run_verdicts({}, {}, FAITH_VARYING, {})))
    alike = [SAMPLES[0].model_copy(update={"id": s.id}) for s in SAMPLES]          # the same sample six times
    verdicts = run_verdicts({}, {}, FAITH_CONSTANT, {})
    assert "no_signal_metric" not in codes(diagnose(summarize(verdicts, [], samples=alike), verdicts, [], alike))


def test_a_checklist_question_in_a_narrow_band_gives_no_signal():
    findings = findings_of(run_verdicts({}, {}, FAITH_VARYING, P_NARROW))
    notices = [f for f in findings if f.code == "no_signal_question"]
    assert [f.title["en"].split(" question ")[1].split(":")[0] for f in notices] == ["judge.q1"]   # q2 separates
    assert "0.55–0.64" in notices[0].title["en"]


def test_the_stored_run_report_says_so(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    scorers = [("empathy", "rubric", "v1", {"name": "empathy", "threshold": 4}),
               *[(m, "metric", "1", {"name": m}) for m in ("context_recall", "nonllm_context_recall",
                                                            "faithfulness")]]
    config = RunConfig(dataset_path="d.jsonl", rubrics={"empathy": "v1"},
                       metrics=["context_recall", "nonllm_context_recall", "faithfulness"], judge={"model": "x"})
    run_id = store.create_run(config, SAMPLES, scorers, name="signal")
    for v in run_verdicts(LLM, NONLLM, FAITH_CONSTANT, P_NARROW):
        store.save_verdict(run_id, v)
    store.set_status(run_id, "complete")
    text = markdown_summary(store, "signal", lang="en")
    assert "this judge gives no signal on “faithfulness”" in text
    assert "question judge.q1" in text
    assert "disagree strongly on 2 samples" in text
    zh = markdown_summary(store, "signal", lang="zh")
    assert "没有区分度" in zh and "严重不一致" in zh
