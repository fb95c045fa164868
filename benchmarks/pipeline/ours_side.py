"""Run `rubriceval.run.evaluate.evaluate` over a JSONL dataset against an OpenAI-compatible base URL; print one JSON line.

Runs in the project venv, in its own process (so `ru_maxrss` is this workload's peak and nothing of the
orchestrator or the stub shares its interpreter):

    .venv/bin/python benchmarks/pipeline/ours_side.py --dataset rows.jsonl --base-url http://127.0.0.1:PORT/v1 \
        --metrics answer_correctness,faithfulness --concurrency 16 --cache-dir /tmp/x

`--cache-dir` holds the judge and embedding caches (RUBRICEVAL_CACHE_DIR): a fresh folder is a cold run, the same
folder again a warm rerun. `--rubrics a,b,c` scores rubrics from rubrics/ instead of (or with) metrics;
`--all-rubric-tags` adds every listed rubric's applies_to tags to each row so that each rubric applies to each row.
`wall_s` is the `evaluate()` call alone, the same span the Ragas side measures around `ragas.evaluate()`;
`cpu_s` the CPU time this process used in that span (all threads).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

_started_import = time.perf_counter()
from rubriceval import EmbedderConfig, JudgeConfig, Sample, Usage, Verdict, evaluate, load_rubrics  # noqa: E402

IMPORT_S = time.perf_counter() - _started_import


def _samples(path: str) -> list[Sample]:
    with open(path, encoding="utf-8") as f:
        return [Sample.model_validate(json.loads(line)) for line in f if line.strip()]


def _rubrics(names: list[str]) -> list:
    if not names:
        return []
    loaded = {r.id: r for r in load_rubrics(REPO / "rubrics")}
    missing = [n for n in names if n not in loaded]
    if missing:
        raise SystemExit(f"unknown rubric(s) {missing}; available: {sorted(loaded)}")
    return [loaded[n] for n in names]


def _with_rubric_tags(samples: list[Sample], rubrics: list) -> list[Sample]:
    tags = [t for r in rubrics for t in r.applies_to.tags]
    return [s.model_copy(update={"tags": list(dict.fromkeys([*s.tags, *tags]))}) for s in samples]


def _per_scorer(verdicts: list[Verdict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for v in verdicts:
        entry = out.setdefault(v.scorer, {"verdicts": 0, "scored": 0, "unscored": {}, "usage": Usage(),
                                          "unscored_examples": []})
        entry["verdicts"] += 1
        entry["usage"] = entry["usage"] + v.usage
        if v.scored:
            entry["scored"] += 1
        else:
            kind = v.unscored_kind or "error"
            entry["unscored"][kind] = entry["unscored"].get(kind, 0) + 1
            if len(entry["unscored_examples"]) < 3:
                entry["unscored_examples"].append(f"{v.sample_id}: {v.unscored_reason}"[:300])
    for entry in out.values():
        entry["usage"] = entry["usage"].model_dump()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--metrics", default="")
    parser.add_argument("--rubrics", default="")
    parser.add_argument("--all-rubric-tags", action="store_true")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--model", default="stub")
    args = parser.parse_args()

    cache_dir = Path(args.cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    os.environ["RUBRICEVAL_CACHE_DIR"] = str(cache_dir)      # the embedding cache lives there too
    samples = _samples(args.dataset)
    rubrics = _rubrics([r for r in args.rubrics.split(",") if r])
    if args.all_rubric_tags:
        samples = _with_rubric_tags(samples, rubrics)
    metrics = [m for m in args.metrics.split(",") if m]
    judge = JudgeConfig(base_url=args.base_url, model=args.model, concurrency=args.concurrency,
                        cache_path=str(cache_dir / "judge_cache.sqlite"))
    # The same concurrency budget for embeddings as for the judge (Ragas's max_workers covers both).
    embedder = EmbedderConfig(base_url=args.base_url, model=args.model, concurrency=args.concurrency)

    with tempfile.TemporaryDirectory(prefix="rubriceval-bench-store-") as store_dir:
        started, cpu_started = time.perf_counter(), time.process_time()
        result = evaluate(samples, rubrics=rubrics, metrics=metrics, judge=judge, embedder=embedder,
                          store=Path(store_dir) / "runs.sqlite", progress=False)
        wall_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    print(json.dumps({
        "side": "ours", "rows": len(samples), "concurrency": args.concurrency, "metrics": metrics,
        "rubrics": [r.id for r in rubrics], "wall_s": wall_s, "cpu_s": cpu_s, "import_s": IMPORT_S,
        "totals": result.totals, "per_scorer": _per_scorer(result.verdicts),
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main()
