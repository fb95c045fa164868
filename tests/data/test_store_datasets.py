"""The run store keeps one copy of each dataset version, written window by window as it is read. Every test runs on a
SQLite file and on a PostgreSQL database (`store_target`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rubriceval import DatasetError, RunConfig, RunStore, Sample
from rubriceval.data.io import iter_samples


def _samples(n, changed=None):
    return [Sample(id=f"s{i}", question=f"问题{i}", answer="回答", ground_truth=changed if i == 1 and changed else "")
            for i in range(n)]


def _count(store, table):
    return store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_runs_over_the_same_content_share_one_copy(store_target):
    store = RunStore(store_target)
    a = store.create_run(RunConfig(), _samples(7), [], name="a")
    b = store.create_run(RunConfig(), iter(_samples(7)), [], name="b")          # a stream, same content
    c = store.create_run(RunConfig(), _samples(7, changed="改过"), [], name="c")
    assert store.dataset_id(a) == store.dataset_id(b) != store.dataset_id(c)
    assert _count(store, "datasets") == 2 and _count(store, "dataset_samples") == 14
    assert store.samples("b") == _samples(7) and store.samples("c")[1].ground_truth == "改过"
    assert store.run_info("b").n_samples == 7


def test_windows_come_in_dataset_order(store_target):
    store = RunStore(store_target)
    store.create_run(RunConfig(), _samples(10), [], name="a")
    windows = list(store.sample_windows("a", window=4))
    assert [len(w) for w in windows] == [4, 4, 2]
    assert [s.id for w in windows for s, _ in w] == [f"s{i}" for i in range(10)]
    assert all(h == s.input_hash() for w in windows for s, h in w)


def test_a_duplicate_id_names_both_lines_and_leaves_no_copy(store_target, tmp_path):
    path = tmp_path / "d.jsonl"
    rows = [{"id": f"r{i}", "question": "q"} for i in range(5)] + [{"id": "r2", "question": "again"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = RunStore(store_target)
    with pytest.raises(DatasetError) as err:
        store.store_dataset(iter_samples(path, check_duplicates=False, with_lines=True), source=str(path))
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 6, "id")
    assert "duplicate id 'r2' (first at line 3)" in err.value.message
    assert _count(store, "dataset_samples") == 0 and _count(store, "datasets") == 0


def test_a_bad_line_midway_leaves_no_half_copy(store_target, tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": f"r{i}", "question": "q"}) + "\n" for i in range(2500)) + "{oops\n",
                    encoding="utf-8")
    store = RunStore(store_target)
    with pytest.raises(DatasetError) as err:
        store.create_run(RunConfig(), iter_samples(path, check_duplicates=False), [], name="x")
    assert err.value.line == 2501
    assert _count(store, "dataset_samples") == 0 and _count(store, "runs") == 0


def test_a_copy_left_by_a_killed_writer_is_dropped_by_the_next_one(store_target):
    db = store_target
    script = ("import os, sys\n"
              "from rubriceval.data.sample import Sample\n"
              "from rubriceval.store.runs import RunStore\n"
              "def rows():\n"
              "    for i in range(3000):\n"
              "        if i == 2500: os.kill(os.getpid(), 9)\n"
              "        yield Sample(id=f's{i}', question='q')\n"
              "RunStore(sys.argv[1]).store_dataset(rows())\n")
    subprocess.run([sys.executable, "-c", script, str(db)], timeout=120, env={**os.environ})
    store = RunStore(db)
    assert _count(store, "dataset_samples") == 2000                      # two windows were committed, then kill -9
    store.store_dataset(_samples(3))
    assert _count(store, "dataset_samples") == 3 and _count(store, "datasets") == 1


def test_a_taken_name_is_refused_before_the_dataset_is_read(store_target):
    store = RunStore(store_target)
    store.create_run(RunConfig(), _samples(2), [], name="daily")

    def never_read():
        raise AssertionError("the dataset was read")
        yield

    with pytest.raises(Exception, match="already exists"):
        store.create_run(RunConfig(), never_read(), [], name="daily")
