"""Markdown tables of a benchmark result, the targets checked against them, and whether the run was fair."""
from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import TYPE_CHECKING

from benchmarks.pipeline.tally import Cost, ours_per_metric

if TYPE_CHECKING:
    from benchmarks.pipeline.run_bench import BenchResult, SideRun

FIVE = ["answer_correctness", "faithfulness", "answer_relevancy", "context_precision", "context_recall"]
TARGET_CALL_SHARE = 0.30
TARGET_PROMPT_SHARE = 0.40
TARGET_IDEAL_FACTOR = 1.15
TARGET_SPEEDUP = 3.0


def _median(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.median(values) if values else float("nan")


def _runs(result: BenchResult, side: str, concurrency: int | None = None, label: str = "five") -> list[SideRun]:
    return [r for r in result.runs if r.side == side and r.label == label
            and (concurrency is None or r.concurrency == concurrency)]


def _fmt(x: float, digits: int = 1) -> str:
    return "–" if x != x else f"{x:,.{digits}f}"


def _ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.0%}" if theirs else "–"


def ideal_s(run: SideRun, latency: float) -> float:
    """Every HTTP call (judge + embedding) × latency / concurrency: the run with the concurrency always full."""
    return (run.tally.total.calls + run.tally.total.embedding_calls) * latency / run.concurrency


def _per_sample_costs(run: SideRun) -> tuple[dict[str, Cost], Cost]:
    if run.side == "ragas":
        return run.tally.by_metric, run.tally.total
    return ours_per_metric(run.output.get("per_scorer", {})), run.tally.total


# ----------------------------------------------------------------------------------------------------------------

def problems(result: BenchResult) -> list[str]:
    """Why the comparison would be unfair or broken; empty when every run scored everything."""
    issues: list[str] = []
    for run in [*result.runs, *result.warm, *result.alone, *result.throughput]:
        name = f"{run.side} {run.label} c={run.concurrency} #{run.repeat + 1}"
        if run.tally.failed_requests:
            issues.append(f"{name}: {run.tally.failed_requests} requests failed at the stub")
        if run.tally.stub_errors:
            issues.append(f"{name}: the responder failed: {run.tally.stub_errors[0][-200:]}")
        if run.tally.unknown_prompts:
            issues.append(f"{name}: {run.tally.unknown_prompts} prompts the responder did not recognise")
        if run.side == "ragas":
            nan = {m: n for m, n in run.output.get("nan", {}).items() if n}
            if nan:
                issues.append(f"{name}: Ragas returned NaN for {nan}")
            if run.output.get("error_count"):
                issues.append(f"{name}: Ragas logged {run.output['error_count']} errors, e.g. "
                              f"{run.output.get('errors', [''])[0][:200]}")
            if run.tally.by_metric.get("output_fix"):
                issues.append(f"{name}: Ragas re-asked to fix its output format "
                              f"{run.tally.by_metric['output_fix'].calls} times")
        else:
            for scorer, entry in run.output.get("per_scorer", {}).items():
                if entry["scored"] != entry["verdicts"]:
                    issues.append(f"{name}: {scorer} unscored {entry['unscored']}: "
                                  f"{(entry['unscored_examples'] or [''])[0][:200]}")
    return issues


def fair(result: BenchResult) -> bool:
    return not problems(result)


# ----------------------------------------------------------------------------------------------------------------

def _setup(result: BenchResult) -> list[str]:
    m, s = result.machine, result.settings
    after = result.machine_after.load_average if result.machine_after else "–"
    return [
        "## Setup",
        "",
        f"- machine: {m.nproc} cores ({m.cpu_model}), {m.ram_gib} GiB RAM, {m.platform}, Python {m.python}",
        f"- load average at start {m.load_average}, at end {after} (a shared machine: other jobs ran alongside)",
        f"- stub judge: loopback `StubServer`, {s['latency'] * 1000:.0f} ms per call (chat and embeddings), "
        "answers from `benchmarks/pipeline/responder.py`",
        f"- Ragas {result.ragas_version or '(skipped)'} in benchmarks/pipeline/.venv-ragas; rubriceval from this checkout",
        f"- comparison: {s['rows']} rows × 5 metrics, concurrency {s['concurrency']}, {s['repeats']} repeats "
        "(medians; every run a fresh process, ours with cold caches)",
        "",
    ]


