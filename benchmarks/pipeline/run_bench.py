"""rubriceval vs Ragas on the same stub judge: calls, tokens, wall time, cache, throughput, memory.

    make bench                                   # = .venv/bin/python benchmarks/pipeline/run_bench.py
    .venv/bin/python benchmarks/pipeline/run_bench.py --rows 100 --repeats 3 --concurrency 16,64 --latency 0.2
    .venv/bin/python benchmarks/pipeline/run_bench.py --skip-ragas --skip-nonllm      # our side only, quick
    .venv/bin/python benchmarks/pipeline/run_bench.py --ragas-version 0.4.3 --skip-throughput --skip-nonllm
    .venv/bin/python benchmarks/pipeline/run_bench.py --render out/bench/bench-….json   # tables of a saved result

What it does (all against one loopback stub, `rubriceval.testing.stub_server.StubServer`, with a fixed latency
per call and the bench responder, `benchmarks/pipeline/responder.py`, which answers every Ragas and rubriceval prompt with
valid JSON):
 1. creates benchmarks/pipeline/.venv-ragas (pinned Ragas 0.2.15 + LangChain) on first use;
 2. writes a deterministic Chinese customer-service dataset (`benchmarks/pipeline/dataset.py`, 5 contexts per row);
 3. for each concurrency and repeat: Ragas (`RunConfig(max_workers=c)`) and rubriceval (`JudgeConfig.concurrency=c`,
    cold caches) with the five classic metrics, each in its own process; counts every HTTP call at the stub;
 4. reruns rubriceval on a warm cache (must make 0 judge calls);
 5. runs each metric alone on a few rows, on both sides, to check the per-metric attribution;
 6. rubric-only throughput: 1,000 rows × 3 rubrics at concurrency 64;
 7. the non-LLM metrics on 100,000 rows;
then prints the tables and writes them, with every raw number, to out/bench/ (JSON + Markdown).
Exit status 1 when the comparison was not fair (a Ragas NaN, an unscored verdict, a failed or unrecognised
request): numbers from such a run must not be quoted.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pydantic import BaseModel, Field  # noqa: E402

from benchmarks.pipeline import report  # noqa: E402
from benchmarks.pipeline.dataset import generate_samples, write_jsonl  # noqa: E402
from benchmarks.pipeline.machine import Machine, describe  # noqa: E402
from benchmarks.pipeline.ragas_env import ensure_ragas_env  # noqa: E402
from benchmarks.pipeline.responder import respond  # noqa: E402
from benchmarks.pipeline.tally import RunTally, tally  # noqa: E402
from rubriceval.testing.stub_server import StubServer  # noqa: E402

FIVE = ["answer_correctness", "faithfulness", "answer_relevancy", "context_precision", "context_recall"]
THROUGHPUT_RUBRICS = ["emotional_soothing", "process_compliance", "policy_compliance"]
OUR_PYTHON = sys.executable


class SideRun(BaseModel):
    """One evaluation run of one side, as measured by itself (wall, memory) and by the stub (calls, tokens)."""

    side: str
    label: str
    rows: int
    concurrency: int
    repeat: int = 0
    wall_s: float
    cpu_s: float                  # the side's CPU time inside evaluate()
    stub_cpu_s: float             # the stub's CPU time during the whole run (it shares the machine)
    import_s: float
    max_rss_mb: float
    tally: RunTally
    output: dict[str, Any] = Field(default_factory=dict)   # the side's own JSON line (scores dropped)


class BenchResult(BaseModel):
    machine: Machine
    machine_after: Machine | None = None
    settings: dict[str, Any]
    ragas_version: str | None = None
    runs: list[SideRun] = Field(default_factory=list)
    warm: list[SideRun] = Field(default_factory=list)
    alone: list[SideRun] = Field(default_factory=list)
    throughput: list[SideRun] = Field(default_factory=list)
    nonllm: dict[str, Any] | None = None
    started: float = Field(default_factory=time.time)
    finished: float | None = None


class SideFailed(RuntimeError):
    pass


def _run_json(cmd: list[str], *, timeout_s: float, env: dict[str, str] | None = None) -> dict:
    """Run a side's script; its last stdout line is its JSON result."""
    completed = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                               env={**os.environ, **(env or {})}, cwd=REPO)
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines:
        raise SideFailed(f"{' '.join(cmd[:3])} … exited {completed.returncode}:\n{completed.stderr[-3000:]}")
    return json.loads(lines[-1])


