"""Benchmark any configured judge against human labels: SummEval consistency (1–5) and HaluEval (yes/no).

SummEval: the `summeval_consistency` rubric on 100 CNN/DM summaries; the judge's score against the experts'
consensus (lower median of three): quadratic κ, exact/±1 agreement, Spearman — plus Spearman against the experts'
mean, and the experts' own agreement (Krippendorff's α) as the ceiling a judge can be expected to reach.
HaluEval: the `halueval_hallucination` rubric on a balanced sample; score ≥ the rubric's threshold means "no
hallucination", compared with the human yes/no label (positive = hallucination): accuracy, precision, recall, F1, κ.

Run: `python -m benchmarks.judge.judge summeval --n 100 --out out/bench_summeval.json` (no --base-url = the
embedded local judge). Unscored verdicts are counted and left out of the statistics, never scored as anything.
"""
from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel
from scipy import stats

from benchmarks.judge.datasets import balanced_subsample, load_halueval, load_summeval, summeval_expert_matrix
from benchmarks.judge.partial import PartialFile, partial_header
from benchmarks.judge.results import BenchmarkItem, BenchmarkKind, BenchmarkResult
from rubriceval.common.errors import DatasetError
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig, load_judge_config
from rubriceval.local.backends import make_judge
from rubriceval.rubric.applies import applies
from rubriceval.rubric.loader import load_rubric
from rubriceval.rubric.schema import FewShot, JudgeMode, Rubric
from rubriceval.stats.agreement import (
    Estimate,
    agreement_report,
    binary_agreement_report,
    krippendorff_alpha,
)

RUBRIC_DIR = Path(__file__).resolve().parent / "rubrics"      # the repository's benchmarks/, not in the wheel
DEFAULT_RUBRICS: dict[str, str] = {"summeval": "summeval_consistency.yaml", "halueval": "halueval_hallucination.yaml"}
DEFAULT_HALUEVAL_N = 50
FEEDBACK_CHARS = 300      # of each item's feedback kept in the saved result
Record = TypeVar("Record", bound=BaseModel)


