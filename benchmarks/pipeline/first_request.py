"""Time from starting `python` to the first judge request of `evaluate()` (issue 32.14), against the loopback stub.

    nice .venv/bin/python -m bench.first_request --runs 10 [--root OLD_CHECKOUT --root .]

Each run is a fresh interpreter judging one sample with one rubric (emotional_soothing, holistic) and no metric,
with an empty judge cache; the stub records when the request arrived. Prints every run and the median.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rubriceval.testing.stub_server import StubServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
from rubriceval import Sample, evaluate
evaluate([Sample(id="s1", question="我的快递怎么还没到？", answer="抱歉让您久等了，包裹正在派送中。")],
         rubrics=sys.argv[1], judge={"base_url": sys.argv[2], "model": "stub", "cache_path": sys.argv[3],
                                     "judge_mode": "holistic"},
         store=sys.argv[4], progress=False)
"""


def one_run(base_url: str, stub: StubServer, rubric: Path, root: Path) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        stub.reset()
        started = time.time()
        subprocess.run([sys.executable, "-c", SCRIPT, str(rubric), base_url, f"{tmp}/cache.sqlite",
                        f"{tmp}/runs.sqlite"], check=True, cwd=root, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(root)})
        first = min(r.started for r in stub.stats.requests)
        return first - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rubric", default="rubrics/emotional_soothing.yaml", help="relative to each checkout")
    parser.add_argument("--root", action="append", default=[],
                        help="a checkout to time (repeat for before/after: the runs alternate between them, so "
                             "machine load falls on both alike); default: this one")
    args = parser.parse_args()
    roots = [Path(r) for r in args.root] or [ROOT]
    times: dict[Path, list[float]] = {root: [] for root in roots}
    with StubServer() as stub:
        for _ in range(args.runs):
            for root in roots:
                times[root].append(one_run(stub.base_url, stub, root / args.rubric, root))
    for root, values in times.items():
        print(f"{root}: " + " ".join(f"{t:.3f}" for t in values))
        print(f"  median time to first judge request: {statistics.median(values):.3f} s over {len(values)} runs")


if __name__ == "__main__":
    main()
