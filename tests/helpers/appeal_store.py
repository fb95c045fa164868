"""A small run for tests of official scores, appeals and calibration sessions: conversations handled by two agents
(metadata agent_id), one rubric whose verdicts combine a judge item with a `must` check (a failed check caps the
score at 2, so removing that deduction gives the judge item's score back), and a metric beside it."""
from __future__ import annotations

from pathlib import Path

from rubriceval.core.verdict import Evidence, Verdict
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import Rubric
from rubriceval.store.runs import RunConfig, RunStore

RUBRIC = "soothing"
CHECK = "no_free_shipping"
DEFINITION = Rubric.model_validate({
    "id": RUBRIC, "name": "情绪安抚", "version": 1, "language": "zh", "threshold": 4, "weight": 1.0,
    "criterion": "先安抚情绪，再说明物流状态；不得承诺知识库没有的包邮。",
    "score_descriptions": {1: "没有安抚", 2: "敷衍", 3: "有安抚无状态", 4: "安抚并说明状态", 5: "安抚、状态、后续都有"},
    "items": [{"id": "judge", "type": "judge"},
              {"id": CHECK, "type": "must_not_mention", "phrases": ["包邮|免运费"], "must": True}],
    "combine": {"rule": "judge_capped", "cap_score": 2}}).model_dump(mode="json")
AGENTS = ("agent_wang", "agent_li")
JUDGE_FEEDBACK = "判官反馈："        # every verdict's feedback starts so: a blind view must show none of it


def rubric_verdict(sample_id: str, judge: int, check_passed: bool) -> Verdict:
    score = judge if check_passed or judge <= 2 else 2
    evidence = [Evidence(item=CHECK, passed=check_passed, detail="" if check_passed else "承诺了包邮", span=None),
                Evidence(item="judge", score=judge, passed=judge >= 4)]
    return Verdict(sample_id=sample_id, scorer=RUBRIC, scorer_version="1", score=float(score), passed=score >= 4,
                   feedback=JUDGE_FEEDBACK + ("先道歉了" if judge >= 4 else "没有安抚"), evidence=evidence,
                   details={"combine": "judge", "item_scores": {"judge": judge, CHECK: check_passed}})


def build_appeal_store(target: str | Path, *, n: int = 8, name: str = "qa-week") -> str:
    """n conversations, alternately agent_wang's and agent_li's; sample c000 of agent_wang has the failed check.
    Returns the run id."""
    store = RunStore(target)
    samples = [Sample(id=f"c{i:03d}", question=f"我的快递{i}天了还没到", answer=f"非常抱歉，给您包邮补发{i}",
                      metadata={"agent_id": AGENTS[i % 2]}, tags=["物流"]) for i in range(n)]
    version = Rubric.model_validate(DEFINITION).version_tag
    run_id = store.create_run(RunConfig(), samples, [(RUBRIC, "rubric", version, DEFINITION),
                                                     ("rouge_l", "metric", "1", {"name": "rouge_l"})], name=name)
    verdicts = []
    for i, s in enumerate(samples):
        verdicts.append(rubric_verdict(s.id, judge=4 if i % 3 else 5, check_passed=i % 4 != 0))
        verdicts.append(Verdict(sample_id=s.id, scorer="rouge_l", kind="metric", score=0.5))
    store.save_verdicts(run_id, [(v, "") for v in verdicts])
    store.close()
    return run_id
