"""Scale benchmark (issue 19): N synthetic Chinese customer-service rows with 3 contexts, a checks-and-string-metrics
run (deterministic rubrics + rouge_l, bleu, nonllm_context_recall; no judge), then report, compare, gate and
opening the audit queue. Each step runs as its own process; its peak RSS comes from the kernel (wait4's ru_maxrss)
and its wall time from the clock.

    python benchmarks/pipeline/scale_bench.py --rows 100000            # make bench-scale ROWS=100000
    python benchmarks/pipeline/scale_bench.py --rows 1000000 --out out/bench-scale

Compare needs a second run over the same rows: it is a copy of the first made in SQL with every tenth sample's
scores moved (rubrics one level down, metrics ×0.9), so the comparison has changes to find without a second
million-row run. Results: <out>/results-<rows>.json and a Markdown table on stdout.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.pipeline.dataset import generate_sample  # noqa: E402
from benchmarks.pipeline.machine import Machine, describe  # noqa: E402
from rubriceval.run.pool import WORKERS_ENV  # noqa: E402

RUBRICS = ROOT / "benchmarks" / "pipeline" / "scale_rubrics"
METRICS = "rouge_l,bleu,nonllm_context_recall"
RUN, RUN_B = "scale", "scale-b"
OPEN_QUEUE = """
import sys
from rubriceval.store.audit import AuditStore
from rubriceval.store.audit_models import QueueFilter
with AuditStore(sys.argv[1]) as store:
    rows = store.queue(sys.argv[2], QueueFilter(order="judge_asc"))
    page = store.with_text(sys.argv[2], rows[:25])
    print(f"{len(rows)} rows in the queue; first page: {len(page)}")
