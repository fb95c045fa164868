"""Time the non-LLM metrics (non-LLM context precision/recall, string metrics) over many rows; print one JSON line.

    .venv/bin/python benchmarks/pipeline/nonllm_bench.py --rows 100000

One pass over all rows with every metric together, as a run asking for all of them does, through
`standard_metrics.registry.score_sample` (the runner's entry point, so planning and Verdict construction are
included); then one pass per metric over the first `--breakdown-rows` rows for the per-metric cost. Reports µs per
row of wall time and of CPU time (on a shared machine CPU time is the steadier number), rows/s, and memory: RSS
once the rows are built (baseline) and the process's peak (`ru_maxrss`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.pipeline.dataset import generate_samples  # noqa: E402
from rubriceval import Sample  # noqa: E402
from rubriceval.standard_metrics.registry import list_metrics, score_sample  # noqa: E402


def nonllm_metric_names() -> list[str]:
    return [m.name for m in list_metrics() if not m.needs_judge and not m.needs_embedder]


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def _pass(samples: list[Sample], names: list[str]) -> dict:
    scored = unscored = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    for sample in samples:
        for verdict in await score_sample(sample, names):
            if verdict.scored:
                scored += 1
            else:
                unscored += 1
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    rows = len(samples)
    return {"rows": rows, "wall_s": wall, "cpu_s": cpu, "us_per_row": wall / rows * 1e6,
            "cpu_us_per_row": cpu / rows * 1e6, "rows_per_s": rows / wall, "scored": scored, "unscored": unscored}


async def run(rows: int, names: list[str], breakdown_rows: int) -> dict:
    started = time.perf_counter()
    samples = [Sample.model_validate(r) for r in generate_samples(rows)]
    build_s = time.perf_counter() - started
    baseline_mb = _rss_mb()
    together = await _pass(samples, names)
    per_metric = {name: await _pass(samples[:breakdown_rows], [name]) for name in names}
    return {"rows": rows, "metrics": names, "build_rows_s": build_s, "all_together": together,
            "per_metric": per_metric, "rss_after_rows_mb": baseline_mb,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "load_average": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--breakdown-rows", type=int, default=10_000, help="rows of each per-metric pass")
    parser.add_argument("--metrics", default="", help="comma-separated; default: every metric needing no judge")
    args = parser.parse_args()
    names = [m for m in args.metrics.split(",") if m] or nonllm_metric_names()
    print(json.dumps(asyncio.run(run(args.rows, names, min(args.breakdown_rows, args.rows)))))


if __name__ == "__main__":
    main()
