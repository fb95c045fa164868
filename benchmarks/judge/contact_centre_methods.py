"""The methods of benchmarks/judge/contact_centre.py, computed from the collected answers (no judge call), and the
shipped card run end to end. See that module's docstring."""
from __future__ import annotations

import math
import os
import sys
import time
from collections import Counter

from benchmarks.judge.item_figures import Figures
from rubriceval.scoring.judgement.anchors import band_between

ITEMS = ("promise", "leak_other", "soothe")
GATED = {"promise", "leak_other"}          # evidence kinds that gate their turns (scoring/judgement/evidence.py)


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _read(score: float | None, cutoff: float, band: tuple[float, float] | None = None) -> bool | None:
    """yes / no / undecided (None); no score = no evidence = no by rule."""
    if score is None:
        return False
    if band is not None and band[0] <= score <= band[1]:
        return None
    return score >= cutoff


def _anchors(records: dict, name: str) -> tuple[list[float], list[float], float]:
    rows = records["anchors"][name]
    yes = [p for answer, _, p in rows if answer == "yes" and p is not None]
    no = [p for answer, free, p in rows if answer == "no" and not free and p is not None]
    free = [p for _, is_free, p in rows if is_free and p is not None]
    return yes, no, free[0] if free else 0.5


def rule_for(method: str, records: dict, name: str) -> tuple[float, tuple[float, float] | None, str]:
    """(cut-off, undecided band, note) of a method for one question."""
    if method in ("whole", "turns"):
        return 0.5, None, "0.5"
    yes, no, free = _anchors(records, name)
    if method == "turns_cf":
        return free, None, f"content-free p={free:.3f}"
    if method == "turns_batch":
        scores = [c["found"][name]["score"] for c in records["conversations"].values()
                  if c["found"][name]["score"] is not None]
        cut = sum(scores) / len(scores) if scores else 0.5
        return cut, None, f"batch mean p={cut:.3f}"
    if method == "turns_examples":
        # as the shipped mechanism (anchors.py): a gate kind's examples alone, others with the content-free turn
        top_no = max(no) if name in GATED else max(no + [free])
        if not yes or min(yes) <= top_no:
            return 0.5, (0.0, 1.0), f"examples not separated (yes {yes}, no {top_no:.3f})"
        cut, band = band_between(top_no, min(yes))
        return cut, band, f"examples: no≤{top_no:.3f} yes≥{min(yes):.3f} → cut {cut:.3f} band {band}"
    raise ValueError(method)


METHODS = ("whole", "turns", "turns_cf", "turns_batch", "turns_examples")


def decisions(records: dict, method: str) -> dict[str, dict[str, bool | None | str]]:
    """Per conversation, per item: hit True / False, or "undecided"."""
    rules = {n: rule_for(method, records, n) for n in ("upset", *ITEMS)}
    out = {}
    for cid, conv in records["conversations"].items():
        said = {}
        for name in ("upset", *ITEMS):
            found = conv["found"][name]
            score = found.get("whole") if method == "whole" else found["score"]
            if method == "whole" and score is None:
                said[name] = "missing"
                continue
            cut, band, _ = rules[name]
            said[name] = _read(score, cut, band)
        item = {"promise": said["promise"], "leak_other": said["leak_other"]}
        if "missing" in said.values():
            out[cid] = {k: "missing" for k in ("upset", *ITEMS)}
            continue
        soothed, upset = said["soothe"], said["upset"]
        if upset is False:
            item["soothe"] = False                       # N/A: never a hit
        elif soothed is True:
            item["soothe"] = False                       # soothed: clear
        elif upset is None or soothed is None:
            item["soothe"] = None                        # could be a hit: undecided
        else:
            item["soothe"] = True
        item["upset"] = upset
        out[cid] = {k: ("undecided" if v is None else v) for k, v in item.items()}
    return out


def scores(records: dict, said: dict) -> dict[str, dict]:
    table = {}
    for name in (*ITEMS, "upset"):
        c = Figures()
        for cid, conv in records["conversations"].items():
            got = said[cid][name]
            if got != "missing":
                c.add(None if got == "undecided" else bool(got), bool(conv["truth"][name]))
        table[name] = {"n": c.n, "recall": c.recall, "precision": c.precision, "undecided": c.undecided_share,
                       "silent_pass": c.silent, "counts": c}
    return table


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.2f}"


def costs(records: dict, method: str) -> dict:
    convs = list(records["conversations"].values())
    keys = ("upset", *ITEMS)
    field = "whole_usage" if method == "whole" else "usage"
    calls = sum(c["found"][k].get(field, {}).get("calls", 0) for c in convs for k in keys)
    sent = sum(c["found"][k].get(field, {}).get("prompt_tokens", 0) for c in convs for k in keys)
    reused = sum(c["found"][k].get(field, {}).get("cached_prompt_tokens", 0) for c in convs for k in keys)
    n = len(convs) or 1
    return {"calls": calls / n, "sent": sent / n, "processed": (sent - reused) / n,
            "wall": sum(c["wall_s"] for c in convs) / n, "load": sum(c["load"] for c in convs) / n}


