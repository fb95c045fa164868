"""Issue 44, a rubric's `auto_accept` target: four weekly cycles of judge → review → judge the next week, on the
embedded judge, for the rubric `emotional_soothing_multiturn` through the product's own run path
(run/evaluate.run_async: the run fits the rubric's region from every audit made before it, with the same judge, and
stores the verdicts outside it pending review; trust/rubric_selective.py).

Data: every conversation labelled for that rubric (`label.rubric == emotional_soothing_multiturn`, a 1–5 score) in
`conversations_zh.jsonl` (dev and held-out), `conversations_zh_soothing_v2.jsonl` and `_v3.jsonl`, in id order, dealt
into four weeks (i mod 4). The rubric: the shipped `rubrics/emotional_soothing_multiturn.yaml` in the judge mode its
file advises for the embedded judge (`--judge-mode predicates`: per-turn questions with a p(yes), so its verdicts
carry a confidence), with the target
`auto_accept: {agreement: --agreement, confidence: 0.95}`.

Each week: judge it (a run in the work folder's store); measure it against the labels — scored verdicts, those
accepted automatically and how many of those carry the labelled score, the pending count, and over all scored
verdicts the judge's exact agreement and its agreement on the pass/fail side (score ≥ threshold); then review
`--reviews` of its scored verdicts, pending ones first (the queue's order), the simulated reviewer being the label (an
audit in the audit app: agreeing when the judge gave the label, else overriding with it).

Run: `nice -n 10 python -m benchmarks.judge.rubric_cycles --work out/rubric_cycles --out out/rubric_cycles.json`
(the judge cache makes a rerun free)."""
from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rubriceval.data.io import read_dataset
from rubriceval.data.sample import Sample

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
SETS = ("conversations_zh.jsonl", "conversations_zh_soothing_v2.jsonl", "conversations_zh_soothing_v3.jsonl")
RUBRIC = "emotional_soothing_multiturn"
WEEKS = 4


class Week(BaseModel):
    week: int
    conversations: int
    scored: int = 0
    unscored: int = 0
    accepted: int = 0                 # scored verdicts accepted automatically
    accepted_exact: int = 0           # of those, the labelled score
    pending: int = 0
    exact: int = 0                    # every scored verdict: the labelled score
    same_side: int = 0                # every scored verdict: on the label's side of the threshold
    accepts: str = ""                 # the region: none / confident / all
    threshold: float | None = None
    n_reviewed: int = 0               # reviews the week's fit used
    lower_bound: float | None = None
    reason: str = ""
    reviewed_now: int = 0
    wall_s: float = 0.0
    calls: int = 0


def labelled() -> list[tuple[Sample, int]]:
    found = []
    for name in SETS:
        labels = {}
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if (row.get("label") or {}).get("rubric") == RUBRIC:
                labels[row["id"]] = int(row["label"]["score"])
        found += [(s, labels[s.id]) for s in sorted(read_dataset(str(DATA / name)), key=lambda s: s.id)
                  if s.id in labels]
    return found


def weeks() -> list[list[tuple[Sample, int]]]:
    out: list[list[tuple[Sample, int]]] = [[] for _ in range(WEEKS)]
    for index, dealt in enumerate(labelled()):
        out[index % WEEKS].append(dealt)
    return out


def measure(runs: Any, run_id: str, label: dict[str, int], threshold: float, week: Week) -> list[Any]:
    from rubriceval.core.pending_review import PendingReview
    from rubriceval.i18n import say
    from rubriceval.trust.rubric_selective import rubric_acceptance

    verdicts = [v for v in runs.verdicts(run_id) if v.scorer == RUBRIC]
    for v in verdicts:
        if v.score is None:
            week.unscored += 1
            continue
        week.scored += 1
        exact = v.score == label[v.sample_id]
        week.exact += exact
        week.same_side += (v.score >= threshold) == (label[v.sample_id] >= threshold)
        if PendingReview.read(v.details) is not None:
            week.pending += 1
        else:
            week.accepted += 1
            week.accepted_exact += exact
    found = rubric_acceptance(runs, run_id)
    if found:
        region = found[0].items[0].region
        week.accepts, week.threshold, week.n_reviewed = region.accepts, region.threshold, region.n_reviewed
        week.lower_bound = region.lower_bound
        week.reason = say(region.reason, "en") if region.reason is not None else ""
    return verdicts


