"""Which judge for which volume (issue 40.7): a week's chat export × the shipped e-commerce scorecard, per 1,000
conversations — judge calls, prompt tokens, and our side's wall and CPU — online against a vLLM-like
OpenAI-compatible loopback stub (its own process, answering at once: the figures are our client's ceiling, not a
model's speed) and through the Batch API (submit, the stub's batches, collect).

    nice -n 10 .venv/bin/python benchmarks/pipeline/scorecard_volume_bench.py --n 1000

The conversations are datasets/qa_exports/'s 40, repeated each with a distinct order number (no judge-cache hit).
Calls and tokens are the run's own counts (the stub reports tokens the way a server does: from the prompt's length);
the embedded judge's per-conversation figures are measured apart (docs/production_qa.md, "Which judge")."""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.pipeline.batch_bench import timed, wait_for_stub_batches  # noqa: E402
from benchmarks.pipeline.machine import describe  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CARD = ["--scorecards", str(ROOT / "scorecards"), "--only-scorecards", "ecommerce_qa_zh"]


def write_conversations(path: Path, n: int) -> Path:
    rows = [json.loads(line) for week in ("2026-W46", "2026-W47")
            for line in (ROOT / "datasets" / "qa_exports" / f"{week}.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            row = json.loads(json.dumps(rows[i % len(rows)]))
            row["id"] = f"c{i:06d}"
            first = row["messages"][0]
            first["content"] += f"（订单 B{i:06d}）"          # every conversation distinct: no judge-cache hit
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def usage(store: Path) -> dict:
    """Judge calls and tokens of the run's scorecard verdicts, summed from the store."""
    conn = sqlite3.connect(store)
    calls = prompt = completion = verdicts = 0
    for (text,) in conn.execute("SELECT verdict_json FROM scorecard_verdicts"):
        u = json.loads(text).get("usage") or {}
        verdicts += 1
        calls += u.get("calls", 0)
        prompt += u.get("prompt_tokens", 0)
        completion += u.get("completion_tokens", 0)
    conn.close()
    return {"verdicts": verdicts, "calls": calls, "prompt_tokens": prompt, "completion_tokens": completion}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="conversations")
    parser.add_argument("--out", default="out/bench-scorecard-volume")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.sqlite*"):
        stale.unlink()
    env = {**os.environ, "RUBRICEVAL_CACHE_DIR": str(out / f"cache-{time.time_ns()}"), "TQDM_DISABLE": "1"}
    data = write_conversations(out / f"conversations-{args.n}.jsonl", args.n)
    stub = subprocess.Popen([sys.executable, "-m", "rubriceval.testing.stub_server", "--port", "0",
                             "--no-log-bodies"], stdout=subprocess.PIPE, text=True, env=env)
    results: dict = {"machine": describe().model_dump(), "n": args.n, "load_at_start": os.getloadavg()}
    try:
        base_url = stub.stdout.readline().strip().rsplit(" ", 1)[-1]
        judge = ["--judge-base-url", base_url, "--judge-model", "stub"]
        online = out / "online.sqlite"
        results["online"] = timed(["run", str(data), *CARD, "--concurrency", "64", "--quiet", "--no-cache", *judge,
                                   "--store", str(online), "--name", "online"], env)
        results["online"]["usage"] = usage(online)
        batch = out / "batch.sqlite"
        results["submit"] = timed(["run", str(data), *CARD, "--batch", "--name", "batch", "--quiet", *judge,
                                   "--store", str(batch)], env)
        results["stub_batches_s"] = round(wait_for_stub_batches(base_url.removesuffix("/v1")), 1)
        results["collect"] = timed(["batch", "collect", "batch", "--quiet", *judge, "--store", str(batch)], env)
        results["batch_usage"] = usage(batch)
    finally:
        stub.terminate()
        stub.wait(timeout=30)
    per = 1000 / args.n
    results["per_1000"] = {
        "calls": round(results["online"]["usage"]["calls"] * per),
        "prompt_tokens": round(results["online"]["usage"]["prompt_tokens"] * per),
        "online_wall_s": round(results["online"]["wall_s"] * per, 1),
        "online_cpu_s": round(results["online"]["cpu_s"] * per, 1),
        "batch_our_wall_s": round((results["submit"]["wall_s"] + results["collect"]["wall_s"]) * per, 1),
        "batch_our_cpu_s": round((results["submit"]["cpu_s"] + results["collect"]["cpu_s"]) * per, 1)}
    print(json.dumps(results, ensure_ascii=False, indent=2))
    (out / "results.json").write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