class Bench:
    def __init__(self, args: argparse.Namespace, workdir: Path, log=print):
        self.args = args
        self.workdir = workdir
        self.log = log
        self.stub = StubServer(latency_s=args.latency, responder=respond)
        self.ragas_python: Path | None = None

    # -- one run of each side ----------------------------------------------------------------------------------

    def _texts(self, dataset: Path) -> tuple[list[str], list[str]]:
        rows = [json.loads(line) for line in dataset.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [r["answer"] for r in rows], [r["ground_truth"] for r in rows]

    def ragas(self, dataset: Path, workers: int, metrics: list[str], label: str, repeat: int = 0) -> SideRun:
        assert self.ragas_python is not None
        self.stub.reset()
        stub_cpu = time.process_time()      # this process does nothing but serve the stub meanwhile
        out = _run_json([str(self.ragas_python), str(REPO / "benchmarks" / "pipeline" / "ragas_side.py"), "--dataset", str(dataset),
                         "--base-url", self.stub.base_url, "--workers", str(workers),
                         "--metrics", ",".join(metrics)], timeout_s=self.args.timeout,
                        env={"RAGAS_DO_NOT_TRACK": "true"})
        stub_cpu = time.process_time() - stub_cpu
        answers, references = self._texts(dataset)
        counted = tally(self.stub.stats, "ragas", responses=answers, references=references)
        out.pop("scores", None)
        return SideRun(side="ragas", label=label, rows=out["rows"], concurrency=workers, repeat=repeat,
                       wall_s=out["wall_s"], cpu_s=out["cpu_s"], stub_cpu_s=stub_cpu,
                       import_s=out["import_s"], max_rss_mb=out["max_rss_mb"],
                       tally=counted, output=out)

    def ours(self, dataset: Path, concurrency: int, label: str, *, metrics: list[str] = (),
             rubrics: list[str] = (), cache_dir: Path | None = None, repeat: int = 0) -> SideRun:
        cache_dir = cache_dir or Path(tempfile.mkdtemp(prefix="cache-", dir=self.workdir))
        self.stub.reset()
        cmd = [OUR_PYTHON, str(REPO / "benchmarks" / "pipeline" / "ours_side.py"), "--dataset", str(dataset),
               "--base-url", self.stub.base_url, "--concurrency", str(concurrency), "--cache-dir", str(cache_dir),
               "--metrics", ",".join(metrics), "--rubrics", ",".join(rubrics)]
        if rubrics:
            cmd.append("--all-rubric-tags")
        stub_cpu = time.process_time()
        out = _run_json(cmd, timeout_s=self.args.timeout)
        stub_cpu = time.process_time() - stub_cpu
        counted = tally(self.stub.stats, "ours")
        out["cache_dir"] = str(cache_dir)
        return SideRun(side="ours", label=label, rows=out["rows"], concurrency=concurrency, repeat=repeat,
                       wall_s=out["wall_s"], cpu_s=out["cpu_s"], stub_cpu_s=stub_cpu,
                       import_s=out["import_s"], max_rss_mb=out["max_rss_mb"],
                       tally=counted, output=out)

    # -- the benchmark -----------------------------------------------------------------------------------------

    def dataset(self, rows: int, name: str) -> Path:
        return write_jsonl(generate_samples(rows, seed=self.args.seed), self.workdir / f"{name}.jsonl")

    def compare(self, result: BenchResult) -> None:
        dataset = self.dataset(self.args.rows, f"rows{self.args.rows}")
        for concurrency in self.args.concurrency:
            for repeat in range(self.args.repeats):
                # Alternate which side goes first, so a drift in machine load does not favour one side.
                order = ("ragas", "ours") if repeat % 2 == 0 else ("ours", "ragas")
                for side in order:
                    if side == "ragas" and not self.args.skip_ragas:
                        run = self.ragas(dataset, concurrency, FIVE, "five", repeat)
                    elif side == "ours" and not self.args.skip_ours:
                        run = self.ours(dataset, concurrency, "five", metrics=FIVE, repeat=repeat)
                    else:
                        continue
                    result.runs.append(run)
                    self.log(f"  {side:<6} c={concurrency:<3} repeat {repeat + 1}  {run.wall_s:6.2f}s "
                             f"(CPU {run.cpu_s:5.2f}s)  "
                             f"{run.tally.total.calls} judge + {run.tally.total.embedding_calls} embedding calls"
                             f"  peak {run.max_rss_mb:.0f} MB")
                    if side == "ours" and repeat == 0:
                        self.warm_rerun(dataset, concurrency, Path(run.output["cache_dir"]), result)

    def warm_rerun(self, dataset: Path, concurrency: int, cache_dir: Path, result: BenchResult) -> None:
        """The same run again on the cache the cold run filled: every judge call must be a cache hit."""
        warm = self.ours(dataset, concurrency, "warm", metrics=FIVE, cache_dir=cache_dir)
        result.warm.append(warm)
        self.log(f"  ours   c={concurrency:<3} warm rerun  {warm.wall_s:6.2f}s  judge calls {warm.tally.total.calls}, "
                 f"embedding calls {warm.tally.total.embedding_calls}")

    def alone(self, result: BenchResult) -> None:
        """Each metric alone on a few rows: exact per-metric costs, and a check of the Ragas tagging."""
        dataset = self.dataset(self.args.attribution_rows, f"rows{self.args.attribution_rows}")
        for metric in FIVE:
            if not self.args.skip_ragas:
                result.alone.append(self.ragas(dataset, 16, [metric], metric))
            if not self.args.skip_ours:
                result.alone.append(self.ours(dataset, 16, metric, metrics=[metric]))
            self.log(f"  alone: {metric} done")

    def throughput(self, result: BenchResult) -> None:
        dataset = self.dataset(self.args.throughput_rows, f"rows{self.args.throughput_rows}")
        for repeat in range(self.args.repeats):
            run = self.ours(dataset, self.args.throughput_concurrency, "rubrics", rubrics=THROUGHPUT_RUBRICS,
                            repeat=repeat)
            result.throughput.append(run)
            self.log(f"  rubrics c={self.args.throughput_concurrency} repeat {repeat + 1}  {run.wall_s:6.2f}s  "
                     f"{run.rows / run.wall_s:6.1f} rows/s  {run.tally.total.calls} judge calls  "
                     f"peak {run.max_rss_mb:.0f} MB")

    def nonllm(self, result: BenchResult) -> None:
        result.nonllm = _run_json([OUR_PYTHON, str(REPO / "benchmarks" / "pipeline" / "nonllm_bench.py"), "--rows",
                                   str(self.args.nonllm_rows)], timeout_s=self.args.timeout * 4)
        together = result.nonllm["all_together"]
        self.log(f"  non-LLM metrics: {together['us_per_row']:.0f} µs/row wall, "
                 f"{together['cpu_us_per_row']:.0f} µs/row CPU, peak {result.nonllm['max_rss_mb']:.0f} MB")

    def run(self) -> BenchResult:
        args = self.args
        result = BenchResult(machine=describe(), settings={k: v for k, v in vars(args).items()})
        self.log(f"machine: {result.machine.nproc} cores, {result.machine.cpu_model}, "
                 f"{result.machine.ram_gib} GiB, load {result.machine.load_average}")
        if not args.skip_ragas:
            self.ragas_python = ensure_ragas_env(args.ragas_version, log=self.log)
            result.ragas_version = args.ragas_version
        with self.stub:
            self.log(f"stub {self.stub.base_url}, latency {args.latency * 1000:.0f} ms")
            if not args.skip_compare:
                self.log(f"comparison: {args.rows} rows × 5 metrics, concurrency {args.concurrency}, "
                         f"{args.repeats} repeats")
                self.compare(result)
            if args.attribution_rows > 0:
                self.log(f"each metric alone on {args.attribution_rows} rows")
                self.alone(result)
            if not (args.skip_throughput or args.skip_ours):
                self.log(f"rubric throughput: {args.throughput_rows} rows × {len(THROUGHPUT_RUBRICS)} rubrics")
                self.throughput(result)
        if not args.skip_nonllm:
            self.log(f"non-LLM metrics on {args.nonllm_rows} rows")
            self.nonllm(result)
        result.machine_after = describe()
        result.finished = time.time()
        return result


def _int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100, help="rows of the Ragas comparison (default 100)")
    parser.add_argument("--latency", type=float, default=0.2, help="stub latency per call, seconds (default 0.2)")
    parser.add_argument("--concurrency", type=_int_list, default=[16, 64], help="comma-separated (default 16,64)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting; medians are reported (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="dataset seed")
    parser.add_argument("--ragas-version", default="0.2.15")
    parser.add_argument("--attribution-rows", type=int, default=16,
                        help="rows for the each-metric-alone runs; 0 skips them")
    parser.add_argument("--throughput-rows", type=int, default=1000)
    parser.add_argument("--throughput-concurrency", type=int, default=64)
    parser.add_argument("--nonllm-rows", type=int, default=100_000)
    parser.add_argument("--skip-ragas", action="store_true")
    parser.add_argument("--skip-ours", action="store_true", help="Ragas side only (and the non-LLM metrics)")
    parser.add_argument("--skip-compare", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-nonllm", action="store_true")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds allowed per side run")
    parser.add_argument("--out", default=str(REPO / "out" / "bench"), help="folder for the JSON and Markdown")
    parser.add_argument("--render", metavar="JSON", help="only print the tables of a saved result")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render:
        saved = BenchResult.model_validate_json(Path(args.render).read_text(encoding="utf-8"))
        print(report.render(saved))
        return 0 if report.fair(saved) else 1
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rubriceval-bench-") as workdir:
        result = Bench(args, Path(workdir)).run()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(result.started))
    json_path = out_dir / f"bench-{stamp}.json"
    json_path.write_text(result.model_dump_json(indent=1), encoding="utf-8")
    markdown = report.render(result)
    md_path = out_dir / f"bench-{stamp}.md"
    md_path.write_text(markdown, encoding="utf-8")
    print()
    print(markdown)
    print(f"raw numbers: {json_path}\ntables: {md_path}")
    return 0 if report.fair(result) else 1


if __name__ == "__main__":
    sys.exit(main())
