"""Audit tables in the run store: responses, ground-truth edits, optimistic concurrency, the append-only log,
the queue query and the corrected-dataset export. Store tests run on SQLite and on PostgreSQL (`store_target`)."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd
import pytest

from rubriceval import AuditStore, RunStore, read_dataset
from rubriceval.store.audit_models import AuditError, ItemVersions, QueueFilter
from rubriceval.store.db import Database
from rubriceval.store.export import changed_samples, export_corrected_dataset
from rubriceval.store.location import is_server_url
from rubriceval.ui.audit.demo import build_demo_store
from tests.helpers.store_copy import DATABASE_ERRORS


@pytest.fixture()
def store_path(store_target: str | Path) -> str | Path:
    """The demo run in a SQLite file, then in a PostgreSQL database (every test using it runs on both)."""
    build_demo_store(store_target)
    return store_target


@pytest.fixture()
def store(store_path: str | Path):
    with AuditStore(store_path) as audit:
        yield audit


def test_agree_override_and_reason_rules(store: AuditStore) -> None:
    run = store.resolve("latest")
    item = store.item(run, "delay-curt", "emotional_soothing")          # judge gave 1
    assert item.verdict.score == 1.0 and item.versions == ItemVersions()

    agreed = store.save_response(run, "delay-curt", "emotional_soothing", expert="王工", score=1,
                                 expected=item.versions)
    assert agreed.ok and agreed.changes == ["agree"] and agreed.versions.item == 1

    with pytest.raises(AuditError, match="reason is required"):
        store.save_response(run, "delay-curt", "emotional_soothing", expert="王工", score=3, reason="   ",
                            expected=agreed.versions)
    for bad in (0, 6, 2.5, True):
        with pytest.raises(AuditError, match="1 to 5"):
            store.save_response(run, "delay-curt", "emotional_soothing", expert="王工", score=bad, reason="x",
                                expected=agreed.versions)
    with pytest.raises(AuditError, match="name"):
        store.save_response(run, "delay-curt", "emotional_soothing", expert="  ", score=1, expected=agreed.versions)

    overridden = store.save_response(run, "delay-curt", "emotional_soothing", expert="王工", score=2,
                                     reason="有一句致歉，不是完全没有安抚", expected=agreed.versions)
    assert overridden.ok and overridden.changes == ["override"]
    [response] = store.responses(run, sample_id="delay-curt")
    # Same expert, same item: one row, updated; the judge's score is kept beside it as the suggestion judged.
    assert (response.expert, response.score, response.action, response.judge_score) == ("王工", 2, "override", 1.0)
    assert response.reason == "有一句致歉，不是完全没有安抚"
    assert [e.outcome for e in store.audit_log(run)] == ["saved", "saved"]


def test_unscored_verdict_takes_a_score_without_reason_and_metrics_are_refused(store: AuditStore) -> None:
    run = store.resolve("latest")
    item = store.item(run, "delay-info-first", "emotional_soothing")
    assert item.verdict.score is None and "parse_error" in item.verdict.unscored_reason
    result = store.save_response(run, "delay-info-first", "emotional_soothing", expert="li", score=3,
                                 expected=item.versions)
    assert result.ok and result.changes == ["score_unscored"]
    with pytest.raises(AuditError, match="metric"):
        store.save_response(run, "delay-info-first", "answer_correctness", expert="li", score=3, expected=ItemVersions())


def test_two_writers_on_one_item_one_wins_and_nothing_is_lost(store_path: str | Path) -> None:
    # Two connections, as two app processes would have; both opened the item at version 0.
    stores = [AuditStore(store_path), AuditStore(store_path)]
    run = stores[0].resolve("latest")
    seen = stores[0].item(run, "exp-partial", "process_compliance").versions
    barrier = threading.Barrier(2)
    results: dict[str, object] = {}

    def write(store: AuditStore, expert: str, score: int) -> None:
        barrier.wait()
        results[expert] = store.save_response(run, "exp-partial", "process_compliance", expert=expert, score=score,
                                              reason=f"{expert} 的理由", expected=seen)

    threads = [threading.Thread(target=write, args=(stores[0], "alice", 1)),
               threading.Thread(target=write, args=(stores[1], "bob", 3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outcomes = sorted(results.items(), key=lambda kv: not kv[1].ok)
    (winner, won), (loser, lost) = outcomes
    assert won.ok and not lost.ok
    assert lost.conflict is not None and winner in lost.conflict.message and lost.conflict.changed_by == winner

    log = stores[0].audit_log(run)
    assert sorted((e.expert, e.outcome) for e in log) == sorted([(winner, "saved"), (loser, "conflict")])
    lost_entry = next(e for e in log if e.outcome == "conflict")
    assert lost_entry.payload["reason"] == f"{loser} 的理由"          # what the loser typed is kept
    assert [r.expert for r in stores[0].responses(run)] == [winner]

    # The loser reloads (new versions), sees the winner's response, and saves: both responses now stand.
    reloaded = stores[1].item(run, "exp-partial", "process_compliance")
    assert [r.expert for r in reloaded.responses] == [winner]
    again = stores[1].save_response(run, "exp-partial", "process_compliance", expert=loser,
                                    score=lost_entry.payload["score"], reason=lost_entry.payload["reason"],
                                    expected=reloaded.versions)
    assert again.ok
    assert sorted(r.expert for r in stores[0].responses(run)) == ["alice", "bob"]
    for s in stores:
        s.close()


def test_an_item_is_read_in_one_snapshot(store_path: str | Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Bob saves while alice's item is being read, after her responses were read and before the versions are.
    alice, bob = AuditStore(store_path), AuditStore(store_path)
    run = alice.resolve("latest")
    read_responses = AuditStore.responses

    def responses_then_bob_saves(self, *args, **kwargs):
        shown = read_responses(self, *args, **kwargs)
        if self is alice:
            current = bob.item(run, "exp-partial", "process_compliance").versions
            assert bob.save_response(run, "exp-partial", "process_compliance", expert="bob", score=2, reason="r",
                                     expected=current).ok
        return shown
    monkeypatch.setattr(AuditStore, "responses", responses_then_bob_saves)
    seen = alice.item(run, "exp-partial", "process_compliance")
    monkeypatch.undo()
    assert seen.responses == [] and seen.versions.item == 0         # the state before bob's save, all of it
    late = alice.save_response(run, "exp-partial", "process_compliance", expert="alice", score=1, reason="r",
                               expected=seen.versions)
    assert not late.ok and late.conflict.changed_by == "bob"       # so her save cannot pass over his unseen
    alice.close()
    bob.close()


def test_concurrent_ground_truth_edits_conflict_and_a_gt_edit_invalidates_open_responses(store: AuditStore) -> None:
    run = store.resolve("latest")
    seen = store.item(run, "exp-partial", "process_compliance").versions
    first = store.edit_ground_truth(run, "exp-partial", editor="alice", expected_sample_version=seen.sample,
                                    ground_truth="报销需要二级主管审批。")
    assert first.ok and first.changes == ["ground_truth"]
    second = store.edit_ground_truth(run, "exp-partial", editor="bob", expected_sample_version=seen.sample,
                                     ground_truth="报销需要部门经理审批。")
    assert not second.ok and "ground truth" in second.conflict.message
    # The stored value is alice's; bob's attempt is in the log with his text.
    assert store.item(run, "exp-partial", "process_compliance").sample.ground_truth == "报销需要二级主管审批。"
    conflict = [e for e in store.audit_log(run) if e.outcome == "conflict"]
    assert conflict[0].payload["ground_truth"] == "报销需要部门经理审批。"
    # An expert who opened the item before the edit judged the old ground truth: their response conflicts too.
    stale = store.save_response(run, "exp-partial", "process_compliance", expert="carol", score=2, expected=seen)
    assert not stale.ok
    with pytest.raises(AuditError, match="nothing changed"):
        store.edit_ground_truth(run, "exp-partial", editor="alice", expected_sample_version=first.versions.sample,
                                ground_truth="报销需要二级主管审批。")


def test_audit_log_and_edit_history_are_append_only(store: AuditStore) -> None:
    run = store.resolve("latest")
    store.edit_ground_truth(run, "exp-good", editor="alice", expected_sample_version=0, ground_truth="新的参考答案")
    for sql in ("UPDATE audit_log SET expert='mallory'", "DELETE FROM audit_log",
                "UPDATE audit_gt_edits SET editor='mallory'", "DELETE FROM audit_gt_edits"):
        with pytest.raises(DATABASE_ERRORS, match="append-only"):
            store.conn.execute(sql)
    if is_server_url(store.path):
        for table in ("audit_log", "audit_gt_edits"):
            with pytest.raises(DATABASE_ERRORS, match="append-only"):
                store.conn.execute(f"TRUNCATE {table}")
    assert [e.expert for e in store.audit_log(run)] == ["alice"]


def test_corrections_change_input_hash_and_export_with_provenance(store_path: str | Path, tmp_path: Path) -> None:
    with AuditStore(store_path) as store:
        run = store.resolve("latest")
        item = store.item(run, "exp-bad-link", "process_compliance")
        assert item.original.reference_contexts == []
        store.edit_ground_truth(run, "exp-bad-link", editor="张三", expected_sample_version=0,
                                ground_truth="报销单链接 https://oa.example.com/expense/form，二级主管审批。",
                                context_relevance={0: True, 1: False})
        # Marking a non-reference context irrelevant is recorded, but changes nothing a scorer reads.
        store.edit_ground_truth(run, "delay-good", editor="李四", expected_sample_version=0,
                                context_relevance={1: False})
        # An edit that is reverted changes nothing a scorer reads.
        original_gt = store.item(run, "return-en", "helpfulness_en").original.ground_truth
        first = store.edit_ground_truth(run, "return-en", editor="ann", expected_sample_version=0, ground_truth="x")
        store.edit_ground_truth(run, "return-en", editor="ann", expected_sample_version=first.versions.sample,
                                ground_truth=original_gt)
        with pytest.raises(AuditError, match="no retrieved context #9"):
            store.edit_ground_truth(run, "exp-good", editor="ann", expected_sample_version=0,
                                    context_relevance={8: True})

    changed = changed_samples(store_path, "latest")
    assert [s.id for s in changed] == ["exp-bad-link"]
    [fixed] = changed
    assert fixed.ground_truth.startswith("报销单链接") and fixed.reference_contexts == [fixed.contexts[0]]
    stored_hash = {s.id: s.input_hash() for s in RunStore(store_path).samples("latest")}
    assert fixed.input_hash() != stored_hash["exp-bad-link"]

    summary = export_corrected_dataset(store_path, "latest", tmp_path / "exports" / "v2.jsonl")
    assert (summary.n_samples, summary.n_corrected) == (8, 3)
    rows = {s.id: s for s in read_dataset(summary.path)}
    meta = rows["exp-bad-link"].metadata
    assert meta["edited_by"] == "张三" and meta["source_run"] == "demo-audit"
    assert meta["previous"]["ground_truth"].startswith("报销单链接是")
    assert meta["context_relevance"] == {"0": True, "1": False}
    assert {c["field"] for c in meta["corrections"]} == {"ground_truth", "context:0", "context:1"}
    assert rows["exp-bad-link"].ground_truth == fixed.ground_truth
    assert rows["delay-good"].metadata["edited_by"] == "李四"
    assert "edited_by" not in rows["exp-good"].metadata

    # Excel: read_dataset does not parse the metadata cell back yet, so read the sheet itself.
    excel = export_corrected_dataset(store_path, "latest", tmp_path / "exports" / "v2.xlsx")
    sheet = pd.read_excel(excel.path, dtype=str).set_index("id")
    assert sheet.loc["exp-bad-link", "ground_truth"] == fixed.ground_truth
    assert json.loads(sheet.loc["exp-bad-link", "metadata"])["edited_by"] == "张三"


def test_queue_filters_order_and_progress(store: AuditStore) -> None:
    run = store.resolve("latest")
    everything = store.queue(run)
    assert len(everything) == 8                                         # rubric verdicts only, no metric rows
    scores = [r.judge_score for r in everything]
    assert scores[-1] is None                                           # unscored last in the default order
    assert scores[:-1] == sorted(scores[:-1])                           # lowest judge score first
    assert [r.sample_id for r in store.queue(run, QueueFilter(status="unscored"))] == ["delay-info-first"]
    assert {r.scorer for r in store.queue(run, QueueFilter(scorer="helpfulness_en"))} == {"helpfulness_en"}
    assert {r.sample_id for r in store.queue(run, QueueFilter(tag="需链接"))} == {"exp-bad-link"}
    assert len(store.queue(run, QueueFilter(intent="delivery_delay"))) == 3
    assert {r.judge_score for r in store.queue(run, QueueFilter(score_min=2, score_max=3))} == {2.0, 3.0}

    item = store.item(run, "exp-bad-link", "process_compliance")        # judge 3
    store.save_response(run, "exp-bad-link", "process_compliance", expert="alice", score=1, reason="链接是编造的",
                        expected=item.versions)
    item = store.item(run, "exp-good", "process_compliance")            # judge 5
    store.save_response(run, "exp-good", "process_compliance", expert="bob", score=5, expected=item.versions)
    disagreement = store.queue(run, QueueFilter(status="disagreement"))
    assert [(r.sample_id, r.gap, r.human_scores) for r in disagreement] == [("exp-bad-link", 2.0, "alice=1")]
    assert len(store.queue(run, QueueFilter(status="unaudited"))) == 6
    mine = store.queue(run, QueueFilter(status="unaudited_by_me", expert="alice"))
    assert len(mine) == 7 and "exp-bad-link" not in {r.sample_id for r in mine}
    assert store.queue(run, QueueFilter(order="gap_desc", expert="alice"))[0].my_score == 1
    assert store.progress(run, "alice").model_dump() == {"total": 8, "audited": 2, "audited_by_me": 1}
    paged = store.with_text(run, everything[:2])
    assert paged[0].question == "我的订单都延迟三天了还没到，怎么回事？" and paged[0].intent == "delivery_delay"


def test_missing_store_is_an_error_not_a_new_file(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="no run store"):
        AuditStore(tmp_path / "nope.sqlite")
    assert not (tmp_path / "nope.sqlite").exists()


def test_a_server_database_without_runs_is_no_store_and_stays_empty(postgres_url: str) -> None:
    with pytest.raises(AuditError, match="no run store") as raised:
        AuditStore(postgres_url)
    assert raised.value.file == postgres_url          # (no password in the test URL; display_location keeps it)
    db = Database(postgres_url)
    assert not db.table_exists("runs") and not db.table_exists("audit_log")
    db.close()
