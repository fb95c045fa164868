"""Aggregates, diagnosis, HTML, Excel and Markdown reports on a hand-built store of Chinese customer-service samples.

Every expected number below is computed by hand from the scores written in `build_store`.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from rubriceval import (
    Evidence,
    Rubric,
    RunConfig,
    RunStore,
    Sample,
    TrustBar,
    Usage,
    Verdict,
    markdown_summary,
    summarize,
    write_excel_report,
    write_html_report,
)
from rubriceval.common.tables import text_table
from rubriceval.report.diagnosis import DiagnosisConfig, diagnose
from rubriceval.report.i18n import detect_language
from rubriceval.rubric.schema import JudgeItem, RequiredLink

LINK = "https://oa.example.com/reimburse"
LEVELS_ZH = {1: "完全不符合要求", 2: "大部分不符合", 3: "部分符合", 4: "基本符合", 5: "完全符合要求"}

PROCESS = Rubric(id="process_compliance", name="流程合规",
                 criterion="回答报销问题时，必须给出报销系统链接并说明需二级经理审批",
                 score_descriptions=LEVELS_ZH, threshold=4, weight=2,
                 items=[JudgeItem(id="judge", type="judge"),
                        RequiredLink(id="reimburse_link", type="required_link", url=LINK)])
EMPATHY = Rubric(id="empathy", name="情绪安抚", criterion="先安抚情绪，再说明状态、预计时间、原因和退款/投诉途径",
                 score_descriptions=LEVELS_ZH, threshold=4, weight=1, trust=TrustBar(min_kappa=0.6, min_items=50))

SAMPLES = [
    Sample(id="s1", question="出差回来怎么报销？", answer=f"请登录报销系统 {LINK} 填写报销单，提交后需二级经理审批。",
           contexts=["报销流程：登录 OA 报销系统填写报销单，二级经理审批后财务打款。"],
           ground_truth="在报销系统提交，二级经理审批。",
           tags=["报销"], intent="报销咨询"),
    Sample(id="s2", question="我的快递五天没动了，你们到底怎么回事？！", answer="快递在路上，请耐心等待。",
           contexts=["物流延迟时先致歉，说明当前状态和预计送达时间。"], ground_truth="先致歉，再说明状态与预计时间。",
           tags=["物流", "投诉"], intent="物流查询"),
    Sample(id="s3", question="退款多久能到账？", answer="非常理解您的心情！退款已受理，预计 1-3 个工作日原路退回。",
           contexts=["退款审核通过后 1-3 个工作日原路退回。"], ground_truth="1-3 个工作日原路退回。",
           tags=["退款"], intent="退款咨询"),
    Sample(id="s4", question="发票报销需要哪些材料？", answer="需要发票原件和行程单。",
           contexts=["牛顿发现了万有引力"], ground_truth="发票原件、行程单，并经二级经理审批。",
           tags=["报销"], intent="报销咨询"),
    Sample(id="s5", question="电子发票怎么报销？", answer="直接把发票发给财务就行。",
           contexts=["电子发票需在报销系统上传 PDF。"], ground_truth="在报销系统上传电子发票 PDF，二级经理审批。",
           tags=["报销", "发票"], intent="报销咨询"),
    Sample(id="s6", question="包裹显示已签收但我没收到", answer="请您联系快递员。",
           contexts=["显示签收未收到：先致歉，登记工单，48 小时内回复。"],
           ground_truth="致歉，登记工单，48 小时内回复。",
           tags=["物流"], intent="物流查询"),
]

RUBRIC_USAGE = Usage(calls=1, prompt_tokens=800, completion_tokens=100, cost_usd=0.001)
PARSE_FAIL_USAGE = Usage(calls=2, prompt_tokens=1700, completion_tokens=300, cost_usd=0.0025)
FAITH_USAGE = Usage(calls=2, prompt_tokens=1200, completion_tokens=200, cost_usd=0.002)
FAITH_FAIL_USAGE = Usage(calls=1, prompt_tokens=500, completion_tokens=20, cost_usd=0.0005)
RECALL_USAGE = Usage(calls=1, prompt_tokens=600, completion_tokens=80, cost_usd=0.0008)
CACHED_USAGE = Usage(cache_hits=1)

# Run A (the baseline). None = unscored; the reason kinds are set in build_verdicts.
PROCESS_A = {"s1": 5, "s2": 2, "s3": 4, "s4": None, "s5": 1, "s6": 4}
LINK_OK = {"s1": True, "s2": False, "s3": True, "s4": True, "s5": False, "s6": True}
EMPATHY_A = {"s1": 3, "s2": 4, "s3": 5, "s5": None, "s6": 2}             # s4 is not a complaint: not planned
FAITH_A = {"s1": 0.9, "s2": 0.6, "s3": 1.0, "s4": 0.5, "s5": None, "s6": 0.8}
RECALL_A = {"s1": 1.0, "s2": 0.5, "s3": 1.0, "s4": 0.0, "s5": 0.5, "s6": 0.0}


def rubric_verdict(rubric: Rubric, sid: str, score: int | None, link_ok: bool | None = None) -> Verdict:
    evidence = []
    if rubric.id == PROCESS.id:
        evidence.append(Evidence(item="reimburse_link", passed=link_ok,
                                 detail="找到报销链接" if link_ok else f"缺少报销链接 {LINK}",
                                 missing=[] if link_ok else [LINK]))
    base = dict(sample_id=sid, scorer=rubric.id, kind="rubric", scorer_version=rubric.version_tag,
                evidence=evidence)
    if score is None:
        if rubric.id == PROCESS.id:
            return Verdict(unscored_kind="parse_error", usage=PARSE_FAIL_USAGE, **base,
                           unscored_reason="评审回复中没有 [RESULT] 分数 (after 2 judge replies)")
        return Verdict(unscored_kind="provider_error", unscored_reason="HTTP 503 Service Unavailable after 3 retries",
                       **base)
    feedback = {5: "完整给出链接与审批要求。", 4: "基本符合，表达可更清晰。", 3: "安抚不足，直接给出结论。",
                2: "回答敷衍，没有安抚用户情绪，也没有说明预计时间。",
                1: "没有给出报销链接，也未提二级经理审批。"}[score]
    evidence.append(Evidence(item="judge", score=score, passed=score >= rubric.threshold, detail=feedback))
    return Verdict(score=float(score), passed=score >= rubric.threshold, feedback=feedback, usage=RUBRIC_USAGE,
                   **base)


def metric_verdict(metric: str, sid: str, score: float | None) -> Verdict:
    if score is None:
        return Verdict(sample_id=sid, scorer=metric, kind="metric", scorer_version="1", unscored_kind="no_statements",
                       unscored_reason="回答中没有可提取的陈述", usage=FAITH_FAIL_USAGE)
    usage = FAITH_USAGE if metric == "faithfulness" else (CACHED_USAGE if sid == "s6" else RECALL_USAGE)
    return Verdict(sample_id=sid, scorer=metric, kind="metric", scorer_version="1", score=score,
                   feedback=f"{metric} = {score}", usage=usage)


def build_verdicts(process=PROCESS_A, empathy=EMPATHY_A, faith=FAITH_A, recall=RECALL_A,
                   link_ok=LINK_OK) -> list[Verdict]:
    out = [rubric_verdict(PROCESS, sid, score, link_ok[sid]) for sid, score in process.items()]
    out += [rubric_verdict(EMPATHY, sid, score) for sid, score in empathy.items()]
    out += [metric_verdict("faithfulness", sid, score) for sid, score in faith.items()]
    out += [metric_verdict("context_recall", sid, score) for sid, score in recall.items()]
    return out


def scorer_defs() -> list[tuple[str, str, str, dict]]:
    return [(r.id, "rubric", r.version_tag, r.model_dump(mode="json")) for r in (PROCESS, EMPATHY)] + \
           [(m, "metric", "1", {"name": m}) for m in ("faithfulness", "context_recall")]


def add_run(store: RunStore, name: str, verdicts: list[Verdict], samples: list[Sample] = SAMPLES) -> str:
    config = RunConfig(dataset_path="datasets/客服评测集.jsonl", rubrics={PROCESS.id: PROCESS.version_tag,
                                                                         EMPATHY.id: EMPATHY.version_tag},
                       metrics=["faithfulness", "context_recall"], judge={"model": "qwen-plus"})
    run_id = store.create_run(config, samples, scorer_defs(), name=name)
    for v in verdicts:
        store.save_verdict(run_id, v)
    store.set_status(run_id, "complete")
    return run_id


def build_store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "runs.sqlite")
    add_run(store, "baseline", build_verdicts())
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    """Built once: tests only read it (the hostile-input tests use their own store)."""
    return build_store(tmp_path_factory.mktemp("report"))


# -- aggregates ------------------------------------------------------------------------------------------------------

def test_rubric_aggregates_by_hand(store: RunStore):
    summary = summarize(store.verdicts("baseline"), store.scorers("baseline"), samples=store.samples("baseline"))
    process = summary.get("process_compliance")
    assert (process.n_total, process.n_scored, process.n_unscored) == (6, 5, 1)
    assert process.mean == pytest.approx(3.2)                     # (5+2+4+1+4)/5
    assert process.median == 4
    assert process.std == pytest.approx(math.sqrt(10.8 / 4))      # squared deviations 3.24+1.44+.64+4.84+.64
    assert process.pass_rate == pytest.approx(0.6)                # 5, 4, 4 reach 4
    assert process.distribution == {1: 1, 2: 1, 3: 0, 4: 2, 5: 1}
    assert process.weight == 2 and process.threshold == 4
    assert [(g.kind, g.count) for g in process.unscored] == [("parse_error", 1)]
    assert "RESULT" in process.unscored[0].example_reasons[0]
    empathy = summary.get("情绪安抚")                              # by display name
    assert empathy.scorer == "empathy"
    assert empathy.mean == pytest.approx(3.5) and empathy.median == pytest.approx(3.5)
    assert empathy.pass_rate == pytest.approx(0.5)
    assert empathy.trust == {"min_kappa": 0.6, "min_items": 50}
    # Business score: weighted mean of rubric means = (3.2·2 + 3.5·1) / 3.
    assert summary.business_score == pytest.approx(3.3)
    assert sorted(summary.business_rubrics) == ["empathy", "process_compliance"]


def test_metric_aggregates_usage_and_no_nan(store: RunStore):
    summary = summarize(store.verdicts("baseline"), store.scorers("baseline"), samples=store.samples("baseline"),
                        metric_thresholds={"context_recall": 0.6})
    faith = summary.get("faithfulness")
    assert faith.mean == pytest.approx(0.76) and faith.n_unscored == 1
    assert faith.threshold == 0.8 and faith.threshold_source == "default"
    assert faith.pass_rate == pytest.approx(0.6)                 # 0.9, 1.0, 0.8 of five
    assert faith.histogram == [0, 0, 1, 1, 3]                    # .5 | .6 | .9 1.0 .8
    recall = summary.get("context_recall")
    assert recall.mean == pytest.approx(0.5) and recall.threshold_source == "config"
    assert recall.pass_rate == pytest.approx(2 / 6)
    assert summary.rag_scores == {"faithfulness": pytest.approx(0.76), "context_recall": pytest.approx(0.5)}
    u = summary.usage
    assert (u.calls, u.cache_hits, u.prompt_tokens, u.completion_tokens) == (27, 1, 18400, 2620)
    assert u.cost_usd == pytest.approx(0.026)
    assert (summary.n_verdicts, summary.n_unscored) == (23, 3)
    frame = summary.to_pandas()
    assert list(frame["kind"]) == ["rubric", "rubric", "metric", "metric"]          # business view first
    assert frame.loc[frame.scorer == "faithfulness", "n_1"].iloc[0] is None      # None, not NaN


def test_breakdown_per_tag_and_intent(store: RunStore):
    summary = summarize(store.verdicts("baseline"), store.scorers("baseline"), samples=store.samples("baseline"))
    cell = {(g.dimension, g.value, g.scorer): g for g in summary.breakdown}
    reimburse = cell[("tag", "报销", "process_compliance")]       # s1 5, s4 unscored, s5 1
    assert (reimburse.n_samples, reimburse.n_scored, reimburse.n_unscored) == (3, 2, 1)
    assert reimburse.mean == pytest.approx(3.0) and reimburse.pass_rate == pytest.approx(0.5)
    logistics = cell[("intent", "物流查询", "empathy")]           # s2 4, s6 2
    assert logistics.mean == pytest.approx(3.0)
    reimburse_empathy = cell[("tag", "报销", "empathy")]          # s1 3, s5 provider error (s4 not planned)
    assert (reimburse_empathy.n_scored, reimburse_empathy.n_unscored) == (1, 1)
    assert reimburse_empathy.mean == pytest.approx(3.0) and reimburse_empathy.pass_rate == 0
    assert ("tag", "发票", "context_recall") in cell and cell[("tag", "发票", "context_recall")].n_samples == 1


def test_no_scored_rows_gives_none_with_note():
    verdicts = [Verdict.unscored("x1", "empathy", "timeout", "timed out after 3 retries"),
                Verdict.unscored("x2", "empathy", "timeout", "timed out after 3 retries")]
    summary = summarize(verdicts, [{"scorer": "empathy", "kind": "rubric", "version": "v1",
                                    "definition": {"name": "情绪安抚", "threshold": 4, "weight": 1}}])
    s = summary.get("empathy")
    assert s.mean is None and s.pass_rate is None and s.std is None
    assert any("no scored rows" in note for note in s.notes)
    assert s.unscored[0].example_reasons == ["timed out after 3 retries"]      # distinct reasons only
    assert summary.business_score is None and "no scored rows" in summary.business_score_note


# -- diagnosis -------------------------------------------------------------------------------------------------------

def _diagnose_store(store: RunStore, config: DiagnosisConfig | None = None):
    verdicts, scorers, samples = store.verdicts("baseline"), store.scorers("baseline"), store.samples("baseline")
    return diagnose(summarize(verdicts, scorers, samples=samples), verdicts, scorers, samples, config)


def test_diagnosis_follows_the_seeds_table_on_the_store(store: RunStore):
    findings = _diagnose_store(store)
    codes = [(f.code, f.scorer) for f in findings]
    assert codes[0] == ("low_context_recall", "context_recall")          # recall comes first
    assert ("low_generation_retrieval_first", "faithfulness") in codes     # retrieval is low too: fix it first
    recall = findings[0]
    assert [d.sample_id for d in recall.samples] == ["s4", "s6", "s2", "s5"]   # lowest first, below 0.7
    assert any("embedding" in a for a in recall.actions["zh"]) and any("query" in a for a in recall.actions["zh"])
    link = next(f for f in findings if f.code == "rubric_check_failing")
    assert link.scorer == "process_compliance" and link.severity == "high"      # rubric mean 3.2 < 4 as well
    assert link.value == pytest.approx(2 / 6)
    assert [d.sample_id for d in link.samples] == ["s5", "s2"]                  # scores 1 then 2
    assert LINK in link.samples[0].detail and "链接" in link.actions["zh"][0]
    empathy = next(f for f in findings if f.code == "rubric_low")
    assert empathy.scorer == "empathy" and [d.sample_id for d in empathy.samples] == ["s6", "s1"]
    assert not any(f.code == "rubric_low" and f.scorer == "process_compliance" for f in findings)
    unscored = {f.scorer for f in findings if f.code == "many_unscored"}
    assert unscored == {"empathy", "process_compliance", "faithfulness"}       # 1/5, 1/6, 1/6 > 10%


def test_diagnosis_thresholds_are_configurable(store: RunStore):
    config = DiagnosisConfig(thresholds={"context_recall": 0.4, "faithfulness": 0.7, "情绪安抚": 3.0},
                             check_fail_rate=0.5, max_unscored_rate=0.25)
    # Recall, faithfulness and empathy now pass; the link check (2/6 failing) is under the 50% bar, so the process
    # rubric's low mean is reported on its own; 1/5 and 1/6 unscored are under 25%.
    findings = _diagnose_store(store, config)
    assert [(f.code, f.scorer) for f in findings] == [("rubric_low", "process_compliance")]
    assert [d.sample_id for d in findings[0].samples] == ["s5", "s2"]


def _metric_rows(metric: str, scores: dict[str, float]) -> list[Verdict]:
    return [Verdict(sample_id=sid, scorer=metric, kind="metric", score=score) for sid, score in scores.items()]


def _metric_scorers(*names: str) -> list[dict]:
    return [{"scorer": n, "kind": "metric", "version": "1", "definition": {"name": n}} for n in names]


def test_low_correctness_with_good_retrieval_points_to_generation():
    verdicts = (_metric_rows("context_recall", {f"q{i}": 1.0 for i in range(1, 6)})
                + _metric_rows("context_precision", {"q1": 0.9, "q2": 0.8, "q3": 0.9, "q4": 0.9, "q5": 0.5})
                + _metric_rows("answer_correctness", {"q1": 0.3, "q2": 0.9, "q3": 0.5, "q4": 0.95, "q5": 0.1}))
    scorers = _metric_scorers("context_recall", "context_precision", "answer_correctness")
    findings = diagnose(summarize(verdicts, scorers), verdicts, scorers)
    assert [f.code for f in findings] == ["low_generation"]
    generation = findings[0]
    assert generation.value == pytest.approx(0.55) and generation.threshold == 0.7
    # q5 has the lowest correctness, but its own precision (0.5) is poor: the samples proving a generation
    # problem are the ones retrieved well.
    assert [d.sample_id for d in generation.samples] == ["q1", "q3", "q5"]
    assert "context_precision 0.90" in generation.samples[0].detail
    assert any("temperature" in a for a in generation.actions["zh"])


def test_low_precision_suggests_reranking_and_blocks_the_generation_verdict():
    verdicts = (_metric_rows("context_recall", {"q1": 1.0, "q2": 1.0})
                + _metric_rows("context_precision", {"q1": 0.5, "q2": 0.3})
                + _metric_rows("answer_correctness", {"q1": 0.4, "q2": 0.6}))
    scorers = _metric_scorers("context_recall", "context_precision", "answer_correctness")
    findings = diagnose(summarize(verdicts, scorers), verdicts, scorers)
    assert [f.code for f in findings] == ["low_context_precision", "low_generation_retrieval_first"]
    assert any("rerank" in a for a in findings[0].actions["zh"])
    assert findings[0].severity == "high"                                   # nobody reaches 0.7
    only_answers = [v for v in verdicts if v.scorer == "answer_correctness"]
    alone = diagnose(summarize(only_answers, scorers[2:]), only_answers, scorers[2:])
    assert [f.code for f in alone] == ["low_generation_unlocated"]


# -- HTML / Excel / Markdown -----------------------------------------------------------------------------------------

XSS_ANSWER = "<script>alert('x')</script> =HYPERLINK(\"http://evil\")"


def _hostile_store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "hostile.sqlite")
    sample = Sample(id="x1", question="<b>怎么</b>报销？", answer=XSS_ANSWER, tags=["<i>tag</i>"])
    verdict = Verdict(sample_id="x1", scorer="empathy", kind="rubric", score=1.0, passed=False,
                      feedback="<img src=x onerror=alert(1)> 没有安抚")
    add_run(store, "hostile", [verdict], samples=[sample])
    return store


def test_html_report_has_key_numbers_and_is_self_contained(store: RunStore, tmp_path: Path):
    path = write_html_report(store, "baseline", tmp_path / "report.html",
                             agreement={"empathy": "κ = 0.71 [0.58, 0.80] on 120 audited items"})
    html = path.read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in html and "业务总分" in html               # Chinese data → Chinese report
    assert "3.30" in html and "0.76" in html and "0.50" in html               # business score, RAG means
    assert "60.0%" in html and "50.0%" in html and "33.3%" in html            # pass rates
    assert "κ = 0.71 [0.58, 0.80] on 120 audited items" in html
    assert "HTTP 503 Service Unavailable after 3 retries" in html              # unscored reason
    assert "缺少报销链接" in html and "回答敷衍" in html                       # evidence and judge feedback
    assert "rerank" not in html and "embedding" in html                        # only the recall finding applies
    assert "18400" in html and "0.0260" in html                                # tokens and cost
    assert html.count("<svg") >= 6                                             # 2 overview + 4 distributions
    for external in ("<script", "<link", "@import", 'src="http', "url(http"):
        assert external not in html
    english = write_html_report(store, "baseline", tmp_path / "en.html", lang="en").read_text(encoding="utf-8")
    assert '<html lang="en">' in english and "Business score" in english and "3.30" in english


def test_html_escapes_user_text(tmp_path: Path):
    store = _hostile_store(tmp_path)
    html = write_html_report(store, "hostile", tmp_path / "x.html").read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<b>怎么</b>" not in html and "<i>tag</i>" not in html


def test_excel_workbook_is_filterable_and_keeps_text(store: RunStore, tmp_path: Path):
    from openpyxl import load_workbook

    path = write_excel_report(store, "baseline", tmp_path / "report.xlsx")
    sheets = pd.read_excel(path, sheet_name=None)
    assert {"summary", "samples"} <= set(sheets)
    summary, samples = sheets["summary"], sheets["samples"]
    assert summary.iloc[0]["平均分"] == pytest.approx(3.3)                     # the business score row leads
    row = summary[summary["id"] == "process_compliance"].iloc[0]
    assert row["平均分"] == pytest.approx(3.2) and row["通过率"] == pytest.approx(0.6) and row["数量 4"] == 2
    assert len(samples) == 23 and {"评审意见", "证据", "未评分原因"} <= set(samples.columns)
    assert (samples["未评分原因"].dropna() != "").sum() == 3
    wb = load_workbook(path)
    for name in ("summary", "samples"):
        assert wb[name].freeze_panes == "A2" and wb[name].auto_filter.ref
    assert wb["samples"].column_dimensions["H"].width == 50                    # feedback column wraps
    hostile = load_workbook(write_excel_report(_hostile_store(tmp_path), "hostile", tmp_path / "x.xlsx"))["samples"]
    answer_cell = hostile.cell(row=2, column=11)
    assert answer_cell.value == XSS_ANSWER and answer_cell.data_type == "s"


def test_markdown_summary_and_cjk_table(store: RunStore):
    text = markdown_summary(store, "baseline")
    assert "**业务总分**: 3.30 / 5" in text and "| 流程合规 (process_compliance) | 业务标准 | 3.20 | 60.0% |" in text
    assert "context_recall 偏低" in text and "s4, s6" in text
    table = text_table(["评分项", "mean"], [["情绪安抚", "3.50"], ["faithfulness", "0.76"]], right_align=(1,))
    lines = table.splitlines()
    from rubriceval.common.tables import display_width
    assert len({display_width(line) for line in lines}) == 1                  # columns line up with CJK text


def test_report_language_follows_the_data():
    zh = Sample(id="a", question="退款多久到账？")
    en = Sample(id="b", question="How long does a refund take?")
    assert detect_language([zh, zh, en]) == "zh" and detect_language([en, en, zh]) == "en"
    assert detect_language([zh, en]) == "zh" and detect_language([]) == "en"
