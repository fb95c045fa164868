"""Tables for docs/benchmarks.md from saved `rubriceval benchmark-judge … --out FILE.json` results.

    .venv/bin/python benchmarks/pipeline/judge_modes_report.py modes out/bench15/summeval_*.json out/bench15/halueval_*.json
    .venv/bin/python benchmarks/pipeline/judge_modes_report.py ties out/bench15/summeval_holistic.json … out/bench15/cs_*.json
    .venv/bin/python benchmarks/pipeline/judge_modes_report.py subset out/bench15/summeval_checklist.json \\
        --like out/bench15/summeval_holistic.json --out FILE

`modes`: one row per result — data set, mode, n, κ (SummEval: quadratic vs the experts' consensus; HaluEval:
Cohen's κ on hallucination yes/no) with its 95 % CI, calls, prompt tokens sent / processed (sent minus the
server's prefix-cache hits) and completion tokens per item, wall seconds per item.
`ties`: for holistic results that carry P(level) per item — the tie rate (top two levels within
`TIE_MARGIN`), how far tied and untied items are from the human label, and agreement of the written level
(argmax) against the rounded expected score.
`subset`: a result restricted to the items of another (e.g. the items a stopped run got to), statistics recomputed.
`partial`: a result from the `F.partial.jsonl` of a run stopped part-way (the items it had judged).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rubriceval.scoring.combine import round_half_up
from rubriceval.scoring.score_probs import TIE_MARGIN
from rubriceval.stats.agreement import agreement_report, binary_agreement_report

THRESHOLD = 4          # the benchmark rubrics' threshold: score ≥ 4 = no hallucination


def _load(path: str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _mode(result: dict) -> str:
    mode = result.get("judge_mode") or "holistic"
    if mode == "holistic":
        mode += f" + {result['few_shot']}" if result.get("few_shot") not in (None, "none") else " zero-shot"
    return mode


def _kappa(result: dict) -> str:
    if "overall" in result:                                       # cs_zh
        return result["overall"]["kappa_quadratic"]
    if result.get("ordinal"):
        return result["ordinal"]["kappa_quadratic"]
    return result["binary"]["kappa"]


def _fmt(estimate: dict) -> str:
    if estimate.get("value") is None:
        return "undefined"
    ci = (f" [{estimate['ci_low']:.2f}, {estimate['ci_high']:.2f}]" if estimate.get("ci_low") is not None else "")
    return f"{estimate['value']:.2f}{ci}"


def modes_table(paths: list[str]) -> str:
    lines = ["| data set | mode | n | κ [95 % CI] | declared rule, same items | calls/item | prompt tok/item "
             "sent / processed | completion tok/item | s/item |", "|---|---|---|---|---|---|---|---|---|"]
    for path in paths:
        r = _load(path)
        n = r["n_items"]
        u = r["usage"]
        rule = r.get("rule") or {}
        rule_k = rule.get("ordinal", {}).get("kappa_quadratic") or rule.get("binary", {}).get("kappa")
        if "rule_overall" in r and r["rule_overall"]:
            rule_k = r["rule_overall"]["kappa_quadratic"]
        reused = " (answers reused)" if r.get("judge_mode") == "checklist_fitted" else ""
        lines.append(f"| {r.get('kind', 'cs_zh')} | {_mode(r)} | {n} | {_fmt(_kappa(r))} | "
                     f"{_fmt(rule_k) if rule_k else ''} | {u['calls'] / n:.1f}{reused} | "
                     f"{u['prompt_tokens'] / n:.0f} / {(u['prompt_tokens'] - u['cached_prompt_tokens']) / n:.0f} | "
                     f"{u['completion_tokens'] / n:.1f} | {r['elapsed_s'] / n:.0f} |")
    return "\n".join(lines)


def _items(result: dict) -> list[dict]:
    return result.get("items") or result.get("rows") or []


def _human(result: dict, item: dict):
    return item.get("label", item.get("human"))


def _ranking(kind: str, scores: list[float], human: list) -> str:
    """How well the scores order the items: HaluEval AUC of a low score for a hallucination (ties count half),
    else Spearman's rho against the human level."""
    from scipy import stats

    if kind == "halueval":
        bad = [s for s, h in zip(scores, human) if h]
        good = [s for s, h in zip(scores, human) if not h]
        if not bad or not good:
            return "—"
        u = stats.mannwhitneyu(good, bad).statistic        # P(clean scores above hallucinated)
        return f"AUC {u / (len(bad) * len(good)):.2f}"
    if len(set(scores)) < 2 or len(set(human)) < 2:
        return "ρ undefined"
    return f"ρ {stats.spearmanr(scores, human).statistic:.2f}"