def spearman_estimate(x: list[float], y: list[float], *, n_boot: int = 1000, confidence: float = 0.95,
                      seed: int = 0) -> Estimate:
    """Spearman's rho of real-valued pairs with an item-bootstrap CI (undefined → a note, never NaN)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 3:
        return Estimate(note=f"Spearman needs at least 3 items, got {len(a)}")
    if np.all(a == a[0]) or np.all(b == b[0]):
        return Estimate(note="Spearman is undefined: one side gave every item the same score")
    value = float(stats.spearmanr(a, b).statistic)
    if n_boot <= 0:
        return Estimate(value=value)
    rng = np.random.default_rng(seed)
    replicates = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(a), len(a))
        ra, rb = a[idx], b[idx]
        if np.all(ra == ra[0]) or np.all(rb == rb[0]):
            continue
        replicates.append(stats.spearmanr(ra, rb).statistic)
    if len(replicates) < 0.9 * n_boot:
        return Estimate(value=value, note="no CI: too many bootstrap resamples were constant")
    tail = (1 - confidence) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail])
    return Estimate(value=value, ci_low=float(low), ci_high=float(high), n_boot_used=len(replicates))


def load_benchmark_samples(kind: BenchmarkKind, n: int | None, seed: int, data: str | Path | None
                           ) -> tuple[list[Sample], list[Sample]]:
    """(the items measured, every labelled item of the benchmark: few-shot examples come from the others)."""
    if kind == "summeval":
        pool = load_summeval(data)
        samples = pool
        if n is not None and n < len(pool):
            # A seeded subset in file order: the file is grouped by article, so "the first n" is a biased slice.
            keep = sorted(np.random.default_rng(seed).choice(len(pool), size=n, replace=False))
            samples = [pool[i] for i in keep]
        return samples, pool
    if kind == "halueval":
        pool = load_halueval(data)
        return balanced_subsample(pool, n or DEFAULT_HALUEVAL_N, seed=seed), pool
    raise ValueError(f"unknown benchmark '{kind}': use summeval or halueval")


async def judge_pairs(pairs: list[tuple[Rubric, Sample]], config: JudgeConfig, progress: bool,
                      on_verdict: Callable[[Sample, Verdict], None] | None = None, panel: Any = None
                      ) -> list[Verdict]:
    """Score every (rubric, sample) pair with one judge started here, as a run scores it (`runner.judge_rubric`:
    self-consistency too, when the judge config asks for it; by a judge panel when `panel`, a PanelConfig, is
    given), printing progress every 10 pairs; `on_verdict` sees each verdict as it comes (a long run stopped
    part-way keeps what it judged)."""
    from rubriceval.run.runner import judge_rubric

    judge = make_judge(config, announce=progress)
    if panel is not None:
        from rubriceval.scoring.panel import make_panel

        panel = make_panel(panel, stats=judge.stats, announce=progress)
    started = time.perf_counter()
    done = 0

    async def one(rubric: Rubric, sample: Sample) -> Verdict:
        nonlocal done
        verdict = await judge_rubric(rubric, sample, judge, panel)
        done += 1
        if on_verdict is not None:
            on_verdict(sample, verdict)
        if progress and (done % 10 == 0 or done == len(pairs)):
            print(f"  {done}/{len(pairs)} judged ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
        return verdict

    try:
        return list(await asyncio.gather(*(one(r, s) for r, s in pairs)))
    finally:
        await judge.close()
        if panel is not None:
            await panel.close()


async def judge_records(pairs: list[tuple[Rubric, Sample]], config: JudgeConfig,
                        record: Callable[[Sample, Verdict], Record], *, progress: bool,
                        keep: PartialFile[Record] | None = None, resume: bool = False, panel: Any = None
                        ) -> tuple[list[Record], float, int]:
    """Every pair's record in pair order — with `keep` and `resume`, those its partial file holds and the others
    judged now — each appended to `keep` as it is judged; the judging seconds (earlier sessions included); and how
    many records came from the partial file."""
    started = time.perf_counter()
    done = keep.open(resume).items if keep is not None else {}
    todo = [(r, s) for r, s in pairs if s.id not in done]
    verdicts = await judge_pairs(todo, config, progress, on_verdict=keep.writer(record) if keep is not None else None,
                                 panel=panel)
    judged = {s.id: record(s, v) for (_, s), v in zip(todo, verdicts)}
    records = [done[s.id] if s.id in done else judged[s.id] for _, s in pairs]
    return records, keep.elapsed() if keep is not None else time.perf_counter() - started, len(done)


def verdict_p_yes(verdict: Verdict) -> dict[str, float]:
    """p(yes) of every checklist question a verdict asked (empty for a holistic verdict)."""
    items = (verdict.details or {}).get("checklist") or {}
    return {qid: answer["p_yes"] for item in items.values() for qid, answer in item.get("questions", {}).items()
            if answer.get("p_yes") is not None}


def verdict_score_probs(verdict: Verdict) -> dict | None:
    """P(level) of a holistic verdict's (first) judge item, when the judge returned logprobs."""
    return next(iter(((verdict.details or {}).get("score_probs") or {}).values()), None)


def _distribution(scores: list[float | None], human: list[str]) -> dict[str, dict[str, int]]:
    table: dict[str, Counter] = {}
    for score, label in zip(scores, human):
        key = "unscored" if score is None else str(int(score))
        table.setdefault(label, Counter())[key] += 1
    order = ["1", "2", "3", "4", "5", "unscored"]
    return {label: {k: counts[k] for k in order if counts[k]} for label, counts in sorted(table.items())}


def _measured_rubric(kind: BenchmarkKind, rubric: Rubric, mode: JudgeMode | None, few_shot: FewShot | None,
                     samples: list[Sample], pool: list[Sample], seed: int, judge_model: str) -> Rubric:
    """The rubric as measured: few-shot examples from unmeasured items, and the judge mode (checklist for both
    checklist modes: the fit happens here, on the answers; None: the rubric's own, as a run with this judge would
    run it — rubriceval/scoring/judge_mode.py)."""
    from benchmarks.judge.modes import level_examples, with_examples
    from rubriceval.scoring.judge_mode import with_judge_mode

    if few_shot is not None and few_shot != "none":
        rubric = with_examples(rubric, few_shot, level_examples(kind, rubric, pool, {s.id for s in samples}, seed))
    (rubric,), notes = with_judge_mode([rubric], "checklist" if mode == "checklist_fitted" else mode,
                                       judge_models=[judge_model])
    for line in notes:
        print(line, file=sys.stderr)
    return rubric


def _item(kind: BenchmarkKind, sample: Sample, verdict: Verdict) -> BenchmarkItem:
    human = sample.metadata["human_median"] if kind == "summeval" else sample.metadata["human_label"]
    return BenchmarkItem(id=sample.id, judge_score=verdict.score, unscored_reason=verdict.unscored_reason,
                         unscored_kind=None if verdict.score is not None else verdict.unscored_kind or "error",
                         human=human, human_detail=sample.metadata.get("human_scores", []),
                         feedback=verdict.feedback[:FEEDBACK_CHARS], p_yes=verdict_p_yes(verdict),
                         score_probs=verdict_score_probs(verdict), usage=verdict.usage)


