"""A small run store with realistic customer-service verdicts, so the audit app can be tried (and tested) without
running a judge.

The deterministic checks are run for real (their evidence spans are genuine); the judge scores and feedback are
written here, marked `details.demo = true`, as an expert-looking stand-in for an LLM judge.
"""
from __future__ import annotations

import json
import random
import time
from pathlib import Path

from pydantic import BaseModel

from rubriceval import Evidence, Rubric, RunConfig, RunStore, Sample, Usage, Verdict
from rubriceval.checks import run_check

PROCESS = Rubric.model_validate({
    "id": "process_compliance", "name": "流程合规（报销）", "version": 1, "language": "zh", "threshold": 4,
    "criterion": "评估回答是否让员工能按公司规定完成报销：(a) 给出报销单链接 https://oa.example.com/expense/form 并说明需要"
                 "二级主管审批；或 (b) 引导用户到「费用系统」提交报销申请。编造链接、审批人或流程属于严重问题。",
    "score_descriptions": {
        1: "没有给出任何可执行的报销流程，或给出了错误/编造的流程、链接或审批人。",
        2: "提到了报销，但既没有报销单链接也没有引导到费用系统，用户仍不知道怎么办。",
        3: "给出了报销单链接或费用系统之一，但缺少二级主管审批等关键环节，或步骤含糊。",
        4: "给出了报销单链接并说明二级主管审批（或引导到费用系统），只缺少材料或时限等细节。",
        5: "流程完整准确：链接、二级主管审批、所需材料和时限都说明清楚。"},
    "items": [
        {"id": "judge", "type": "judge"},
        {"id": "form_link", "type": "required_link", "url_pattern": r"https?://oa\.example\.com/expense/.*",
         "allowed_domains": ["oa.example.com"], "description": "官方报销单链接"},
        {"id": "manager_approval", "type": "must_mention", "phrases": ["二级主管|二级经理|二级领导"],
         "description": "说明需要二级主管审批"},
    ],
})

SOOTHING = Rubric.model_validate({
    "id": "emotional_soothing", "name": "情绪安抚（订单延迟）", "version": 1, "language": "zh", "threshold": 4,
    "criterion": "用户因订单延迟而着急。好的回答先安抚情绪，再给出物流状态、预计送达时间、延误原因，以及退款/投诉等后续指引。"
                 "只说“请耐心等待”的敷衍回答应得低分。",
    "score_descriptions": {
        1: "没有安抚，语气生硬或敷衍，几乎没有有用信息。",
        2: "有简单安抚或少量信息，但缺少物流状态、预计送达时间和后续处理中的大部分。",
        3: "有安抚，并给出物流状态或预计送达时间之一，但缺少后续处理指引。",
        4: "先安抚，再给出物流状态和预计送达时间，并提供后续指引，只缺少延误原因等次要信息。",
        5: "先真诚安抚，再依次给出物流状态、预计送达时间、延误原因和退款/投诉指引。"},
    "items": [
        {"id": "judge", "type": "judge"},
        {"id": "soothe_first", "type": "steps_in_order", "description": "先安抚，再讲物流状态",
         "steps": ["抱歉|歉意|理解您|让您久等|着急", "物流|派送|运输|配送|状态"]},
        {"id": "follow_up", "type": "must_mention", "mode": "any", "phrases": ["退款", "补偿", "投诉"],
         "description": "给出后续处理指引"},
    ],
})

HELPFUL_EN = Rubric.model_validate({
    "id": "helpfulness_en", "name": "Resolution & grounding", "version": 1, "language": "en", "threshold": 4,
    "criterion": "Does the answer fully resolve the customer's request as the reference answer does, using only facts "
                 "supported by the retrieved contexts? Invented policies, links or promises are serious errors.",
    "score_descriptions": {
        1: "Does not resolve the request, refuses, or contradicts the reference answer.",
        2: "Addresses the topic but misses most key points; the customer must ask again.",
        3: "Covers the main point but omits important steps or has a minor inaccuracy.",
        4: "Covers nearly all key points accurately with clear next steps.",
        5: "Fully and accurately resolves the request, grounded in the contexts."},
    "items": [{"id": "judge", "type": "judge"},
              {"id": "concise", "type": "max_length", "max_chars": 600, "description": "Short enough to read"}],
})

RUBRICS = {r.id: r for r in (PROCESS, SOOTHING, HELPFUL_EN)}
VERSION_TAGS = {r.id: r.version_tag for r in RUBRICS.values()}   # hashing the rubric per verdict is slow

