"""Progress counts judge requests against the dry-run plan (issue 32.7): requests done / planned, requests/s and
an ETA, refreshed while a slow judge works (it used to move only when a sample finished)."""
from __future__ import annotations

import re
import time

from rubriceval import evaluate
from rubriceval.judge.client import CallStats
from rubriceval.run.runner import RunProgress
from rubriceval.testing.stub_server import StubServer


def test_the_plan_is_extrapolated_to_the_whole_run_and_gives_an_eta():
    stats = CallStats()
    bar = RunProgress(100, stats, enabled=False)
    assert bar.calls_line() == ""                           # nothing planned yet: no figure made up
    bar.plan(40, 10)                                        # the first window: 10 of 100 samples, 40 calls
    bar.started = time.perf_counter() - 10.0
    stats.requests = 20                                     # 2 requests/s
    line = bar.calls_line()
    assert line.startswith("judge 20/400 calls 2.00/s ETA ")
    assert line.split("ETA ")[1].strip() == "03:10"          # 380 left at 2/s


def test_a_run_shows_requests_against_the_plan_while_the_judge_works(tmp_path, capsys):
    rows = [{"question": f"我的快递{i}怎么还没到？", "answer": "抱歉让您久等了，包裹正在派送中。"} for i in range(3)]
    with StubServer(latency_s=0.8) as stub:
        result = evaluate(rows, rubrics="rubrics/emotional_soothing.yaml", store=tmp_path / "r.sqlite",
                          judge={"base_url": stub.base_url, "model": "stub", "cache_path": str(tmp_path / "c.sqlite"),
                                 "judge_mode": "checklist", "concurrency": 1}, progress=True)
        sent = len(stub.stats.requests)
    err = capsys.readouterr().err
    planned = {int(m) for m in re.findall(r"judge \d+/(\d+) calls", err)}
    assert planned == {sent} and sent >= 3 * 3             # three checklist questions per sample, as planned
    assert re.search(r"judge [1-9]\d*/\d+ calls \d+\.\d+/s ETA \d\d:\d\d", err)
    assert len(result.verdicts) == 3
