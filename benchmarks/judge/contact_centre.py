"""Issue 39's benchmark: the shipped card's judgement items (承诺了知识库没有的政策, 泄露他人信息, 未安抚情绪 and its
applies_when question) on the labelled contact-centre set (benchmarks/judge/data/contact_centre_zh.jsonl), per
item and method: recall, precision (on the decided conversations), undecided share, silent passes (a true violation
decided clear or N/A), calls, prompt tokens sent and processed (sent − reused from the server's prefix cache), and
wall per conversation. Not a timed test: a rerunnable measurement (every call through the judge cache, so a rerun
is free and prints the same table).

    python -m benchmarks.judge.contact_centre --split dev                     # collect (the judge) + every method
    python -m benchmarks.judge.contact_centre --split dev --method card       # the card end to end (score_scorecard)
    python -m benchmarks.judge.contact_centre --split heldout --method card   # ONCE, with the frozen method

Methods (the item's question asked of the embedded judge; contact_centre_methods.py reads them):
  whole         (a) the whole-conversation question, p(yes) ≥ 0.5 (the card before issue 39)
  turns         (b) decomposed over the turns of the party the question names, evidence gate, max p(yes) ≥ 0.5
  turns_cf      (c) + a content-free anchor: cut-off between the anchor's p(yes) and 1 (label-free)
  turns_batch   (c) + batch calibration: cut-off at the mean of the run's own p(yes) (label-free)
  turns_examples (d) + the author's examples as anchors: cut-off and undecided band between them (the shipped one)
  card          the shipped card through rubriceval.scorecard.score.score_scorecard (what a run does)
Tune on `dev` only; `heldout` is scored once, at the end, with the frozen method.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "judge" / "data" / "contact_centre_zh.jsonl"
# The fresh held-out set (40 conversations, labels committed before any run): scored once, with the method frozen.
DATA_V2 = ROOT / "benchmarks" / "judge" / "data" / "contact_centre_zh_v2.jsonl"
# The third fresh set (48 conversations, issue 39 round 3), written while round 3 was built on the two spent ones.
DATA_V3 = ROOT / "benchmarks" / "judge" / "data" / "contact_centre_zh_v3.jsonl"
# The fourth fresh set (48 conversations, issue 39 round 4), written while round 4 was built on the three spent ones.
DATA_V4 = ROOT / "benchmarks" / "judge" / "data" / "contact_centre_zh_v4.jsonl"
# The fifth (48 conversations, round 5), written while round 4 was scored and round 5 refitted on four writers.
DATA_V5 = ROOT / "benchmarks" / "judge" / "data" / "contact_centre_zh_v5.jsonl"
# The sixth (48 conversations, round 6), written while round 5 was scored and round 6 fitted on five writers.
DATA_V6 = ROOT / "benchmarks" / "judge" / "data" / "contact_centre_zh_v6.jsonl"
FRESH = {"heldout_v2": DATA_V2, "heldout_v3": DATA_V3, "heldout_v4": DATA_V4, "heldout_v5": DATA_V5,
         "heldout_v6": DATA_V6}
CARD = ROOT / "scorecards" / "ecommerce_qa_zh.yaml"
ITEMS = ("promise", "leak_other", "soothe")
SPEAKER_ROLE = {"用户": "user", "机器人": "bot", "客服": "assistant", "系统": "system"}


def load_split(split: str) -> list[tuple[dict, object]]:
    """(row, sample) per conversation of the split, the bot mapped to `bot` (a card for human agents)."""
    from rubriceval.data.io import read_dataset

    data = FRESH.get(split, DATA)
    rows = {r["id"]: r for r in (json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()
                                  if line.strip())}
    out = []
    for sample in read_dataset(data):
        row = rows[sample.id]
        if split != "all" and row["split"] != split:
            continue
        conversation = sample.conversation
        turns = [t.model_copy(update={"role": SPEAKER_ROLE.get(t.speaker or "", t.role)}) for t in conversation.turns]
        out.append((row, sample.model_copy(update={"conversation": conversation.model_copy(update={"turns": turns})})))
    return out


def truth(row: dict) -> dict[str, bool | None]:
    """The labels the items are scored against: over_promise, leak, soothe hit (None: a calm customer, N/A), and
    whether the customer was upset (the applies_when question)."""
    card = row["label"]["card"]
    return {"promise": bool(card["promise"]), "leak_other": bool(card["leak_other"]), "soothe": card["soothe"],
            "upset": row["label"]["customer_upset"]["value"] == "yes"}


def load() -> float:
    return os.getloadavg()[0]


async def collect(split: str, out: Path, whole: bool) -> dict:
    """Every item's judgement on every conversation of the split (per turn, and whole when asked), with costs."""
    from rubriceval.judge.config import load_judge_config
    from rubriceval.local.backends import make_judge
    from rubriceval.rubric.calibration import ItemExample
    from rubriceval.scorecard.judged import applies_spec, item_spec, judge_question
    from rubriceval.scorecard.loader import load_scorecard
    from rubriceval.scorecard.questions import applies_question, item_question
    from rubriceval.scoring.judgement import turn_checker
    from rubriceval.scoring.judgement.anchors import CONTENT_FREE, anchor_p_yes
    from rubriceval.scoring.judgement.decide import decomposes
    from rubriceval.scoring.judgement.turns import TurnAsker

    # The judge's answers as round 3 asked them (every turn of a mood kind, a gate kind's turns with evidence), with
    # no turn checker deciding which turns are asked: benchmarks/judge/checker_fit.py fits the checkers on these
    # records, with and without the judge, so every set's records must hold the same questions.
    turn_checker.shipped = lambda: ()
    card = load_scorecard(CARD)
    knowledge = card.knowledge_base()
    items = {i.id: i for i in card.items}
    judge = make_judge(load_judge_config(), announce=True)
    records: dict = {"split": split, "card": card.version_tag, "conversations": {}, "anchors": {}}
    specs = {"upset": (applies_spec(card, items["soothe"]), applies_question(items["soothe"]))}
    specs.update({i: (item_spec(card, items[i]), item_question(items[i])) for i in ITEMS})
    try:
        for name, (spec, _) in specs.items():          # the anchors: content-free turn and the examples, per item
            role = decomposes(spec, load_split(split)[0][1].conversation, judge) or "assistant"
            passages = knowledge.passages if spec.sees_knowledge and knowledge else []
            anchors = [*spec.examples, ItemExample(text=CONTENT_FREE["zh"], answer="no", role=role)]
            records["anchors"][name] = [(a.answer, a.text == CONTENT_FREE["zh"],
                                         (await anchor_p_yes(spec.question, a, role, judge, "zh", passages))[0])
                                        for a in anchors]
        for row, sample in load_split(split):
            started, at_load = time.perf_counter(), load()
            asker = TurnAsker(judge, sample.conversation, "zh")
            found = {}
            for name, (spec, question) in specs.items():
                decided = await judge_question(card, spec.model_copy(update={"examples": [], "calibration": []}),
                                               question, sample, judge, knowledge, asker)
                found[name] = {"turns": [t.model_dump() for t in decided.turns], "score": decided.score,
                               "status": decided.status, "kind": decided.evidence_kind,
                               "usage": decided.usage.model_dump()}
                if whole:
                    alone = await judge_question(card, spec, question, sample, judge, knowledge, None)
                    found[name]["whole"] = alone.score
                    found[name]["whole_usage"] = alone.usage.model_dump()
            records["conversations"][row["id"]] = {"found": found, "truth": truth(row),
                                                   "wall_s": round(time.perf_counter() - started, 2),
                                                   "load": round((at_load + load()) / 2, 2)}
            u = asker.usage
            print(f"{row['id']}: {records['conversations'][row['id']]['wall_s']} s (load {load():.1f}), per-turn "
                  f"{u.calls} calls {u.prompt_tokens} tok sent {u.cached_prompt_tokens} reused", file=sys.stderr)
            out.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    finally:
        await judge.close()
    return records