POLICY = ("【报销制度】差旅费、招待费报销：登录报销单页面 https://oa.example.com/expense/form 填写报销单，上传发票和行程单，"
          "由二级主管审批；审批通过后财务在 5 个工作日内打款。出差结束后 30 天内提交。也可以在「费用系统」中直接提交。")
INVOICE = "【发票规定】报销需提供抬头为公司全称的增值税发票，电子发票需打印并签字。"
LOGISTICS = "【物流公告】受暴雨影响，华东地区部分线路延误 1–2 天。订单延误超过 3 天可申请运费补偿或全额退款。"
RETURNS = ("[Returns policy] Items can be returned within 30 days of delivery for a full refund. Start a return at "
           "https://shop.example.com/returns. Refunds reach the original payment method within 5 business days.")


class DemoTemplate(BaseModel):
    sample: Sample
    judged: dict[str, tuple[int | None, str]]   # rubric id → (judge score or None = unscored, feedback or reason)


TEMPLATES: list[DemoTemplate] = [
    DemoTemplate(sample=Sample(
        id="exp-good", question="差旅费怎么报销？", tags=["报销"], intent="reimbursement",
        answer="您好！请登录报销单页面 https://oa.example.com/expense/form 填写报销单并上传发票和行程单，提交后由您的二级主管审批，"
               "审批通过后 5 个工作日内打款。",
        contexts=[POLICY, INVOICE],
        ground_truth="登录 https://oa.example.com/expense/form 填写报销单并上传发票和行程单，由二级主管审批，5 个工作日内打款。"),
        judged={"process_compliance": (5, "给出了官方链接、二级主管审批、材料和打款时限，流程完整。")}),
    DemoTemplate(sample=Sample(
        id="exp-partial", question="报销需要谁审批？", tags=["报销"], intent="reimbursement",
        answer="报销需要领导审批，您填好单子交上去就行。", contexts=[POLICY],
        ground_truth="报销需要二级主管审批，报销单链接为 https://oa.example.com/expense/form。"),
        judged={"process_compliance": (2, "只说“领导审批”，没有给出报销单链接，也没有说明是二级主管。")}),
    DemoTemplate(sample=Sample(
        id="exp-bad-link", question="差旅报销的链接是什么？", tags=["报销", "需链接"], intent="reimbursement",
        answer="请访问 http://expense-help.cn/form 填写报销单，找部门经理签字即可。", contexts=[POLICY, INVOICE],
        ground_truth="报销单链接是 https://oa.example.com/expense/form，提交后由二级主管审批。"),
        judged={"process_compliance": (3, "给出了一个报销链接和审批人，流程基本可执行。")}),
    DemoTemplate(sample=Sample(
        id="delay-curt", question="我的订单都延迟三天了还没到，怎么回事？", tags=["订单延迟"], intent="delivery_delay",
        answer="您的订单正在派送中，请耐心等待。", contexts=[LOGISTICS],
        ground_truth="先致歉；说明受暴雨影响华东线路延误 1–2 天，订单正在派送；延误超过 3 天可申请运费补偿或全额退款。"),
        judged={"emotional_soothing": (1, "没有任何安抚，只有一句“请耐心等待”，没有预计送达时间、原因和后续指引。")}),
    DemoTemplate(sample=Sample(
        id="delay-good", question="快递太慢了，我很着急，什么时候能到？", tags=["订单延迟"], intent="delivery_delay",
        answer="非常抱歉让您久等了，理解您的着急！您的包裹目前在转运中心，受暴雨影响预计明天送达。如果延误超过 3 天，"
               "您可以申请运费补偿或全额退款。",
        contexts=[LOGISTICS, INVOICE],
        ground_truth="致歉并安抚；包裹在转运中心，受暴雨影响预计明天送达；延误超过 3 天可申请补偿或退款。"),
        judged={"emotional_soothing": (5, "先真诚致歉，再给出物流状态、预计送达时间、延误原因和补偿/退款指引。")}),
    DemoTemplate(sample=Sample(
        id="delay-info-first", question="订单一直没收到，能不能快点？", tags=["订单延迟"], intent="delivery_delay",
        answer="物流显示包裹在派送途中，预计后天送达。抱歉给您带来不便。", contexts=[LOGISTICS],
        ground_truth="先致歉，再说明包裹在派送途中、预计后天送达；延误超过 3 天可申请补偿或退款。"),
        judged={"emotional_soothing": (None, "parse_error: the judge's reply contained two different scores "
                                              "(after 2 judge replies)")}),
    DemoTemplate(sample=Sample(
        id="return-en", question="How do I return a jacket I bought last week?", tags=["returns"], intent="returns",
        answer="You can return it within 30 days for a full refund. Start at https://shop.example.com/returns.",
        contexts=[RETURNS],
        ground_truth="Start a return at https://shop.example.com/returns within 30 days of delivery; the refund "
                     "reaches your original payment method within 5 business days."),
        judged={"helpfulness_en": (4, "Correct window, link and refund; omits the 5-business-day timing.")}),
    DemoTemplate(sample=Sample(
        id="return-en-vague", question="Can I get my money back for shoes that don't fit?", tags=["returns"],
        intent="returns", answer="Please contact support for assistance with your request.", contexts=[RETURNS],
        ground_truth="Yes: return them within 30 days at https://shop.example.com/returns for a full refund."),
        judged={"helpfulness_en": (1, "Does not answer; the contexts give a clear 30-day return policy.")}),
]