async def run_benchmark_async(kind: BenchmarkKind, judge_config: JudgeConfig, n: int | None = None,
                              out: str | Path | None = None, *, seed: int = 0, rubric_path: str | Path | None = None,
                              n_boot: int = 1000, progress: bool = True, data: str | Path | None = None,
                              few_shot: FewShot | None = None, answers: str | Path | None = None,
                              partial: str | Path | None = None, resume: bool = False) -> BenchmarkResult:
    """`data`: another copy of the benchmark (a file or a folder), else the one shipped with the package;
    `few_shot`: examples per level from unmeasured items; `answers`: a saved checklist result whose p(yes)
    `checklist_fitted` reuses instead of asking the judge again (benchmarks/judge/modes.py); `partial`: a
    JSON-lines file that gets each item as it is judged; `resume`: keep the items it holds when they were judged
    with these very prompts (benchmarks/judge/partial.py) and judge only the others."""
    from benchmarks.judge.modes import cross_fit_items, saved_answers

    mode = judge_config.judge_mode
    samples, pool = load_benchmark_samples(kind, n, seed, data)
    rubric = _measured_rubric(kind, load_rubric(rubric_path or RUBRIC_DIR / DEFAULT_RUBRICS[kind]), mode, few_shot,
                              samples, pool, seed, judge_config.model)
    not_applicable = [s.id for s in samples if not applies(rubric, s)]
    if not_applicable:
        raise ValueError(f"rubric {rubric.id} does not apply to {len(not_applicable)} {kind} sample(s) "
                         f"(e.g. {not_applicable[0]}); check its applies_to")
    if answers is not None:
        if mode != "checklist_fitted":
            raise DatasetError("saved answers only serve --judge-mode checklist_fitted", file=str(answers))
        saved = saved_answers(answers, kind, samples)
        items, usage, elapsed, judge_text = saved.items, saved.usage, saved.elapsed_s, saved.judge
        unscored_kinds, resumed = saved.unscored_kinds, 0
    else:
        pairs = [(rubric, s) for s in samples]
        keep = None if partial is None else PartialFile(
            partial, partial_header(kind, pairs, judge_config, judge_mode=mode, few_shot=few_shot), BenchmarkItem)
        items, elapsed, resumed = await judge_records(pairs, judge_config, lambda s, v: _item(kind, s, v),
                                                      progress=progress, keep=keep, resume=resume)
        judge_text = judge_config.describe()
        usage = sum((i.usage or Usage() for i in items), Usage())
        unscored_kinds = dict(Counter(i.unscored_kind or "error" for i in items if i.judge_score is None))
    result: dict = dict(kind=kind, judge_mode=mode, few_shot=few_shot, usage=usage, rubric_id=rubric.id,
                        rubric_version_tag=rubric.version_tag, judge=judge_text, n_items=len(samples),
                        unscored_kinds=unscored_kinds, elapsed_s=elapsed, resumed_items=resumed,
                        seconds_per_item=elapsed / max(1, len(samples)))
    if mode == "checklist_fitted":
        items = cross_fit_items(kind, rubric, items, seed)
        result["rule"] = benchmark_statistics(kind, rubric, samples, items, lambda i: i.rule_score, n_boot, seed,
                                              "declared rule")
    result.update(benchmark_statistics(kind, rubric, samples, items, lambda i: i.judge_score, n_boot, seed, ""))
    benchmark = BenchmarkResult(**result, n_scored=sum(i.judge_score is not None for i in items), items=items)
    if out is not None:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(benchmark.model_dump_json(indent=2), encoding="utf-8")
    return benchmark


