"""The audit queue is read a page at a time: the same rows, in the same order, as the whole query gives (on SQLite
and on PostgreSQL)."""
from __future__ import annotations

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.store.audit import AuditStore
from rubriceval.store.audit_models import QueueFilter
from rubriceval.store.audit_queue import queue_query, queue_row
from rubriceval.store.runs import RunConfig, RunStore


def _store(path, n=1300):
    store = RunStore(path)
    samples = [Sample(id=f"s{i:04d}", question=f"问题{i}") for i in range(n)]
    run = store.create_run(RunConfig(), samples, [("tone", "rubric", "1", {"id": "tone"})], name="r")
    store.save_verdicts(run, [(Verdict(sample_id=s.id, scorer="tone", score=float(1 + i % 5)) if i % 97
                               else Verdict.unscored(s.id, "tone", "timeout", "slow"), "")
                              for i, s in enumerate(samples)])
    store.close()
    return path


def test_pages_give_the_whole_query_in_order(store_target):
    with AuditStore(_store(store_target)) as audit:
        for flt in (QueueFilter(), QueueFilter(order="dataset"), QueueFilter(status="unscored"),
                    QueueFilter(score_min=2, score_max=3)):
            query = queue_query(audit.conn.sql, audit.resolve("r"), flt)
            expected = [queue_row(r) for r in audit.query(query.rows, query.params)]
            rows = audit.queue("r", flt)
            assert len(rows) == len(expected) and list(rows) == expected
            assert rows[498:503] == expected[498:503] and rows[-1] == expected[-1]


def test_a_replaced_row_stays_replaced_and_bounds_are_checked(store_target):
    with AuditStore(_store(store_target)) as audit:
        rows = audit.queue("r")
        fresh = rows[700].model_copy(update={"n_audits": 1})
        rows[700] = fresh
        assert rows[700] == fresh and rows[699] != fresh
        try:
            rows[len(rows)]
        except IndexError:
            pass
        else:
            raise AssertionError("no IndexError past the end")
        assert not audit.queue("r", QueueFilter(scorer="nothing"))
