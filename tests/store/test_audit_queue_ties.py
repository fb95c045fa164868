"""A verdict the judge was torn on at temperature 0 (details.tie: the two likeliest levels nearly equally likely)
comes first in the audit queue's "uncertain first" order, with the panel's and self-consistency's disagreements."""
from __future__ import annotations

from rubriceval import AuditStore, RunConfig, RunStore, Sample
from rubriceval.core.verdict import Verdict
from rubriceval.store.audit_models import QueueFilter


def test_tied_verdicts_come_first_when_uncertain_first(store_target):
    store = RunStore(store_target)
    run = store.create_run(RunConfig(), [Sample(id=f"s{i}", question=f"问题{i}") for i in range(4)],
                           [("tone", "rubric", "1", {})], name="r")
    tie = {"tie": {"items": {"tone": [3, 4]}, "spread": 0.12, "disagreement": True}}
    store.save_verdicts(run, [(Verdict(sample_id=f"s{i}", scorer="tone", kind="rubric", score=score,
                                       feedback="f", details=tie if i == 2 else {}), "")
                              for i, score in enumerate([1, 2, 5, 3])])
    with AuditStore(store_target) as audit:
        rows = audit.queue(run, QueueFilter(scorer="tone", order="uncertain_first"))
        assert [r.sample_id for r in rows[:1]] == ["s2"]
        assert rows[0].spread == 0.12
        assert [r.sample_id for r in audit.queue(run, QueueFilter(scorer="tone", order="judge_asc"))][:2] == ["s0", "s1"]
