"""The labelled Chinese RAG set (data/rag_zh.jsonl, built by benchmarks/pipeline/rag_zh_build.py) as a benchmark of the RAG
metrics and of the diagnosis they drive (issue 29): does context_recall see a wrong retrieval, does faithfulness
see an invented fact, and does the report's first advice name the stage that was really wrong?

Each question gives four samples (variants), with what is wrong fixed by construction:

  good             correct retrieval, faithful complete answer          → no finding expected
  wrong_retrieval  the confusable chunk retrieved, answer taken from it → retrieval
  inventing        correct retrieval, answer adds an invented fact      → generation
  omitting         correct retrieval, answer leaves one fact out        → generation (answer_correctness)

Each sample is scored under each call cut (call_modes.py): split extraction + one request per context, merged
extraction + all contexts in one request (the old way), split extraction + all contexts in one request; and each
of them again with the text check on the judge's "supported" (`+text`: the same requests, from the cache). The
diagnosis of a sample is `rubriceval.report.diagnosis.diagnose` over that sample alone (its first finding's stage),
once with the LLM metrics only (as a user without reference contexts) and once with the non-LLM context recall
beside them (cross-check). Resumable: every judge reply is kept in the judge cache beside `--out`, and each finished
(sample, cut) is appended to `<out>.rows.jsonl` as it ends.

    python -m benchmarks.judge.rag_zh --judge stub  --out out/bench_rag_zh_stub.json
    nice python -m benchmarks.judge.rag_zh --judge local --variants wrong_retrieval,inventing,good \
        --metrics context_recall,faithfulness --out out/bench_rag_zh_local.json
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.report.aggregate import summarize
from rubriceval.report.diagnosis import diagnose

DATA = Path(__file__).resolve().parent / "data" / "rag_zh.jsonl"
VARIANTS = {  # variant → (retrieval, answer kind, the stage the diagnosis should name first; None = no finding)
    "good": ("correct", "faithful", None),
    "wrong_retrieval": ("wrong", "wrong_retrieval", "retrieval"),
    "inventing": ("correct", "inventing", "generation"),
    "omitting": ("correct", "omitting", "generation"),
}
BASE_CUTS = {"split_per_context": {"extraction": "split", "context_calls": "per_context"},
             "merged": {"extraction": "merged", "context_calls": "merged"},
             "split_merged_contexts": {"extraction": "split", "context_calls": "merged"}}
# The same requests read with the text check (call_modes `support`): no extra judge call (judge cache).
CUTS = {**{k: {**v, "support": "judge"} for k, v in BASE_CUTS.items()},
        **{f"{k}+text": {**v, "support": "judge_and_text"} for k, v in BASE_CUTS.items()}}
LLM_METRICS = ["context_recall", "faithfulness", "answer_correctness"]
CROSS_CHECK = "nonllm_context_recall"


class Row(BaseModel):
    sample_id: str
    question_id: str
    variant: str
    cut: str
    expected_stage: str | None
    retrieval_ok: bool
    answer_faithful: bool
    scores: dict[str, float | None]
    unscored: dict[str, str] = Field(default_factory=dict)
    stage: str | None = None                # diagnosis, LLM metrics only
    stage_cross_checked: str | None = None  # diagnosis with the non-LLM recall beside them
    dropped_statements: int = 0
    planned_calls: int = 0                  # what the dry run plans for this sample (every reply valid)
    planned_prompt_tokens: int = 0          # estimated, statements stood in by the texts' sentences
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0


def load(path: Path = DATA, split: str = "heldout") -> list[dict]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [r for r in rows if split == "all" or r["split"] == split]


def samples(rows: list[dict], variants: list[str]) -> Iterator[tuple[dict, str, Sample]]:
    """(question row, variant, sample) for every question and variant, question by question: a stopped run has
    every variant of its first questions."""
    for row in rows:
        for variant in variants:
            retrieval, answer, _ = VARIANTS[variant]
            yield row, variant, Sample(
                id=f"{row['id']}-{variant}", question=row["question"], answer=row["answers"][answer],
                ground_truth=row["ground_truth"], contexts=row["retrievals"][retrieval],
                reference_contexts=row["reference_contexts"], language="zh")


def first_stage(verdicts: list[Verdict]) -> str | None:
    """The stage of the first finding the report's diagnosis gives for these verdicts (None: nothing to fix)."""
    findings = [f for f in diagnose(summarize(verdicts, []), verdicts) if f.stage in ("retrieval", "generation")]
    return findings[0].stage if findings else None


