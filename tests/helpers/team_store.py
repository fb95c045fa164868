"""A run store for team-audit tests and benchmarks: n samples with tags and intents, two rubrics that declare
failure tags, judge scores skewed the way real runs are (few 1s, many 4s), and faithfulness / context-precision
verdicts with per-statement and per-context details. Written straight through RunStore (no judge), so 100,000
verdicts take seconds.
"""
from __future__ import annotations

import random
from pathlib import Path

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import Rubric
from rubriceval.standard_metrics.formulas import average_precision
from rubriceval.store.runs import RunConfig, RunStore

TAGS = ("订单延迟", "退款", "物流", "账户")
INTENTS = ("催单", "退款申请", "查询物流", "修改密码")
SCORE_WEIGHTS = {1: 0.08, 2: 0.12, 3: 0.2, 4: 0.35, 5: 0.25}

_LEVELS = {1: "没有安抚，语气生硬。", 2: "有简单安抚，信息很少。", 3: "有安抚和部分信息。", 4: "先安抚，再给出状态和指引。",
           5: "先真诚安抚，再给出完整信息与后续指引。"}
SOOTHING = Rubric.model_validate({
    "id": "soothing", "name": "情绪安抚", "version": 1, "language": "zh", "threshold": 4,
    "criterion": "先安抚情绪，再给出物流状态和后续指引。", "score_descriptions": _LEVELS,
    "failure_tags": ["未先安抚", "缺少链接", "编造政策"]})
LINKS = Rubric.model_validate({
    "id": "links", "name": "附链接", "version": 1, "language": "zh", "threshold": 4,
    "criterion": "回答必须附上官方链接。", "score_descriptions": {k: f"{v}（链接）" for k, v in _LEVELS.items()},
    "failure_tags": ["缺少链接", "编造链接"]})
RUBRICS = (SOOTHING, LINKS)


def judge_feedback(sample_id: str, scorer: str) -> str:
    """The judge's feedback of a generated verdict: unique, so a test can look for it in a page."""
    return f"JUDGE-SAYS-{scorer}-{sample_id}: 回答先道歉但没有给出预计送达时间。"


def _sample(i: int, rng: random.Random) -> Sample:
    tag = TAGS[i % len(TAGS)]
    return Sample(id=f"s{i:06d}", question=f"我的订单 {i} 怎么还没到？", answer="非常抱歉让您久等了，包裹正在派送中。",
                  contexts=["订单延迟时，客服应先致歉，再告知物流状态。", "退款政策：签收后 7 天内可申请。"],
                  ground_truth="先致歉，再给出物流状态和预计送达时间。", tags=[tag] + (["VIP"] if i % 7 == 0 else []),
                  intent=INTENTS[i % len(INTENTS)])


def _rubric_verdict(sample: Sample, rubric: Rubric, rng: random.Random) -> Verdict:
    if rng.random() < 0.02:
        return Verdict(sample_id=sample.id, scorer=rubric.id, scorer_version=rubric.version_tag, kind="rubric",
                       unscored_kind="parse_error", unscored_reason="no score in the reply")
    score = rng.choices(list(SCORE_WEIGHTS), weights=list(SCORE_WEIGHTS.values()))[0]
    return Verdict(sample_id=sample.id, scorer=rubric.id, scorer_version=rubric.version_tag, kind="rubric",
                   score=float(score), passed=score >= rubric.threshold,
                   feedback=judge_feedback(sample.id, rubric.id))


def _metric_verdicts(sample: Sample, rng: random.Random) -> list[Verdict]:
    statements = ["包裹正在派送中", "客服已经致歉", "预计明天送达"]
    supported = [rng.random() < 0.7 for _ in statements]
    relevant = [int(rng.random() < 0.6), int(rng.random() < 0.3)]
    faithfulness = Verdict(sample_id=sample.id, scorer="faithfulness", scorer_version="faithfulness@1",
                           kind="metric", score=sum(supported) / len(supported), feedback="statements judged",
                           details={"statements": statements, "supported": supported,
                                    "reasons": ["" for _ in statements]})
    precision = Verdict(sample_id=sample.id, scorer="context_precision", scorer_version="context_precision@1",
                        kind="metric", score=average_precision(relevant),
                        feedback="contexts judged", details={"verdicts": relevant, "reasons": ["", ""]})
    return [faithfulness, precision]


def build_team_store(path: str | Path, *, n_samples: int = 200, seed: int = 0, run_name: str = "team-run",
                     metrics: bool = True) -> str:
    """Write one run of `n_samples` samples × two rubrics (+ two metrics) and return its run id."""
    rng = random.Random(seed)
    samples = [_sample(i, rng) for i in range(n_samples)]
    scorers = [(r.id, "rubric", r.version_tag, r.model_dump(mode="json")) for r in RUBRICS]
    if metrics:
        scorers += [("faithfulness", "metric", "faithfulness@1", {}),
                    ("context_precision", "metric", "context_precision@1", {})]
    store = RunStore(path)
    try:
        run_id = store.create_run(RunConfig(dataset_path="generated", rubrics={r.id: r.version_tag for r in RUBRICS},
                                            metrics=["faithfulness", "context_precision"] if metrics else []),
                                  samples, scorers, name=run_name)
        batch: list[tuple[Verdict, str]] = []
        for sample in samples:
            hashed = sample.input_hash()
            batch += [(_rubric_verdict(sample, rubric, rng), hashed) for rubric in RUBRICS]
            if metrics:
                batch += [(v, hashed) for v in _metric_verdicts(sample, rng)]
            if len(batch) >= 5000:
                store.save_verdicts(run_id, batch)
                batch = []
        store.save_verdicts(run_id, batch)
        store.set_status(run_id, "complete")
    finally:
        store.close()
    return run_id