def _verdict(rubric: Rubric, sample: Sample, score: int | None, text: str, checks: list[Evidence]) -> Verdict:
    evidence = list(checks)
    common = dict(sample_id=sample.id, scorer=rubric.id, scorer_version=VERSION_TAGS[rubric.id], kind="rubric",
                  details={"demo": True})
    if score is None:
        return Verdict(**common, unscored_kind="parse_error", unscored_reason=text, evidence=evidence)
    evidence.append(Evidence(item="judge", score=score, passed=score >= rubric.threshold, detail=text))
    return Verdict(**common, score=float(score), feedback=text, evidence=evidence, passed=score >= rubric.threshold,
                   usage=Usage(calls=1, prompt_tokens=900, completion_tokens=120))


def build_demo_store(path: str | Path, *, n_samples: int | None = None, run_name: str = "demo-audit",
                     seed: int = 0) -> str:
    """Create a run in the store at `path` and return its run id.

    n_samples=None writes the templates once; a larger number cycles them with varied judge scores (to try the
    queue at scale, e.g. 10,000 verdicts).
    """
    rng = random.Random(seed)
    count = n_samples if n_samples is not None else len(TEMPLATES)
    samples: list[Sample] = []
    planned: list[tuple[str, DemoTemplate, str, int | None]] = []      # (sample id, template, rubric id, score)
    for i in range(count):
        template = TEMPLATES[i % len(TEMPLATES)]
        copy = i >= len(TEMPLATES)
        sample = template.sample.model_copy(update={"id": f"{template.sample.id}-{i}"}) if copy else template.sample
        samples.append(sample)
        for rubric_id, (score, _) in template.judged.items():
            if copy and score is not None:
                score = min(5, max(1, score + rng.choice((-1, 0, 0, 1))))
            planned.append((sample.id, template, rubric_id, score))
    store = RunStore(path)
    try:
        scorers = [(r.id, "rubric", VERSION_TAGS[r.id], r.model_dump(mode="json")) for r in RUBRICS.values()]
        scorers.append(("answer_correctness", "metric", "answer_correctness@1", {}))
        run_id = store.create_run(RunConfig(dataset_path="demo", rubrics=dict(VERSION_TAGS),
                                            metrics=["answer_correctness"]), samples, scorers, name=run_name)
        hashes = {s.id: s.input_hash() for s in samples}
        # Copies of a template share its text, so one verdict per (template, rubric, score) serves them all.
        columns: dict[tuple[str, str, int | None], tuple] = {}
        rows = []
        for sample_id, template, rubric_id, score in planned:
            key = (template.sample.id, rubric_id, score)
            if key not in columns:
                rubric = RUBRICS[rubric_id]
                checks = [run_check(item, template.sample) for item in rubric.check_items]
                v = _verdict(rubric, template.sample, score, template.judged[rubric_id][1], checks)
                columns[key] = (v.scorer, v.kind, v.scorer_version, v.score, v.unscored_kind, v.unscored_reason,
                                v.feedback, json.dumps([e.model_dump() for e in v.evidence], ensure_ascii=False),
                                json.dumps(v.details, ensure_ascii=False), None if v.passed is None else int(v.passed),
                                v.usage.model_dump_json())
            rows.append((run_id, sample_id, *columns[key], hashes[sample_id], time.time()))
        metric_usage = Usage().model_dump_json()
        rows += [(run_id, s.id, "answer_correctness", "metric", "answer_correctness@1", round(rng.uniform(0.2, 0.95), 3),
                  None, None, "", "[]", "{}", None, metric_usage, hashes[s.id], time.time()) for s in samples]
        # One transaction for all rows (per-row commits take seconds at 10k rows); the row layout is
        # RunStore.save_verdict's.
        with store.lock, store.conn:
            store.conn.executemany("INSERT INTO verdicts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        store.set_status(run_id, "finished")
    finally:
        store.close()
    return run_id