def review(store_path: Path, run_id: str, verdicts: list[Any], label: dict[str, int], n: int) -> int:
    from rubriceval.core.pending_review import PendingReview
    from rubriceval.store.audit import AuditStore

    scored = [v for v in verdicts if v.score is not None]
    order = sorted(scored, key=lambda v: (PendingReview.read(v.details) is None, v.sample_id))   # pending first
    done = 0
    with AuditStore(store_path) as audit:
        for v in order[:n]:
            seen = audit.item(run_id, v.sample_id, RUBRIC).versions
            score = label[v.sample_id]
            audit.save_response(run_id, v.sample_id, RUBRIC, expert="label", score=score,
                                reason="" if score == v.score else "the label", expected=seen)
            done += 1
    return done


def run_cycles(work: Path, agreement: float, reviews: int, config: str | None, judge_mode: str) -> list[Week]:
    from rubriceval.judge.config import load_judge_config
    from rubriceval.rubric.auto_accept import AutoAccept
    from rubriceval.rubric.loader import load_rubrics
    from rubriceval.run.evaluate import run_async
    from rubriceval.store.runs import RunStore

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rubric = next(r for r in load_rubrics(ROOT / "rubrics") if r.id == RUBRIC)
    rubric = rubric.model_copy(update={"auto_accept": AutoAccept(agreement=agreement, confidence=0.95)})
    judge_config = load_judge_config(config, judge_mode=judge_mode)
    runs = RunStore(work / "runs.sqlite")
    out = []
    try:
        for number, dealt in enumerate(weeks(), start=1):
            label = {s.id: score for s, score in dealt}
            week = Week(week=number, conversations=len(dealt))
            started = time.perf_counter()
            run_id, totals = asyncio.run(run_async([s for s, _ in dealt], [rubric], [], store=runs,
                                                   judge_config=judge_config, name=f"week-{number}",
                                                   progress=False))
            week.wall_s, week.calls = time.perf_counter() - started, int(totals.judge.get("calls", 0))
            verdicts = measure(runs, run_id, label, float(rubric.threshold or 4), week)
            week.reviewed_now = review(runs.path, run_id, verdicts, label, reviews)
            out.append(week)
            print(table(out), file=sys.stderr)
    finally:
        runs.close()
    return out


def table(cycles: list[Week]) -> str:
    head = ("| week | scored (unscored) | region (reviews used, bound) | accepted | accepted with the label's score | "
            "pending | judge = label (all scored) | same pass/fail side | reviewed after | calls, wall |")
    lines = [head, "|" + "---|" * 10]
    for w in cycles:
        region = w.accepts + (f" ≥ {w.threshold:.2f}" if w.threshold is not None else "")
        bound = f", {w.lower_bound:.2f}" if w.lower_bound is not None else ""
        lines.append(f"| {w.week} | {w.scored} ({w.unscored}) | {region} ({w.n_reviewed}{bound}) | {w.accepted} | "
                     f"{w.accepted_exact} | {w.pending} | {w.exact}/{w.scored} | {w.same_side}/{w.scored} | "
                     f"{w.reviewed_now} | {w.calls}, {w.wall_s:.0f} s |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agreement", type=float, default=0.9, help="the rubric's auto_accept agreement target")
    p.add_argument("--reviews", type=int, default=20, help="verdicts reviewed a week, pending ones first")
    p.add_argument("--config", default=None, help="a judge config file (default: the environment, else embedded)")
    p.add_argument("--judge-mode", default="predicates", help="the rubric's judge mode (its file advises predicates "
                                                                 "for the embedded judge)")
    p.add_argument("--work", default="out/rubric_cycles", help="work folder (its run store); replaced")
    p.add_argument("--out", default="out/rubric_cycles.json")
    args = p.parse_args(argv)
    cycles = run_cycles(Path(args.work), args.agreement, args.reviews, args.config, args.judge_mode)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps([c.model_dump() for c in cycles], ensure_ascii=False, indent=1),
                              encoding="utf-8")
    print(table(cycles))
    for w in cycles:
        if w.reason:
            print(f"week {w.week}: {w.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