async def score_row(row: dict, variant: str, sample: Sample, cut: str, metrics: list[str], judge: Any) -> Row:
    from rubriceval.judge.tokens import estimate_messages_tokens
    from rubriceval.standard_metrics.registry import planned_requests, score_sample

    options = {**CUTS[cut], "semantic_weight": 0.0, "factual_weight": 1.0}   # correctness without an embedder
    planned = planned_requests(sample, [*metrics, CROSS_CHECK], options, judge_model=judge.config.model)
    started = time.perf_counter()
    verdicts = await score_sample(sample, [*metrics, CROSS_CHECK], judge=judge, options=options)
    llm = [v for v in verdicts if v.scorer != CROSS_CHECK]
    labels = row["answer_labels"][VARIANTS[variant][1]]
    return Row(sample_id=sample.id, question_id=row["id"], variant=variant, cut=cut,
               expected_stage=VARIANTS[variant][2], retrieval_ok=VARIANTS[variant][0] == "correct",
               answer_faithful=labels["faithful"], scores={v.scorer: v.score for v in verdicts},
               unscored={v.scorer: v.unscored_reason or "" for v in verdicts if v.score is None},
               stage=first_stage(llm), stage_cross_checked=first_stage(verdicts),
               dropped_statements=sum(len(d) if isinstance(d, list) else sum(len(x) for x in d.values())
                                      for v in llm if (d := (v.details or {}).get("dropped_statements"))),
               planned_calls=len(planned),
               planned_prompt_tokens=sum(estimate_messages_tokens(p.messages) for p in planned),
               usage=sum((v.usage for v in verdicts), Usage()), seconds=time.perf_counter() - started)


# --- the figures ------------------------------------------------------------------------------------------------

def _agreement(rows: list[Row], metric: str, label: str, threshold: float) -> dict[str, Any]:
    """How often `metric` ≥ threshold agrees with the boolean label, over rows where it scored."""
    scored = [r for r in rows if r.scores.get(metric) is not None]
    agree = sum((r.scores[metric] >= threshold) == getattr(r, label) for r in scored)
    return {"n": len(scored), "unscored": len(rows) - len(scored),
            "agreement": round(agree / len(scored), 3) if scored else None}