def ties_table(paths: list[str]) -> str:
    lines = [f"| data set | n with P(level) | ties (top two within {TIE_MARGIN}) | mean abs error: tied / untied | "
             "agreement, written level | agreement, round(expected) | written ≠ round(expected) | "
             "ranking: written / expected |",
             "|---|---|---|---|---|---|---|---|"]
    for path in paths:
        r = _load(path)
        kind = r.get("kind", "cs_zh")
        items = [i for i in _items(r) if i.get("score_probs") and i.get("judge_score") is not None]
        if not items:
            lines.append(f"| {kind} | 0 | — | — | — | — | — | — |")
            continue
        written = [int(i["judge_score"]) for i in items]
        expected = [round_half_up(i["score_probs"]["expected"]) for i in items]
        tied = [i["score_probs"]["tie"] for i in items]
        changed = sum(w != e for w, e in zip(written, expected))
        if kind == "halueval":
            human = [_human(r, i) == "yes" for i in items]
            err = [float((w < THRESHOLD) != h) for w, h in zip(written, human)]

            def agree(scores, human=human):
                return _fmt(binary_agreement_report([s < THRESHOLD for s in scores], human, n_boot=1000,
                                                    seed=0).kappa.model_dump()) + " (κ yes/no)"
        else:
            human = [int(_human(r, i)) for i in items]
            err = [abs(w - h) for w, h in zip(written, human)]

            def agree(scores, human=human):
                return _fmt(agreement_report(scores, human, n_boot=1000, seed=0).kappa_quadratic.model_dump()) \
                    + " (quadratic κ)"
        tied_err = [e for e, t in zip(err, tied) if t]
        untied_err = [e for e, t in zip(err, tied) if not t]

        def mean(xs):
            return f"{sum(xs) / len(xs):.2f} (n={len(xs)})" if xs else "—"

        lines.append(f"| {kind} ({_mode(r)}) | {len(items)} | {sum(tied)} ({sum(tied) / len(items):.0%}) | "
                     f"{mean(tied_err)} / {mean(untied_err)} | {agree(written)} | {agree(expected)} | {changed} | "
                     f"{_ranking(kind, written, human)} / "
                     f"{_ranking(kind, [i['score_probs']['expected'] for i in items], human)} |")
    return "\n".join(lines)


def subset(path: str, like: str, out: str) -> None:
    """`path`'s items restricted to `like`'s, statistics recomputed (usage and time scaled by the share kept)."""
    from benchmarks.judge.judge import DEFAULT_RUBRICS, RUBRIC_DIR, benchmark_statistics, load_benchmark_samples
    from benchmarks.judge.results import BenchmarkResult
    from rubriceval.rubric.loader import load_rubric

    full, wanted = BenchmarkResult.model_validate_json(Path(path).read_text()), _load(like)
    keep = [i["id"] for i in wanted["items"]]
    by_id = {i.id: i for i in full.items}
    items = [by_id[k] for k in keep]
    samples = {s.id: s for s in load_benchmark_samples(full.kind, None, 0, None)[1]}
    rubric = load_rubric(RUBRIC_DIR / DEFAULT_RUBRICS[full.kind])
    share = len(items) / len(full.items)
    kept = [samples[k] for k in keep]
    stats = benchmark_statistics(full.kind, rubric, kept, items, lambda i: i.judge_score, 1000, 0, "")
    if full.rule:                     # checklist_fitted: the declared rule on the same items, recomputed too
        stats["rule"] = benchmark_statistics(full.kind, rubric, kept, items, lambda i: i.rule_score, 1000, 0, "declared rule")
    usage = full.usage.model_copy(update={k: int(round(getattr(full.usage, k) * share)) for k in
                                          ("calls", "prompt_tokens", "completion_tokens", "cached_prompt_tokens")})
    result = full.model_copy(update={**stats, "items": items, "n_items": len(items), "usage": usage,
                                     "n_scored": sum(i.judge_score is not None for i in items),
                                     "elapsed_s": full.elapsed_s * share,
                                     "command": full.command + f"  [subset: the {len(items)} items of {like}]"})
    Path(out).write_text(result.model_dump_json(indent=2), encoding="utf-8")


def from_partial(path: str, kind: str, mode: str, few_shot: str | None, out: str, elapsed_s: float) -> None:
    """A result from the items a stopped run had judged (`F.partial.jsonl`), statistics over those items; the
    rubric version is the one measured (examples and mode included), as the partial file's header names it."""
    from benchmarks.judge.judge import DEFAULT_RUBRICS, RUBRIC_DIR, benchmark_statistics, load_benchmark_samples
    from benchmarks.judge.partial import read_partial
    from benchmarks.judge.results import BenchmarkItem, BenchmarkResult
    from rubriceval.core.verdict import Usage
    from rubriceval.rubric.loader import load_rubric

    header, items, judged_s = read_partial(path, BenchmarkItem)
    samples = {s.id: s for s in load_benchmark_samples(kind, None, 0, None)[1]}
    rubric = load_rubric(RUBRIC_DIR / DEFAULT_RUBRICS[kind])
    stats = benchmark_statistics(kind, rubric, [samples[i.id] for i in items], items, lambda i: i.judge_score, 1000, 0, "")
    usage = sum((i.usage or Usage() for i in items), Usage())
    elapsed_s = elapsed_s or judged_s
    result = BenchmarkResult(kind=kind, judge_mode=mode, few_shot=few_shot, rubric_id=rubric.id,
                             rubric_version_tag=header.rubric_versions[rubric.id],
                             judge="embedded local judge (partial run)",
                             n_items=len(items), n_scored=sum(i.judge_score is not None for i in items),
                             elapsed_s=elapsed_s, seconds_per_item=elapsed_s / max(1, len(items)), usage=usage,
                             items=items, command=f"[stopped part-way: {len(items)} items of {path}]", **stats)
    Path(out).write_text(result.model_dump_json(indent=2), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["modes", "ties", "subset", "partial"])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--like")
    parser.add_argument("--out")
    parser.add_argument("--kind", choices=["summeval", "halueval"])
    parser.add_argument("--mode", default="holistic")
    parser.add_argument("--few-shot")
    parser.add_argument("--elapsed", type=float, default=0.0,
                        help="partial: wall seconds the stopped run took (default: the judging seconds the file "
                             "records)")
    args = parser.parse_args(argv)
    if args.what == "partial":
        from_partial(args.files[0], args.kind, args.mode, args.few_shot, args.out, args.elapsed)
        return 0
    if args.what == "subset":
        subset(args.files[0], args.like, args.out)
        return 0
    print(modes_table(args.files) if args.what == "modes" else ties_table(args.files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
