"""Batch API at scale against the loopback stub: N judgments planned, written, submitted, then collected.

    python benchmarks/pipeline/batch_bench.py [--n 100000] [--online-n 10000] [--out out/bench-batch]     (make bench-batch)

Each phase is its own `rubriceval` process measured by /usr/bin/time (wall, peak RSS):
  submit    rubriceval run DATA --rubrics R --batch   read the dataset, create the run, plan every call with the
            dry-run planner, write the request JSONL (split at 50,000 requests / 100 MB), upload, create batches
  collect   rubriceval batch collect RUN              once the stub has finished every batch: download the output
            files, store every reply, replay every judgment through its scorer, save the verdicts, fill the cache
  online    rubriceval run DATA --rubrics R            the same rubric online on `--online-n` rows (concurrency 64)
The stub server runs in its own process (its time and memory are not counted); the dataset is benchmarks/pipeline/dataset.py's
synthetic Chinese customer-service rows (5 contexts each); the rubric one judge item over question + answer.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.pipeline.dataset import generate_sample  # noqa: E402
from benchmarks.pipeline.machine import describe  # noqa: E402

RUBRIC = """\
id: bench_helpfulness
name: 解答完整性（基准）
version: 1
language: zh
judge_sees: [question, answer]
threshold: 4
criterion: 回答是否直接解决了用户的问题，给出明确的处理步骤、时限和渠道，且语气礼貌。
score_descriptions:
  1: 没有回答问题，或答非所问。
  2: 只回应了问题的一小部分，缺少关键步骤。
  3: 回答了主要问题，但步骤、时限或渠道有缺失。
  4: 回答完整，只有细节上的小遗漏。
  5: 回答完整准确，步骤、时限、渠道齐全，语气礼貌。
items:
  - {id: judge, type: judge}
"""


def write_inputs(out: Path, n: int, name: str) -> Path:
    data = out / f"{name}.jsonl"
    if not data.exists():
        with open(data, "w", encoding="utf-8") as f:
            for i in range(n):
                f.write(json.dumps(generate_sample(i), ensure_ascii=False) + "\n")
    (out / "rubrics").mkdir(exist_ok=True)
    (out / "rubrics" / "bench_helpfulness.yaml").write_text(RUBRIC, encoding="utf-8")
    return data


def timed(args: list[str], env: dict) -> dict:
    """Run one rubriceval command under /usr/bin/time: wall seconds, CPU seconds (user + system: what the wall time
    would be on an idle core, the machine being shared), peak RSS MB, its last output lines."""
    cmd = ["/usr/bin/time", "-f", "TIME %e %M %U %S", sys.executable, "-m", "rubriceval.cli", *args]
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    found = re.search(r"TIME ([\d.]+) (\d+) ([\d.]+) ([\d.]+)", proc.stderr)
    if proc.returncode != 0 or not found:
        raise SystemExit(f"{' '.join(args[:3])} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return {"wall_s": round(wall, 1), "cpu_s": round(float(found.group(3)) + float(found.group(4)), 1),
            "peak_rss_mb": round(int(found.group(2)) / 1024, 1),
            "stdout": proc.stdout.strip().splitlines()[-3:], "stderr": proc.stderr.strip().splitlines()[-3:-1]}


def wait_for_stub_batches(base: str, timeout_s: float = 3600) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        with urllib.request.urlopen(f"{base}/_stub/batches") as reply:
            batches = json.load(reply)["data"]
        if batches and all(b["worker_done"] for b in batches):
            for b in batches:
                urllib.request.urlopen(urllib.request.Request(f"{base}/_stub/batches/{b['id']}/advance",
                                                              data=b"{}", method="POST")).read()
            return time.perf_counter() - started
        time.sleep(1)
    raise SystemExit("the stub did not finish its batches")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="judgments through the Batch API")
    parser.add_argument("--online-n", type=int, default=10_000, help="judgments online (0: skip)")
    parser.add_argument("--out", default="out/bench-batch")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("runs.sqlite", "runs.sqlite-wal", "runs.sqlite-shm", "online.sqlite"):
        (out / stale).unlink(missing_ok=True)
    env = {**os.environ, "RUBRICEVAL_CACHE_DIR": str(out / f"cache-{time.time_ns()}"), "TQDM_DISABLE": "1"}
    data = write_inputs(out, args.n, f"rows-{args.n}")
    stub = subprocess.Popen([sys.executable, "-m", "rubriceval.testing.stub_server", "--port", "0",
                             "--no-log-bodies"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        base_url = stub.stdout.readline().strip().rsplit(" ", 1)[-1]
        root = base_url.removesuffix("/v1")
        judge = ["--judge-base-url", base_url, "--judge-model", "stub", "--store", str(out / "runs.sqlite")]
        results: dict = {"machine": describe().model_dump(), "n": args.n}
        results["submit"] = timed(["run", str(data), "--rubrics", str(out / "rubrics"), "--batch", "--name",
                                   "bench", "--quiet", *judge], env)
        results["stub_batches_s"] = round(wait_for_stub_batches(root), 1)
        results["collect"] = timed(["batch", "collect", "bench", "--quiet", *judge], env)
        if args.online_n:
            online_data = write_inputs(out, args.online_n, f"rows-{args.online_n}")
            results["online"] = timed(["run", str(online_data), "--rubrics", str(out / "rubrics"), "--concurrency",
                                       "64", "--quiet", "--no-cache", *judge[:-2], "--store",
                                       str(out / "online.sqlite")], env)
            results["online"]["n"] = args.online_n
    finally:
        stub.terminate()
        stub.wait(timeout=30)
    print(json.dumps(results, ensure_ascii=False, indent=2))
    (out / "results.json").write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