def _cost_table(result: BenchResult) -> tuple[list[str], dict[str, float]]:
    ragas_runs, our_runs = _runs(result, "ragas"), _runs(result, "ours")
    if not ragas_runs or not our_runs:
        return [], {}
    rows = ragas_runs[0].rows
    ragas_metric, ragas_total = _per_sample_costs(ragas_runs[0])
    our_metric, our_total = _per_sample_costs(our_runs[0])
    # Embedding tokens are left out: our embedding cache is per text, and whether a text shared by two rows
    # (the per-topic ground truths) is already cached when the second row asks depends on timing.
    def judge_counts(cost: Cost) -> tuple[int, int, int, int]:
        return cost.calls, cost.prompt_tokens, cost.completion_tokens, cost.embedding_calls
    consistent = all(judge_counts(r.tally.total) == judge_counts(ragas_total) for r in ragas_runs) and all(
        judge_counts(r.tally.total) == judge_counts(our_total) for r in our_runs)
    lines = [
        f"## Cost per sample ({rows} rows, five metrics, one run; "
        + ("judge calls and tokens identical in every repeat)" if consistent
           else "NOTE: judge counts differ between repeats)"),
        "",
        "Ragas per metric: its requests tagged at the stub (see `benchmarks/pipeline/tally.py`); ours: each verdict's recorded "
        "usage — a call shared by several metrics is charged whole to the first metric asked for.",
        "",
        "| metric | judge calls Ragas | ours | embedding calls Ragas | ours | prompt tokens Ragas | ours "
        "| completion tokens Ragas | ours |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(name: str, theirs: Cost, ours: Cost) -> str:
        t, o = theirs.per(rows), ours.per(rows)
        return (f"| {name} | {t['calls']:.2f} | {o['calls']:.2f} | {t['embedding_calls']:.2f} | "
                f"{o['embedding_calls']:.2f} | {t['prompt_tokens']:,.0f} | {o['prompt_tokens']:,.0f} | "
                f"{t['completion_tokens']:,.0f} | {o['completion_tokens']:,.0f} |")

    for metric in FIVE:
        lines.append(row(metric, ragas_metric.get(metric, Cost()), our_metric.get(metric, Cost())))
    lines.append(row("**total (stub count)**", ragas_total, our_total))
    t, o = ragas_total, our_total
    lines.append(f"| **ours / Ragas** | | {_ratio(o.calls, t.calls)} | | {_ratio(o.embedding_calls, t.embedding_calls)}"
                 f" | | {_ratio(o.prompt_tokens, t.prompt_tokens)} | | "
                 f"{_ratio(o.completion_tokens, t.completion_tokens)} |")
    verdict_sum = sum(our_metric.values(), Cost())
    if (verdict_sum.calls, verdict_sum.prompt_tokens) != (o.calls, o.prompt_tokens):
        lines.append(f"\nNOTE: our verdicts record {verdict_sum.calls} calls / {verdict_sum.prompt_tokens} prompt "
                     f"tokens, the stub counted {o.calls} / {o.prompt_tokens}.")
    lines.append("")
    by_prompt = ", ".join(f"{k} {v.calls / rows:.0f}" for k, v in sorted(ragas_runs[0].tally.by_prompt.items()))
    ours_prompt = ", ".join(f"{k} {v.calls / rows:.0f}" for k, v in sorted(our_runs[0].tally.by_prompt.items()))
    lines += [f"Ragas calls per sample by prompt: {by_prompt}.  ", f"Ours: {ours_prompt}.", ""]
    shares = {"calls": o.calls / t.calls if t.calls else float("nan"),
              "prompt_tokens": o.prompt_tokens / t.prompt_tokens if t.prompt_tokens else float("nan")}
    return lines, shares


def _wall_table(result: BenchResult) -> tuple[list[str], dict[int, dict[str, float]]]:
    latency = result.settings["latency"]
    lines = ["## Wall time (`evaluate()` call, median of repeats; min–max in brackets)", "",
             "Ideal = (judge + embedding calls) × latency / concurrency: the run with every slot busy all the time. "
             "CPU = the side's own CPU time inside `evaluate()` (the stub's is separate): on a 2-core machine "
             "shared with other work, a run cannot be faster than the CPU it needs.",
             "",
             "| concurrency | Ragas | ours | speed-up | ours ideal | ours / ideal | Ragas ideal | Ragas / ideal "
             "| CPU Ragas | CPU ours | CPU stub (Ragas run / ours) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    numbers: dict[int, dict[str, float]] = {}
    for concurrency in result.settings["concurrency"]:
        ragas, ours = _runs(result, "ragas", concurrency), _runs(result, "ours", concurrency)
        if not ours:
            continue
        r_wall, o_wall = _median(r.wall_s for r in ragas), _median(r.wall_s for r in ours)
        o_ideal, r_ideal = _median(ideal_s(r, latency) for r in ours), _median(ideal_s(r, latency) for r in ragas)

        def spread(runs: list[SideRun]) -> str:
            return f" ({min(r.wall_s for r in runs):.1f}–{max(r.wall_s for r in runs):.1f})" if runs else ""
        lines.append(f"| {concurrency} | {_fmt(r_wall, 2)} s{spread(ragas)} | {_fmt(o_wall, 2)} s{spread(ours)} | "
                     f"{_fmt(r_wall / o_wall, 1)}× | {_fmt(o_ideal, 2)} s | {_fmt(o_wall / o_ideal, 2)}× | "
                     f"{_fmt(r_ideal, 2)} s | {_fmt(r_wall / r_ideal, 1)}× | "
                     f"{_fmt(_median(r.cpu_s for r in ragas), 2)} s | {_fmt(_median(r.cpu_s for r in ours), 2)} s | "
                     f"{_fmt(_median(r.stub_cpu_s for r in ragas), 2)} s / "
                     f"{_fmt(_median(r.stub_cpu_s for r in ours), 2)} s |")
        numbers[concurrency] = {"speedup": r_wall / o_wall if ragas else float("nan"),
                                "ideal_factor": o_wall / o_ideal}
    lines.append("")
    return lines, numbers


def _warm_table(result: BenchResult) -> list[str]:
    if not result.warm:
        return []
    lines = ["## Warm-cache rerun (ours, same cache folder as the first cold run)", "",
             "| concurrency | wall | judge calls | embedding calls | judge cache hits |", "|---:|---:|---:|---:|---:|"]
    for run in result.warm:
        hits = run.output.get("totals", {}).get("judge", {}).get("cache_hits", "–")
        lines.append(f"| {run.concurrency} | {run.wall_s:.2f} s | {run.tally.total.calls} | "
                     f"{run.tally.total.embedding_calls} | {hits} |")
    return [*lines, ""]


def _alone_table(result: BenchResult) -> list[str]:
    if not result.alone:
        return []
    rows = result.alone[0].rows
    combined = _runs(result, "ragas")
    tagged = combined[0].tally.by_metric if combined else {}
    combined_rows = combined[0].rows if combined else 1
    lines = [f"## Each metric alone ({rows} rows; per sample)", "",
             "What one metric costs when it is the only one asked for. The Ragas \"tagged\" column is the same "
             "metric's share of the combined five-metric run: equal to the alone column when the tagging is right.",
             "",
             "| metric | Ragas calls | Ragas tagged | ours calls | Ragas embedding | ours embedding "
             "| Ragas prompt tokens | ours prompt tokens |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for metric in FIVE:
        theirs = next((r for r in result.alone if r.side == "ragas" and r.label == metric), None)
        ours = next((r for r in result.alone if r.side == "ours" and r.label == metric), None)
        nan = float("nan")
        t = theirs.tally.total.per(rows) if theirs else {}
        o = ours.tally.total.per(rows) if ours else {}
        tag = tagged.get(metric)
        lines.append(f"| {metric} | {_fmt(t.get('calls', nan), 2)} | "
                     f"{_fmt(tag.calls / combined_rows if tag else nan, 2)} | {_fmt(o.get('calls', nan), 2)} | "
                     f"{_fmt(t.get('embedding_calls', nan), 2)} | {_fmt(o.get('embedding_calls', nan), 2)} | "
                     f"{_fmt(t.get('prompt_tokens', nan), 0)} | {_fmt(o.get('prompt_tokens', nan), 0)} |")
    return [*lines, ""]


def _throughput_table(result: BenchResult) -> tuple[list[str], float]:
    if not result.throughput:
        return [], float("nan")
    latency = result.settings["latency"]
    runs = result.throughput
    first = runs[0]
    wall = _median(r.wall_s for r in runs)
    units = first.output.get("totals", {}).get("units_total", "–")
    ideal = _median(ideal_s(r, latency) for r in runs)
    rows_per_s = first.rows / wall
    lines = [f"## Rubric-only throughput ({first.rows} rows × {len(first.output.get('rubrics', []))} rubrics: "
             f"{', '.join(first.output.get('rubrics', []))})", "",
             "| concurrency | judgments | judge calls | wall (median) | rows/s | ideal | wall / ideal | CPU ours "
             "| CPU stub | peak RSS |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
             f"| {first.concurrency} | {units} | {first.tally.total.calls} | {wall:.2f} s "
             f"({min(r.wall_s for r in runs):.2f}–{max(r.wall_s for r in runs):.2f}) | {rows_per_s:.1f} | "
             f"{ideal:.2f} s | {wall / ideal:.2f}× | {_median(r.cpu_s for r in runs):.2f} s | "
             f"{_median(r.stub_cpu_s for r in runs):.2f} s | {_median(r.max_rss_mb for r in runs):.0f} MB |", ""]
    return lines, rows_per_s


def _nonllm_table(result: BenchResult) -> list[str]:
    n = result.nonllm
    if not n:
        return []
    together = n["all_together"]
    lines = [f"## Non-LLM metrics ({n['rows']:,} rows, through `score_sample`)", "",
             f"All {len(n['metrics'])} together: {together['us_per_row']:,.0f} µs/row wall "
             f"({together['cpu_us_per_row']:,.0f} µs/row CPU), {together['rows_per_s']:,.0f} rows/s, "
             f"{together['wall_s']:.1f} s for {together['rows']:,} rows; RSS with the rows loaded "
             f"{n['rss_after_rows_mb']:.0f} MB, peak {n['max_rss_mb']:.0f} MB.", "",
             f"Per metric (first {next(iter(n['per_metric'].values()))['rows']:,} rows each):", "",
             "| metric | µs/row wall | µs/row CPU | rows/s |", "|---|---:|---:|---:|"]
    for name, m in n["per_metric"].items():
        lines.append(f"| {name} | {m['us_per_row']:,.0f} | {m['cpu_us_per_row']:,.0f} | {m['rows_per_s']:,.0f} |")
    return [*lines, ""]


def _memory_table(result: BenchResult) -> list[str]:
    lines = ["## Peak memory (ru_maxrss of each workload's own process, median)", "",
             "| workload | peak RSS |", "|---|---:|"]
    for concurrency in result.settings["concurrency"]:
        for side in ("ragas", "ours"):
            runs = _runs(result, side, concurrency)
            if runs:
                lines.append(f"| {side}, five metrics, {runs[0].rows} rows, c={concurrency} | "
                             f"{_median(r.max_rss_mb for r in runs):.0f} MB |")
    if result.throughput:
        lines.append(f"| ours, rubrics only, {result.throughput[0].rows} rows | "
                     f"{_median(r.max_rss_mb for r in result.throughput):.0f} MB |")
    if result.nonllm:
        lines.append(f"| non-LLM metrics, {result.nonllm['rows']:,} rows | {result.nonllm['max_rss_mb']:.0f} MB |")
    return [*lines, ""]


def _targets(shares: dict[str, float], walls: dict[int, dict[str, float]], result: BenchResult) -> list[str]:
    def mark(ok: bool) -> str:
        return "PASS" if ok else "**FAIL**"
    lines = ["## Targets", "", "| target | measured | |", "|---|---:|---|"]
    if shares:
        lines.append(f"| judge calls ≤ {TARGET_CALL_SHARE:.0%} of Ragas's | {shares['calls']:.0%} | "
                     f"{mark(shares['calls'] <= TARGET_CALL_SHARE)} |")
        lines.append(f"| prompt tokens ≤ {TARGET_PROMPT_SHARE:.0%} of Ragas's | {shares['prompt_tokens']:.0%} | "
                     f"{mark(shares['prompt_tokens'] <= TARGET_PROMPT_SHARE)} |")
    for concurrency, w in walls.items():
        lines.append(f"| wall ≤ {TARGET_IDEAL_FACTOR}× ideal, c={concurrency} | {w['ideal_factor']:.2f}× | "
                     f"{mark(w['ideal_factor'] <= TARGET_IDEAL_FACTOR)} |")
        if w["speedup"] == w["speedup"]:
            lines.append(f"| ≥ {TARGET_SPEEDUP:.0f}× faster than Ragas, c={concurrency} | {w['speedup']:.1f}× | "
                         f"{mark(w['speedup'] >= TARGET_SPEEDUP)} |")
    for run in result.warm:
        lines.append(f"| warm rerun: 0 judge calls, c={run.concurrency} | {run.tally.total.calls} | "
                     f"{mark(run.tally.total.calls == 0)} |")
    return [*lines, ""]


def render(result: BenchResult) -> str:
    cost, shares = _cost_table(result)
    wall, walls = _wall_table(result) if result.runs else ([], {})
    throughput, _ = _throughput_table(result)
    issues = problems(result)
    validity = ["## Validity", ""] + ([f"- {i}" for i in issues] if issues else [
        "Every Ragas metric returned a number (no NaN, no logged error, no format re-ask) and every rubriceval "
        "verdict was scored; no request failed at the stub."]) + [""]
    return "\n".join(["# rubriceval vs Ragas on the stub judge", "", *_setup(result), *validity,
                      *_targets(shares, walls, result), *cost, *wall, *_warm_table(result), *_alone_table(result),
                      *throughput, *_nonllm_table(result), *_memory_table(result)])