def main(argv: list[str] | None = None) -> int:
    from benchmarks.judge.contact_centre_methods import METHODS, print_table, run_card

    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge.contact_centre", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="dev", choices=("dev", "heldout", "all", *FRESH),
                        help="all: both halves (round 2 tunes on all 56; the held-out half is spent); heldout_v2: "
                             "the fresh set contact_centre_zh_v2.jsonl (spent by round 2); heldout_v3: "
                             "contact_centre_zh_v3.jsonl (spent by round 3); heldout_v4: contact_centre_zh_v4.jsonl "
                             "(spent by round 4); heldout_v5: contact_centre_zh_v5.jsonl (spent by round 5); "
                             "heldout_v6: contact_centre_zh_v6.jsonl, scored ONCE with round 6 frozen")
    parser.add_argument("--method", action="append", choices=(*METHODS, "card"),
                        help="methods to report (default: every offline method; 'card' runs score_scorecard)")
    parser.add_argument("--whole", action="store_true", help="also ask every question whole (method a; slow)")
    parser.add_argument("--out", default=None, help="collected answers (default out/contact_centre_<split>.json)")
    parser.add_argument("--report-only", action="store_true", help="the card's table from its recorded run")
    args = parser.parse_args(argv)
    out = Path(args.out or f"out/contact_centre_{args.split}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    methods = args.method or list(METHODS)
    if args.report_only:
        from benchmarks.judge.contact_centre_methods import report_card

        report_card(Path(f"out/contact_centre_{args.split}_card.jsonl"))
        return 0
    if any(m != "card" for m in methods):
        records = asyncio.run(collect(args.split, out, args.whole))
        print_table(records, [m for m in methods if m != "card"])
    if "card" in methods:
        asyncio.run(run_card(args.split, load_split, truth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
