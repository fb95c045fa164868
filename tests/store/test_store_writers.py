"""Several processes writing one run store at once (a team's shared store, or two runs started together on one
laptop): every run and every verdict lands once, nothing is lost or duplicated, on a SQLite file and on PostgreSQL."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from rubriceval import RunStore
from rubriceval.store.db import Database

WRITER = textwrap.dedent("""
    import sys
    from rubriceval import RunConfig, RunStore, Sample
    from rubriceval.core.verdict import Verdict
    store, me, rounds = RunStore(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    samples = [Sample(id=f"s{i}", question=f"问题 {i}") for i in range(200)]
    mine = store.create_run(RunConfig(), samples, [("tone", "rubric", "1", {})], name=f"run-{me}")
    shared = store.resolve("shared")
    for r in range(rounds):
        # its own run, in batches, and the shared run's rows, which every writer re-saves (last write wins, one row)
        store.save_verdicts(mine, [(Verdict(sample_id=f"s{i}", scorer="tone", kind="rubric", score=1 + (i + r) % 5,
                                            feedback=f"{me}:{r}"), "") for i in range(r * 20, r * 20 + 20)])
        for i in range(r * 20, r * 20 + 20):
            store.save_verdict(shared, Verdict(sample_id=f"s{i}", scorer="tone", kind="rubric", score=3,
                                               feedback=f"{me}:{r}"), "")
    print("done", flush=True)
""")


def test_three_processes_writing_at_once_lose_nothing(store_target):
    from rubriceval import RunConfig, Sample

    store = RunStore(store_target)
    store.create_run(RunConfig(), [Sample(id=f"s{i}", question=f"问题 {i}") for i in range(200)],
                     [("tone", "rubric", "1", {})], name="shared")
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(store_target), name, "10"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for name in ("a", "b", "c")]
    for writer in writers:
        out, err = writer.communicate(timeout=240)
        assert writer.returncode == 0 and out.strip() == "done", err
    store = RunStore(store_target)
    runs = {info.name: info for info in store.list_runs()}
    assert set(runs) == {"shared", "run-a", "run-b", "run-c"}
    # The three writers stored the same 200 samples once: one dataset version, shared by the four runs.
    assert len({store.dataset_id(name) for name in runs}) == 1
    db = Database(store_target)
    assert db.execute("SELECT COUNT(*) FROM dataset_samples").fetchone()[0] == 200
    for name in ("run-a", "run-b", "run-c"):
        verdicts = store.verdicts(name)
        assert [v.sample_id for v in verdicts] == [f"s{i}" for i in range(200)]
        assert {v.feedback.split(":")[0] for v in verdicts} == {name[-1]}
    shared = store.verdicts("shared")
    assert len(shared) == 200 and len({v.sample_id for v in shared}) == 200       # one row per key, none lost
    assert {v.feedback.split(":")[0] for v in shared} <= {"a", "b", "c"}
    db.close()