def benchmark_statistics(kind: BenchmarkKind, rubric: Rubric, samples: list[Sample], items: list[BenchmarkItem], score_of,
                         n_boot: int, seed: int, label: str) -> dict:
    """Agreement of `score_of(item)` with the human labels (unscored items counted and left out)."""
    scored = [(s, i) for s, i in zip(samples, items) if score_of(i) is not None]
    n_unscored = len(items) - len(scored)
    name = f"{rubric.id}{f' ({label})' if label else ''}"
    if kind == "summeval":
        scores = [score_of(i) for _, i in scored]
        return {"ordinal": agreement_report(scores, [s.metadata["human_median"] for s, _ in scored],
                                            ids=[s.id for s, _ in scored], name=f"{name} vs SummEval experts",
                                            n_boot=n_boot, seed=seed, n_unscored=n_unscored),
                "spearman_vs_mean": spearman_estimate(scores, [s.metadata["human_mean"] for s, _ in scored],
                                                      n_boot=n_boot, seed=seed),
                "expert_alpha": krippendorff_alpha(summeval_expert_matrix(samples), level="ordinal",
                                                   n_boot=n_boot, seed=seed),
                "judge_score_by_human": _distribution([score_of(i) for i in items],
                                                      [f"{s.metadata['human_median']}" for s in samples])}
    # Positive = hallucination, as in HaluEval's own question "does it contain a hallucination?".
    return {"binary": binary_agreement_report(
                [score_of(i) < rubric.threshold for _, i in scored], [s.metadata["hallucinated"] for s, _ in scored],
                ids=[s.id for s, _ in scored], name=f"{name} vs HaluEval labels", n_boot=n_boot, seed=seed,
                n_unscored=n_unscored),
            "judge_score_by_human": _distribution([score_of(i) for i in items],
                                                  [f"hallucination={s.metadata['human_label']}" for s in samples])}


def record_benchmark(result: BenchmarkResult, store_path: str | Path, judge_model: str) -> int | None:
    """Keep a SummEval result with the rubric version's other agreement evidence (source 'benchmark'), so
    trust_status, reports and the gate see it. HaluEval's yes/no agreement is not a 1–5 κ: not recorded."""
    if result.ordinal is None:
        return None
    from rubriceval.store.runs import RunStore
    from rubriceval.trust.store import TrustStore

    RunStore(store_path).close()          # the benchmark may be the first thing recorded in this store
    with TrustStore(store_path) as trust:
        return trust.record_agreement(result.rubric_id, result.rubric_version_tag, result.ordinal, source="benchmark",
                                      source_detail=f"{result.kind}, {result.n_scored} of {result.n_items} items",
                                      judge_model=judge_model)


def partial_path(out: str | Path | None, resume: bool) -> Path | None:
    """Where a run writing `out` keeps its items as they are judged (`<out>.partial.jsonl`)."""
    if out is None and resume:
        raise DatasetError("--resume needs --out: the items of a stopped run are kept beside its --out file",
                           field="--resume")
    return Path(f"{out}.partial.jsonl") if out is not None else None


def run_benchmark(kind: BenchmarkKind, judge_config: JudgeConfig, n: int | None = None,
                  out: str | Path | None = None, *, store: str | Path | None = None, command: str = "",
                  resume: bool = False, **options) -> BenchmarkResult:
    """Run the benchmark (`resume`: finish a stopped one from its partial file), print its numbers, optionally
    write the full result (with every item and the command) as JSON and record the agreement in a run store."""
    partial = partial_path(out, resume)
    result = asyncio.run(run_benchmark_async(kind, judge_config, n, None, partial=partial, resume=resume, **options))
    if partial is not None:
        partial.unlink(missing_ok=True)          # complete: the full result replaces it
    result = result.model_copy(update={"command": command}) if command else result
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(result.model_dump_json(indent=2), encoding="utf-8")
    print(result.summary())
    if store is not None:
        from rubriceval.store.location import display_location

        where = display_location(store)              # a URL without its password
        if record_benchmark(result, store, judge_config.model) is None:
            print(f"note: {kind} gives yes/no agreement, not a 1–5 κ; nothing recorded in {where}")
        else:
            print(f"recorded: {result.rubric_id} {result.rubric_version_tag} κ on {result.ordinal.n} items → {where}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Judge-vs-human benchmark on SummEval or HaluEval.")
    parser.add_argument("kind", choices=["summeval", "halueval"])
    parser.add_argument("--n", type=int, default=None, help="items (SummEval: all 100; HaluEval: 50, balanced)")
    parser.add_argument("--out", default=None, help="write the full result as JSON here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default=None, help="judge config YAML (else environment, else local judge)")
    parser.add_argument("--rubric", default=None, help="another rubric file to benchmark")
    parser.add_argument("--data", default=None, help="another copy of the benchmark data (a file or a folder)")
    args = parser.parse_args(argv)
    config = load_judge_config(args.config)
    command = "python -m benchmarks.judge.judge " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    run_benchmark(args.kind, config, args.n, args.out, seed=args.seed, rubric_path=args.rubric, data=args.data,
                  command=command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
