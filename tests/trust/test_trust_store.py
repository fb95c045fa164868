"""The trust tables on both back ends (a SQLite file, a PostgreSQL database): agreement results with their ids,
rubric versions proposed → accepted | rejected once, duplicates refused, a missing store said, two deciders."""
from __future__ import annotations

import threading
import time

import pytest

from rubriceval.stats.agreement import agreement_report
from rubriceval.store.db import Database
from rubriceval.trust.store import RubricVersionRecord, TrustStore, TrustStoreError


def version(number: str, tag: str, **fields) -> RubricVersionRecord:
    return RubricVersionRecord(**{"rubric_id": "tone", "version": number, "version_tag": tag, "status": "proposed",
                                  "rubric": {"id": "tone", "version": number}, "created_at": time.time(), **fields})


def test_agreement_results_come_back_in_order_with_their_ids(store_target):
    report = agreement_report([5, 4, 2, 1, 3, 5], [5, 4, 1, 1, 3, 4], n_boot=0)
    with TrustStore(store_target, must_exist=False) as trust:
        first = trust.record_agreement("tone", "v1@a", report, source="audit", judge_model="m",
                                       experts={"fleiss_kappa": 0.5})
        second = trust.record_agreement("tone", "v1@a", report, source="labels", source_detail="labels.csv")
        third = trust.record_agreement("other", "v1@b", report, source="benchmark")
        assert first < second < third
        stored = trust.agreement_results("tone")
        assert [(r.result_id, r.source) for r in stored] == [(first, "audit"), (second, "labels")]
        assert stored[0].kappa == pytest.approx(report.kappa_quadratic.value)
        assert stored[0].experts == {"fleiss_kappa": 0.5} and stored[1].experts is None
        assert stored[0].report["n"] == 6 and stored[0].judge_model == "m"
        assert [r.result_id for r in trust.agreement_results(source="benchmark")] == [third]
        assert trust.agreement_results("tone", "v9@z") == []


def test_versions_are_decided_once_and_duplicates_refused(store_target):
    with TrustStore(store_target, must_exist=False) as trust:
        trust.add_version(version("1", "v1@a", status="accepted"))
        trust.add_version(version("2", "v2@b", parent_version_tag="v1@a", kappa_before=0.2, kappa_after=0.6,
                                  example_keys=["s1", "s2"], agreement_after={"n": 8}))
        with pytest.raises(TrustStoreError, match="already has a version 2"):
            trust.add_version(version("2", "v2@c"))                     # same number
        with pytest.raises(TrustStoreError, match="already has a version 3"):
            trust.add_version(version("3", "v2@b"))                     # same content
        assert [(v.version, v.status) for v in trust.versions("tone")] == [("1", "accepted"), ("2", "proposed")]
        proposed = trust.version("tone", "v2@b")
        assert proposed.example_keys == ["s1", "s2"] and proposed.agreement_after == {"n": 8}
        assert trust.has_version("tone", 2) and trust.has_version_tag("tone", "v1@a")
        assert not trust.has_version("tone", 3)

        decided = trust.decide("tone", 2, "accepted", decided_by="lead", note="better")
        assert (decided.status, decided.decided_by, decided.note) == ("accepted", "lead", "better")
        assert decided.decided_at is not None
        with pytest.raises(TrustStoreError, match="already accepted"):
            trust.decide("tone", "v2@b", "rejected")
        with pytest.raises(TrustStoreError, match="no recorded version '7'"):
            trust.version("tone", 7)


def test_two_leads_deciding_at_once_one_wins_the_other_is_told(store_target):
    with TrustStore(store_target, must_exist=False) as trust:
        trust.add_version(version("1", "v1@a"))
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def lead(status: str) -> None:
        with TrustStore(store_target, must_exist=False) as own:
            start.wait()
            try:
                own.decide("tone", 1, status, decided_by=status)  # type: ignore[arg-type]
                outcomes.append(f"won:{status}")
            except TrustStoreError as error:
                outcomes.append(f"told:{error}")

    threads = [threading.Thread(target=lead, args=(s,)) for s in ("accepted", "rejected")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if o.startswith("won:")]
    assert len(winners) == 1, outcomes
    loser = next(o for o in outcomes if o.startswith("told:"))
    with TrustStore(store_target, must_exist=False) as trust:
        final = trust.version("tone", 1)
    assert winners[0] == f"won:{final.status}" and f"already {final.status}" in loser


def test_a_store_that_holds_no_runs_is_refused_with_its_location(store_target):
    with pytest.raises(TrustStoreError, match="no run store here"):
        TrustStore(store_target)
    db = Database(store_target)          # a store with the runs table (as `rubriceval run` leaves it) opens
    db.execute("CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY)")
    db.close()
    with TrustStore(store_target) as trust:
        assert trust.agreement_results() == []