"""


class Step(BaseModel):
    step: str
    command: str
    wall_s: float
    cpu_s: float                     # user + system CPU of the step's process and its children (workers)
    peak_rss_mb: float               # the largest single process (wait4)
    peak_tree_rss_mb: float = 0.0    # the step's processes together (sampled every 0.5 s)
    load_average: list[float] = []   # 1/5/15-minute load average when the step ended
    exit_code: int
    note: str = ""


class Result(BaseModel):
    rows: int
    verdicts: int = 0
    run_rows_per_s: float = 0.0
    run_rows_per_cpu_s: float = 0.0  # rows per second of the run's own CPU time (the machine is shared)
    run_workers: int | None = None   # --workers (None: the CLI's automatic choice)
    store_mb: float = 0.0
    data_mb: float = 0.0
    steps: list[Step] = []
    machine: Machine


def write_rows(path: Path, n: int) -> None:
    """Row i of benchmarks/pipeline/dataset.py with 3 contexts: its 2 relevant passages and the first distractor."""
    if path.exists() and sum(1 for _ in path.open("rb")) == n:
        return
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for i in range(n):
            row = generate_sample(i)
            relevant = row["reference_contexts"]
            distractor = next(c for c in row["contexts"] if c not in relevant)
            row["contexts"] = [c for c in row["contexts"] if c in relevant or c == distractor]
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(path)


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of a process and all its descendants (KiB, from /proc): a run's worker processes
    (rubriceval/run/pool.py) count too. wait4's ru_maxrss gives only the largest single process."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(stat[1])
            rss[int(entry.name)] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, ValueError, IndexError):
            continue
    tree, frontier = {pid}, [pid]
    while frontier:
        children = [p for p, parent in parents.items() if parent in frontier and p not in tree]
        tree.update(children)
        frontier = children
    return sum(rss.get(p, 0) for p in tree)


def measure(step: str, argv: list[str], log: Path, env: dict[str, str] | None = None) -> Step:
    """Run one step as a child process: wall time, its peak RSS from wait4 (ru_maxrss, KiB on Linux: the largest
    single process), and the peak of its whole process tree sampled every half second."""
    started = time.perf_counter()
    peak_tree = [0]
    with log.open("ab") as out:
        out.write(f"\n$ {' '.join(argv)}\n".encode())
        out.flush()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.5):
                peak_tree[0] = max(peak_tree[0], _tree_rss_kb(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        if Path("/proc").exists():
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Step(step=step, command=" ".join(argv), wall_s=round(time.perf_counter() - started, 1),
                cpu_s=round(usage.ru_utime + usage.ru_stime, 1), peak_rss_mb=round(usage.ru_maxrss / 1024, 1),
                peak_tree_rss_mb=round(peak_tree[0] / 1024, 1), exit_code=proc.returncode,
                load_average=list(os.getloadavg()))


def copy_run_with_changes(store: Path) -> None:
    """Run B = run A with every tenth sample's scores moved, written in SQL (see the module docstring)."""
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("DELETE FROM verdicts WHERE run_id = 'scale-b-id'")
        conn.execute("DELETE FROM run_scorers WHERE run_id = 'scale-b-id'")
        conn.execute("DELETE FROM runs WHERE run_id = 'scale-b-id'")
        a = conn.execute("SELECT run_id FROM runs WHERE name = ?", (RUN,)).fetchone()[0]
        conn.execute("INSERT INTO runs (run_id, name, created_at, finished_at, status, config_json, stats_json, "
                     "dataset_id) SELECT 'scale-b-id', ?, created_at + 1, finished_at, status, config_json, "
                     "stats_json, dataset_id FROM runs WHERE run_id = ?", (RUN_B, a))
        conn.execute("INSERT INTO run_scorers SELECT 'scale-b-id', scorer, kind, version, definition_json "
                     "FROM run_scorers WHERE run_id = ?", (a,))
        moved = ("CASE WHEN score IS NOT NULL AND CAST(substr(sample_id, 4) AS INTEGER) % 10 = 0 THEN "
                 "(CASE WHEN kind = 'rubric' THEN MAX(1, score - 1) ELSE score * 0.9 END) ELSE score END")
        conn.execute(f"INSERT INTO verdicts SELECT 'scale-b-id', sample_id, scorer, kind, scorer_version, {moved}, "
                     "unscored_kind, unscored_reason, feedback, evidence_json, details_json, passed, usage_json, "
                     "input_hash, created_at FROM verdicts WHERE run_id = ?", (a,))
    conn.close()


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out", default="out/bench-scale")
    parser.add_argument("--steps", default="run,report,compare,gate,audit",
                        help="comma-separated subset (run must exist in the store for the others)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes for the run (RUBRICEVAL_RUN_WORKERS; default: the CLI's choice, "
                             "one per idle core)")
    args = parser.parse_args(argv)
    out = (ROOT / args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    data, store, log = out / f"data-{args.rows}.jsonl", out / f"runs-{args.rows}.sqlite", out / f"log-{args.rows}.txt"
    steps = args.steps.split(",")
    write_rows(data, args.rows)
    cli = [sys.executable, "-m", "rubriceval.cli"]
    result = Result(rows=args.rows, machine=describe(), data_mb=round(data.stat().st_size / 2**20, 1))
    if "run" in steps:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{store}{suffix}").unlink(missing_ok=True)
        env = {**os.environ, **({WORKERS_ENV: str(args.workers)} if args.workers else {})}
        result.steps.append(measure("run", [*cli, "run", str(data), "--rubrics", str(RUBRICS), "--metrics", METRICS,
                                            "--store", str(store), "--name", RUN, "--quiet"], log, env))
        result.run_workers = args.workers
    conn = sqlite3.connect(store)
    result.verdicts = conn.execute("SELECT COUNT(*) FROM verdicts v JOIN runs r ON r.run_id = v.run_id "
                                   "WHERE r.name = ?", (RUN,)).fetchone()[0]
    conn.close()
    if "report" in steps:
        result.steps.append(measure("report", [*cli, "report", RUN, "--store", str(store), "--out",
                                               str(out / f"report-{args.rows}")], log))
    if "compare" in steps:
        copy_run_with_changes(store)
        result.steps.append(measure("compare", [*cli, "compare", RUN, RUN_B, "--store", str(store),
                                                "--html", str(out / f"compare-{args.rows}.html")], log))
    if "gate" in steps:
        result.steps.append(measure("gate", [*cli, "gate", RUN, "--store", str(store), "--check",
                                             "service_basics mean>=3", "--check", "rouge_l>=0.2", "--baseline",
                                             RUN_B, "--check", "regression>=-0.5"], log))
    if "audit" in steps:
        result.steps.append(measure("audit queue", [sys.executable, "-c", OPEN_QUEUE, str(store), RUN], log))
    run_step = next((s for s in result.steps if s.step == "run"), None)
    if run_step and run_step.wall_s:
        result.run_rows_per_s = round(args.rows / run_step.wall_s, 1)
        result.run_rows_per_cpu_s = round(args.rows / max(run_step.cpu_s, 0.1), 1)
    result.store_mb = round(sum(Path(f"{store}{s}").stat().st_size for s in ("", "-wal")
                                if Path(f"{store}{s}").exists()) / 2**20, 1)
    suffix = f"-w{args.workers}" if args.workers else ""
    (out / f"results-{args.rows}{suffix}.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
    print(table(result))
    return result


def table(result: Result) -> str:
    m = result.machine
    lines = [f"{result.rows:,} rows ({result.data_mb} MB JSONL), {result.verdicts:,} verdicts, store "
             f"{result.store_mb} MB; {m.nproc} cores {m.cpu_model}, load {m.load_average}",
             "", "| step | wall (s) | CPU (s) | peak RSS (MB) | all processes (MB) | load at end | exit |",
             "|---|---:|---:|---:|---:|---|---:|"]
    lines += [f"| {s.step} | {s.wall_s} | {s.cpu_s} | {s.peak_rss_mb} | {s.peak_tree_rss_mb} | "
              f"{' / '.join(f'{x:.1f}' for x in s.load_average)} | {s.exit_code} |" for s in result.steps]
    if result.run_rows_per_s:
        lines.append(f"\nrun: {result.run_rows_per_s:,.0f} rows/s wall, {result.run_rows_per_cpu_s:,.0f} rows per "
                     "CPU-second")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