def print_table(records: dict, methods: list[str]) -> None:
    print(f"split {records['split']}, card {records['card']}, {len(records['conversations'])} conversations")
    for method in methods:
        said = decisions(records, method)
        table = scores(records, said)
        notes = "; ".join(f"{n}: {rule_for(method, records, n)[2]}" for n in ("upset", *ITEMS))
        cost = costs(records, method)
        print(f"\n## {method}   ({notes})")
        print(f"per conversation: {cost['calls']:.1f} calls, {cost['sent']:.0f} prompt tokens sent, "
              f"{cost['processed']:.0f} processed; collection wall {cost['wall']:.1f} s/conversation for every "
              f"method's calls together (load {cost['load']:.1f} on 2 cores)")
        print("| item | n | recall | precision | undecided | silent passes | tp/fp/fn/tn/und |")
        print("|---|---|---|---|---|---|---|")
        for name, row in table.items():
            c = row["counts"]
            print(f"| {name} | {row['n']} | {_fmt(row['recall'])} | {_fmt(row['precision'])} | "
                  f"{_fmt(row['undecided'])} | {row['silent_pass']} | {c.tp}/{c.fp}/{c.fn}/{c.tn}/{c.undecided} |")


async def run_card(split: str, load_split, truth, out: str | None = None) -> None:
    """The shipped card through score_scorecard (what `rubriceval run --scorecards` does), per item; every
    conversation's outcomes are appended to `out` as it is scored (a run stopped early still reports what it did:
    `--method card --report-only`)."""
    import json
    from pathlib import Path

    from rubriceval.judge.config import load_judge_config
    from rubriceval.local.backends import make_judge
    from rubriceval.scorecard.loader import load_scorecard
    from rubriceval.scorecard.score import score_scorecard

    card = load_scorecard(Path(__file__).resolve().parents[2] / "scorecards" / "ecommerce_qa_zh.yaml")
    path = Path(out or f"out/contact_centre_{split}_card.jsonl")
    done = {json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()} if path.exists() else set()
    judge = make_judge(load_judge_config(), announce=True)
    try:
        for row, sample in load_split(split):
            if row["id"] in done:
                continue
            started, load = time.perf_counter(), os.getloadavg()[0]
            verdict = await score_scorecard(card, sample, judge)
            record = {"id": row["id"], "card": card.version_tag, "truth": truth(row),
                      "wall_s": round(time.perf_counter() - started, 2), "load": round((load + os.getloadavg()[0]) / 2, 2),
                      "usage": verdict.usage.model_dump(), "total": verdict.totals.total,
                      "outcomes": {i: {"status": verdict.outcome(i).status, "decided_by": verdict.outcome(i).decided_by,
                                       "p_yes": verdict.outcome(i).p_yes, "reason": verdict.outcome(i).reason[:200]}
                                   for i in ITEMS}}
            with path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
            print(f"{row['id']}: " + ", ".join(f"{i}={o['status']}({o['p_yes']})" for i, o in record["outcomes"].items())
                  + f"  {record['wall_s']} s, load {record['load']}", file=sys.stderr)
    finally:
        await judge.close()
    report_card(path)


def report_card(path) -> None:
    """The card's per-item table from the recorded conversations."""
    import json

    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    counts = {i: Figures() for i in ITEMS}
    how: Counter = Counter()
    for record in records:
        for item, outcome in record["outcomes"].items():
            how[(item, outcome["status"], outcome["decided_by"])] += 1
            decided = None if outcome["status"] == "undecided" else outcome["status"] == "hit"
            counts[item].add(decided, bool(record["truth"][item]))
    n = max(1, len(records))
    usage = Counter()
    for record in records:
        usage.update({k: v for k, v in record["usage"].items() if isinstance(v, (int, float))})
    wall = sum(r["wall_s"] for r in records) / n
    load = sum(r["load"] for r in records) / n
    print(f"\n## card (score_scorecard, {records[0]['card'] if records else '?'}): {len(records)} conversations, "
          f"{usage['calls'] / n:.1f} calls ({usage['cache_hits']} cached), {usage['prompt_tokens'] / n:.0f} prompt "
          f"tokens sent, {(usage['prompt_tokens'] - usage['cached_prompt_tokens']) / n:.0f} processed per "
          f"conversation; wall {wall:.1f} s/conversation (mean load {load:.1f} on 2 cores)")
    print("| item | n | recall | precision | undecided | silent passes | tp/fp/fn/tn/und (und. true) |")
    print("|---|---|---|---|---|---|---|")
    for item, c in counts.items():
        print(f"| {item} | {c.n} | {_fmt(c.recall)} | {_fmt(c.precision)} | {_fmt(c.undecided_share)} | "
              f"{c.silent} | {c.tp}/{c.fp}/{c.fn}/{c.tn}/{c.undecided} ({c.undecided_true}) |")
    print("decided by: " + ", ".join(f"{i} {s} {d}: {k}" for (i, s, d), k in sorted(how.items(), key=str)))