def figures(rows: list[Row]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cut in dict.fromkeys(r.cut for r in rows):
        mine = [r for r in rows if r.cut == cut]
        n = len(mine)
        out[cut] = {
            "samples": n,
            "context_recall_vs_retrieval": _agreement(mine, "context_recall", "retrieval_ok", 0.7),
            "nonllm_recall_vs_retrieval": _agreement(mine, CROSS_CHECK, "retrieval_ok", 0.7),
            # faithfulness is labelled where the retrieval was right: from a wrong chunk, "faithful" is ill-defined
            "faithfulness_vs_label": _agreement([r for r in mine if r.retrieval_ok], "faithfulness",
                                                "answer_faithful", 0.8),
            "diagnosis_accuracy": round(sum(r.stage == r.expected_stage for r in mine) / n, 3) if n else None,
            "diagnosis_accuracy_cross_checked":
                round(sum(r.stage_cross_checked == r.expected_stage for r in mine) / n, 3) if n else None,
            "diagnosis_by_variant": {v: f"{sum(r.stage == r.expected_stage for r in g)}/{len(g)}"
                                     for v in VARIANTS if (g := [r for r in mine if r.variant == v])},
            "planned_calls_per_sample": round(sum(r.planned_calls for r in mine) / n, 2) if n else None,
            "planned_prompt_tokens_per_sample": round(sum(r.planned_prompt_tokens for r in mine) / n, 1) if n else None,
            # requests = calls made + answered from the judge cache (a resumed run, or a ground truth extracted for
            # an earlier variant of the same question); tokens are counted for calls made only
            "requests_per_sample": round(sum(r.usage.calls + r.usage.cache_hits for r in mine) / n, 2) if n else None,
            "calls_per_sample": round(sum(r.usage.calls for r in mine) / n, 2) if n else None,
            "cache_hits_per_sample": round(sum(r.usage.cache_hits for r in mine) / n, 2) if n else None,
            "prompt_tokens_per_sample": round(sum(r.usage.prompt_tokens for r in mine) / n, 1) if n else None,
            "completion_tokens_per_sample": round(sum(r.usage.completion_tokens for r in mine) / n, 1) if n else None,
            "dropped_statements_per_sample": round(sum(r.dropped_statements for r in mine) / n, 2) if n else None,
            "seconds_per_sample": round(sum(r.seconds for r in mine) / n, 1) if n else None,
        }
    return out


def table(result: dict[str, Any]) -> str:
    """The figures as a Markdown table, one column per cut."""
    cuts = list(result)
    lines = ["| | " + " | ".join(cuts) + " |", "|---|" + "---|" * len(cuts)]

    def cell(value: Any) -> str:
        if isinstance(value, dict) and "agreement" in value:
            return "–" if value["agreement"] is None else f"{value['agreement']:.2f} (n={value['n']}, " \
                                                          f"unscored {value['unscored']})"
        if isinstance(value, dict):
            return ", ".join(f"{k} {v}" for k, v in value.items())
        return "–" if value is None else str(value)
    for key in result[cuts[0]]:
        lines.append(f"| {key} | " + " | ".join(cell(result[c].get(key)) for c in cuts) + " |")
    return "\n".join(lines)


# --- running ----------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def judge_config(kind: str, cache_path: Path) -> Iterator[JudgeConfig]:
    if kind == "local":
        yield JudgeConfig(cache_path=str(cache_path))
        return
    from rubriceval.testing.stub_server import StubServer

    with StubServer() as stub:   # schema-valid answers with made-up content: the plumbing, calls and tokens
        yield JudgeConfig(base_url=stub.base_url, model="stub", api_key="stub", cache=False)


async def run(rows: list[dict], variants: list[str], cuts: list[str], metrics: list[str], config: JudgeConfig,
              rows_path: Path, progress: bool = True) -> list[Row]:
    from rubriceval.local.backends import make_judge

    judge = make_judge(config, announce=progress)
    done: list[Row] = []
    try:
        with rows_path.open("w", encoding="utf-8") as sink:
            for row, variant, sample in samples(rows, variants):
                for cut in cuts:
                    result = await score_row(row, variant, sample, cut, metrics, judge)
                    done.append(result)
                    sink.write(result.model_dump_json() + "\n")
                    sink.flush()
                    if progress:
                        print(f"{sample.id} {cut}: stage {result.stage} (expected {result.expected_stage}), "
                              f"{result.usage.calls} calls, {result.seconds:.0f} s", file=sys.stderr)
    finally:
        await judge.close()
    return done


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.judge.rag_zh", description=__doc__.split("\n")[0])
    p.add_argument("--judge", choices=["stub", "local"], default="stub")
    p.add_argument("--split", choices=["heldout", "dev", "all"], default="heldout")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--cuts", default=",".join(CUTS), help="; ".join(f"{k}: {v}" for k, v in CUTS.items()))
    p.add_argument("--metrics", default=",".join(LLM_METRICS))
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--out", required=True, help="result JSON; <out>.rows.jsonl and <out>.cache.sqlite beside it")
    p.add_argument("--from-rows", action="store_true",
                   help="no judging: the figures of the (sample, cut) rows a stopped run wrote to <out>.rows.jsonl")
    args = p.parse_args(argv)
    rows = load(split=args.split)[:args.limit]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows_path = Path(f"{out}.rows.jsonl")
    if args.from_rows:
        done = [Row.model_validate_json(line) for line in rows_path.read_text("utf-8").splitlines() if line.strip()]
    else:
        with judge_config(args.judge, Path(f"{out}.cache.sqlite")) as config:
            done = asyncio.run(run(rows, args.variants.split(","), args.cuts.split(","), args.metrics.split(","),
                                   config, rows_path))
    result = figures(done)
    out.write_text(json.dumps({"judge": args.judge, "split": args.split, "command": " ".join(sys.argv),
                               "figures": result}, ensure_ascii=False, indent=1), encoding="utf-8")
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
