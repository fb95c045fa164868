"""Two app processes saving the same audit item at the same moment, round after round, on SQLite and on PostgreSQL:
each round exactly one save wins and the other is told it conflicts, no saved response is lost or overwritten
unseen, and the append-only log keeps every attempt with what was typed."""
from __future__ import annotations

import multiprocessing
from pathlib import Path

from rubriceval.store.audit import AuditStore
from rubriceval.ui.audit.demo import build_demo_store
from tests.helpers.store_writers import race_saves

ROUNDS = 8
ITEM = ("exp-partial", "process_compliance")


def test_two_processes_one_wins_each_round_and_nothing_is_lost(store_target: str | Path) -> None:
    build_demo_store(store_target)
    context = multiprocessing.get_context("spawn")       # fresh interpreters: nothing shared but the store
    barrier, results = context.Barrier(2), context.Queue()
    writers = [context.Process(target=race_saves, args=(store_target, "latest", *ITEM, expert, ROUNDS, barrier,
                                                        results)) for expert in ("alice", "bob")]
    for writer in writers:
        writer.start()
    outcomes = dict(results.get(timeout=120) for _ in writers)
    for writer in writers:
        writer.join(timeout=30)
        assert writer.exitcode == 0
    for number in range(ROUNDS):
        assert sorted(outcomes[e][number][2] for e in outcomes) == [False, True], number   # one winner a round

    with AuditStore(store_target) as store:
        run = store.resolve("latest")
        item = store.item(run, *ITEM)
        assert item.versions.item == ROUNDS                   # every winning save bumped the version once
        log = [e for e in store.audit_log(run) if (e.sample_id, e.scorer) == ITEM]
        assert len(log) == 2 * ROUNDS                        # every attempt is logged, won or lost
        for expert, rounds in outcomes.items():
            mine = [e for e in log if e.expert == expert]
            assert [(e.payload["reason"], e.outcome == "saved") for e in mine] == [
                (f"{expert} round {n}", ok) for n, _, ok in rounds]           # what each typed, in order
            won = [score for _, score, ok in rounds if ok]
            stored = [r.score for r in item.responses if r.expert == expert]
            assert stored == won[-1:]                         # the last winning save stands: no lost update
