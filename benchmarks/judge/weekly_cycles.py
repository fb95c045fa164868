"""Issue 44's acceptance simulation: four weekly cycles of judge → review a sample → refit → judge the next week,
on the labelled contact-centre set and the soothing sets, through the product's own paths.

Data: `contact_centre_zh.jsonl` (its `label.card` = the QA lead's decisions on the card's three judgement items:
promise, leak_other — true = hit — and soothe, null = N/A for a calm customer) and the soothing sets
`conversations_zh_soothing_v2/v3.jsonl`, which label only how each agent turn answered an upset customer (1–5): for
the card's 未安抚情绪 (soothe) a conversation counts as soothed — the item clear — when some agent turn is labelled 2
(an apology or reassurance alone), 4 or 5 (the feeling answered), and as a hit when every agent turn is 1 (no answer
to the feeling) or 3 (information without the feeling, the sets' README convention); their other items are not
labelled and never reviewed or measured. The sets, one after the other and each in id order, are dealt into four weeks
(i mod 4): 28 conversations a week.

The card: the shipped `scorecards/ecommerce_qa_zh.yaml` (and its policy file) copied into the work folder, with the
target `auto_accept: {agreement: 0.9, confidence: 0.95}` written in and — unless `--keep-resolve` — its unlabelled
judge question `resolve` removed (nothing could review it; it would only cost calls), both with the studio's
line-preserving edit. Each cycle:

1. judge the week: a run in the work folder's run store, scored by the run's scorecard stage
   (run/scorecard_stage.score_run_scorecards → scorecard/score.py, with the judge's calibration and the selective
   acceptance fitted from every review made before the run: trust/selective_reviews.py);
2. measure it against the labels: per labelled judgement item, the machine's decisions (hit, clear, undecided), those
   accepted automatically (coverage), the agreement of the accepted ones with the labels, the pending count;
3. review a sample risk-first, as the queue would (audit/review_priority.py): conversations with an item awaiting
   review (undecided or pending) first, then those among each judgement item's highest p(yes) of a hit, the riskiest
   first, `--reviews` conversations a week; the simulated reviewer is the labels (confirm, reject, missed, clear, na
   — `scorecard review`'s decisions, stored by audit/scorecard_reviews.ReviewStore);
4. refit: `rubriceval scorecard fit`'s path over every reviewed week (trust/fit_reviews.py), the proposal saved as
   the card's next version when a cut-off beats the current one on held-out reviews
   (studio/calibration_proposal.py) — the next week is judged with it.

Run: `nice -n 10 python -m benchmarks.judge.weekly_cycles` (the embedded judge; `--judge scripted` for a quick
check with a scripted under-confident judge answering from the labels). The judge cache makes a rerun free.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.data.io import read_dataset
from rubriceval.data.sample import Sample

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
SETS = {"contact_centre": DATA / "contact_centre_zh.jsonl", "soothing_v2": DATA / "conversations_zh_soothing_v2.jsonl",
        "soothing_v3": DATA / "conversations_zh_soothing_v3.jsonl"}
CARD = ROOT / "scorecards" / "ecommerce_qa_zh.yaml"
POLICIES = ROOT / "scorecards" / "ecommerce_policies_zh.md"
CARD_ID = "ecommerce_qa_zh"
ITEMS = ("promise", "leak_other", "soothe")          # the labelled judgement items
WEEKS = 4
TARGET = {"agreement": 0.9, "confidence": 0.95}
SOOTHED_LEVELS = {2, 4, 5}

Label = bool | None                                  # hit / clear / N/A


class ItemWeek(BaseModel):
    item: str
    decisions: int = 0            # labelled conversations where the machine decided (hit, clear) or could not
    accepted: int = 0             # decisions accepted automatically
    agreed: int = 0               # accepted decisions that agree with the label
    pending: int = 0              # decisions waiting for a reviewer (pending review or undecided)
    undecided: int = 0
    na_on_hit: int = 0            # N/A by the machine where the label says hit (a miss no acceptance can see)
    agree_all: int = 0            # all decisions (accepted or not) that agree with the label
    guaranteed: float | None = None      # the region's Clopper–Pearson bound (trust/selective), when it accepts

    @property
    def coverage(self) -> float | None:
        return self.accepted / self.decisions if self.decisions else None

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.accepted if self.accepted else None


class Cycle(BaseModel):
    week: int
    run_id: str
    card_version: str
    conversations: int
    items: list[ItemWeek]
    reviewed: int = 0             # conversations reviewed after judging
    fit: list[str] = Field(default_factory=list)      # the refit's lines
    examples: list[str] = Field(default_factory=list)  # the reviewed-examples trials' lines (--try-examples)
    new_version: int | None = None
    calls: int = 0
    seconds: float = 0.0

    def total(self, field: str) -> int:
        return sum(getattr(i, field) for i in self.items)

    @property
    def coverage(self) -> float | None:
        return self.total("accepted") / self.total("decisions") if self.total("decisions") else None

    @property
    def agreement(self) -> float | None:
        return self.total("agreed") / self.total("accepted") if self.total("accepted") else None


# -- data ----------------------------------------------------------------------------------------------------------
def soothe_label(sample: Sample) -> Label:
    scores = [int(v) for v in (sample.metadata["label"].get("turn_scores") or {}).values()]
    return not any(level in SOOTHED_LEVELS for level in scores)


def labels_of(name: str, sample: Sample) -> dict[str, Label]:
    """item → the label (True hit, False clear, None N/A); an item the set does not label is absent."""
    if name == "contact_centre":
        return {item: sample.metadata["label"]["card"][item] for item in ITEMS}
    return {"soothe": soothe_label(sample)}


def weeks(data: dict[str, Path] | None = None) -> list[list[tuple[Sample, dict[str, Label]]]]:
    """The sets, one after the other and each in id order, dealt into four weeks like cards (i mod 4)."""
    out: list[list[tuple[Sample, dict[str, Label]]]] = [[] for _ in range(WEEKS)]
    every = [(sample, labels_of(name, sample)) for name, path in (data or SETS).items()
             for sample in sorted(read_dataset(str(path)), key=lambda s: s.id)]
    for index, dealt in enumerate(every):
        out[index % WEEKS].append(dealt)
    return out


def prepare_card(folder: Path, keep_resolve: bool = False, agreement: float = TARGET["agreement"]) -> Path:
    """The shipped card and its policies in `folder`, with the target and without `resolve` (module doc)."""
    from rubriceval.studio.card_form import yaml_without_item
    from rubriceval.studio.form import load_tree, written_back

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(POLICIES, folder / POLICIES.name)
    text = CARD.read_text(encoding="utf-8")
    tree = load_tree(text)
    from ruamel.yaml.comments import CommentedMap

    target = CommentedMap({**TARGET, "agreement": agreement})
    target.fa.set_flow_style()
    tree.insert(list(tree).index("trust") + 1 if "trust" in tree else len(tree), "auto_accept", target)
    text = written_back(text, tree)
    if not keep_resolve:
        text = yaml_without_item(text, "resolve")
    path = folder / CARD.name
    path.write_text(text, encoding="utf-8")
    return path


# -- judges --------------------------------------------------------------------------------------------------------
def scripted_judge(week_data: list[list[tuple[Sample, dict[str, Label]]]]) -> Any:
    """An under-confident scripted judge answering from the labels: the right answer's p(yes) 0.25–0.65 for yes,
    0.02–0.40 for no (they overlap), seeded by conversation and question; unlabelled questions 0.2–0.5."""
    from rubriceval.scorecard.loader import load_scorecard
    from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply

    card = load_scorecard(CARD)
    questions = {i.id: (i.question, i.hit_answer) for i in card.items if i.question}
    firsts = {}
    for week in week_data:
        for sample, labels in week:
            turns = sample.conversation.turns if sample.conversation is not None else []
            first = next(t.content for t in turns if t.role == "user")
            firsts[first[:40]] = labels

    def reply(request: Any) -> Any:
        text = request[-1]["content"]
        labels = next((v for k, v in firsts.items() if k in text), {})
        item = next((i for i, (q, _) in questions.items() if q and q in text), None)
        rng = random.Random(hashlib.sha256(text.encode()).hexdigest())
        label = labels.get(item) if item else None
        if item is None or item not in labels or label is None:
            return yes_no_reply(rng.uniform(0.2, 0.5))
        yes = label == questions[item][1]           # the question's right answer (hit_on)
        return yes_no_reply(rng.uniform(0.25, 0.65) if yes else rng.uniform(0.02, 0.40))
    return ScriptedJudge(reply)


# -- one cycle -----------------------------------------------------------------------------------------------------
def measure(card: Any, verdicts: list[Any], labels: dict[str, dict[str, Label]], regions: dict[str, Any]
            ) -> list[ItemWeek]:
    rows = {item: ItemWeek(item=item) for item in ITEMS}
    for verdict in verdicts:
        for outcome in verdict.outcomes:
            if outcome.item not in rows or outcome.item not in labels[verdict.sample_id]:
                continue
            row, label = rows[outcome.item], labels[verdict.sample_id][outcome.item]
            if outcome.status == "not_applicable":
                row.na_on_hit += label is True
                continue
            if outcome.status not in ("hit", "clear", "undecided"):
                continue
            row.decisions += 1
            right = (outcome.status == "hit") == bool(label)
            if outcome.awaiting_review:
                row.pending += 1
                row.undecided += outcome.status == "undecided"
            else:
                row.accepted += 1
                row.agreed += right
            row.agree_all += right and outcome.status != "undecided"
    for item, row in rows.items():
        region = regions.get(item)
        row.guaranteed = region.lower_bound if region is not None and region.accepts != "none" else None
    return list(rows.values())


def review_order(card: Any, verdicts: list[Any]) -> list[str]:
    """Risk-first, as the queue adds them (audit/review_priority.py): awaiting review first, then the top p(yes) of a
    hit of each judgement item; within each, the highest p(yes) of a hit over the card's judgement items first."""
    from rubriceval.audit.review_priority import awaiting_reasons, p_hit, top_p_yes

    items = {i.id: i for i in card.items}
    tops = top_p_yes(card, verdicts, {}, k=len(verdicts))

    def risk(verdict: Any) -> tuple[int, float, str]:
        ps = [p_hit(items[o.item], o) for o in verdict.outcomes if o.item in ITEMS and o.item in items]
        top = max((p for p in ps if p is not None), default=0.0)
        return (0 if awaiting_reasons(verdict) else 1 if verdict.sample_id in tops else 2, -top, verdict.sample_id)
    return [v.sample_id for v in sorted(verdicts, key=risk)]


def decision(outcome: Any, label: Label) -> str | None:
    """What the simulated reviewer records for one item (`scorecard review`'s decisions; None: nothing to record).
    An agreed clear is recorded too (`clear`), as a card review task records every item."""
    if label is None:
        return None if outcome.status == "not_applicable" else "na"
    if outcome.status == "hit":
        return "confirm" if label else "reject"
    return "missed" if label else "clear"


def review(runs: Any, run_id: str, verdicts: list[Any], labels: dict[str, dict[str, Label]], order: list[str],
           budget: int) -> int:
    """The first `budget` conversations of `order` reviewed on every labelled item; how many were."""
    from rubriceval.audit.scorecard_reviews import ReviewStore

    store, by_id = ReviewStore(runs), {v.sample_id: v for v in verdicts}
    reviewed = [sample_id for sample_id in order if labels[sample_id]][:budget]
    for sample_id in reviewed:
        verdict, said = by_id[sample_id], labels[sample_id]
        for outcome in verdict.outcomes:
            if outcome.item in said and outcome.status != "unscored":
                chosen = decision(outcome, said[outcome.item])
                if chosen is not None:
                    store.add(run_id, verdict, outcome.item, chosen, reviewer="labels")  # type: ignore[arg-type]
    return len(reviewed)


async def run_cycles(judge: Any, work: Path, *, reviews_per_week: int = 14, keep_resolve: bool = False,
                     weeks_to_run: int = WEEKS, concurrency: int = 2, log: Any = sys.stderr,
                     try_examples: bool = False, out: Path | None = None,
                     agreement: float = TARGET["agreement"]) -> list[Cycle]:
    from rubriceval.local.backends import public_judge_config
    from rubriceval.run.scorecard_stage import score_run_scorecards
    from rubriceval.scorecard.loader import load_scorecard
    from rubriceval.store.runs import RunConfig, RunStore
    from rubriceval.store.scorecards import ScorecardStore
    from rubriceval.studio.calibration_proposal import accept_proposal, current_card, propose_calibration
    from rubriceval.trust.fit_examples import examples_rules
    from rubriceval.trust.fit_reviews import fit_card, load_reviewed
    from rubriceval.trust.selective_reviews import regions_for_run

    if work.exists():
        shutil.rmtree(work)
    folder = work / "scorecards"
    card_path = prepare_card(folder, keep_resolve, agreement)
    runs = RunStore(work / "runs.sqlite")
    data = weeks()
    cycles: list[Cycle] = []
    run_ids: list[str] = []
    try:
        for number, week in enumerate(data[:weeks_to_run], start=1):
            card = load_scorecard(card_path)
            samples = [s for s, _ in week]
            labels = {s.id: lab for s, lab in week}
            run_id = runs.create_run(RunConfig(judge=public_judge_config(judge.config)), samples, [],
                                     name=f"week{number}")
            ScorecardStore(runs).register(run_id, [card])
            calls, started = judge.stats.calls, time.perf_counter()
            await score_run_scorecards(runs, run_id, [card], judge, concurrency=concurrency)
            verdicts = ScorecardStore(runs).verdicts(run_id, card.id)
            cycle = Cycle(week=number, run_id=run_id, card_version=card.version_tag, conversations=len(samples),
                          items=measure(card, verdicts, labels, regions_for_run(runs, run_id, card)),
                          calls=judge.stats.calls - calls, seconds=round(time.perf_counter() - started, 1))
            cycle.reviewed = review(runs, run_id, verdicts, labels, review_order(card, verdicts), reviews_per_week)
            run_ids.append(run_id)
            reviewed = load_reviewed(runs.path, run_ids, card.id)
            now = current_card(folder, card.id)
            made = await examples_rules(now or card, judge)       # the rule an item's examples make (cached calls)
            fit = fit_card(reviewed.card, reviewed.judge, reviewed.verdicts, reviewed.decided, runs=run_ids,
                           current=now, made=made)
            cycle.fit = [f.line() for f in fit.items]
            last = number == min(weeks_to_run, len(data))          # trials cost calls: after the last refit only
            helping = (await _examples(cycle, now or card, reviewed, fit, runs, judge)
                       if try_examples and last else {})
            proposal = propose_calibration(folder, fit, helping)
            if proposal is not None:
                cycle.new_version = accept_proposal(folder, proposal, saved_by="weekly_cycles").version
            cycles.append(cycle)
            if log is not None:
                print(row_text(cycle), file=log, flush=True)
            if out is not None:                    # kept as each cycle ends: a stopped run keeps what it measured
                write_out(out, cycles, judge, agreement=agreement)
    finally:
        runs.close()
    return cycles


async def _examples(cycle: Cycle, card: Any, reviewed: Any, fit: Any, runs: Any, judge: Any) -> dict[str, Any]:
    """The reviewed-examples trial of every item (trust/fit_examples.py); the ones that help."""
    from rubriceval.trust.fit_examples import try_examples
    from rubriceval.trust.fit_reviews import reviewed_answers

    answers, _ = reviewed_answers(reviewed.card, reviewed.verdicts, reviewed.decided)
    samples = {f"{run_id}/{s.id}": s for run_id in reviewed.runs for s in runs.samples(run_id)}
    helping = {}
    for item in fit.items:
        trial = await try_examples(card, item, answers[item.item], samples, judge)
        cycle.examples.append(trial.line() if trial is not None else f"{item.item}: not tried (too few reviews, or "
                                                                      "no decisive turn to quote)")
        if trial is not None and trial.helps:
            helping[item.item] = trial.examples
    return helping


def write_out(out: Path, cycles: list[Cycle], judge: Any, command: str = "",
              agreement: float = TARGET["agreement"]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": command or "python -m benchmarks.judge.weekly_cycles " + " ".join(
        sys.argv[1:]), "judge": judge.config.describe() if hasattr(judge.config, "describe") else judge.config.model,
        "target": {**TARGET, "agreement": agreement}, "cycles": [c.model_dump() for c in cycles]},
        ensure_ascii=False, indent=1), encoding="utf-8")


# -- the report ----------------------------------------------------------------------------------------------------
def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def row_text(c: Cycle) -> str:
    per_item = "; ".join(f"{i.item} {i.accepted}/{i.decisions} acc, agree {_pct(i.agreement)}, pending {i.pending}"
                         for i in c.items)
    return (f"week {c.week} ({c.card_version}): coverage {_pct(c.coverage)}, agreement on accepted "
            f"{_pct(c.agreement)}, pending {c.total('pending')} — {per_item}; reviewed {c.reviewed}; "
            f"{'new version ' + str(c.new_version) if c.new_version else 'no new version'}; {c.calls} calls, "
            f"{c.seconds:.0f} s")


def table(cycles: list[Cycle], target: float = TARGET["agreement"]) -> str:
    lines = ["| cycle (week) | card version | decisions | accepted (coverage) | agreement on accepted vs labels | "
             "guaranteed (bound) | pending (undecided) | agreement of all decisions | reviewed | refit → |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cycles:
        bounds = [i.guaranteed for i in c.items if i.guaranteed is not None]
        verdict = ("nothing accepted yet" if not c.total("accepted") else
                   "meets the target" if (c.agreement or 0) >= target else "BELOW the target")
        decided = c.total("decisions") - c.total("undecided")
        lines.append(f"| {c.week} | {c.card_version} | {c.total('decisions')} | {c.total('accepted')} "
                     f"({_pct(c.coverage)}) | {c.total('agreed')}/{c.total('accepted')} ({_pct(c.agreement)}; "
                     f"{verdict}) | {f'{min(bounds):.2f}' if bounds else '–'} | {c.total('pending')} "
                     f"({c.total('undecided')}) | {c.total('agree_all')}/{decided} | {c.reviewed} | "
                     f"{('v' + str(c.new_version)) if c.new_version else 'kept'} |")
    return "\n".join(lines)


def item_table(cycles: list[Cycle]) -> str:
    lines = ["| cycle | item | decisions | accepted | agreement on accepted | pending | N/A where the label hits |",
             "|---|---|---|---|---|---|---|"]
    for c in cycles:
        for i in c.items:
            lines.append(f"| {c.week} | {i.item} | {i.decisions} | {i.accepted} ({_pct(i.coverage)}) | "
                         f"{i.agreed}/{i.accepted} ({_pct(i.agreement)}) | {i.pending} | {i.na_on_hit} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", choices=["embedded", "scripted"], default="embedded")
    p.add_argument("--config", help="judge YAML (default: the embedded judge)")
    p.add_argument("--reviews", type=int, default=14, help="conversations reviewed a week (of 28; default 14)")
    p.add_argument("--weeks", type=int, default=WEEKS)
    p.add_argument("--agreement", type=float, default=TARGET["agreement"],
                   help="the card's auto_accept agreement target (default 0.9; confidence stays 0.95)")
    p.add_argument("--keep-resolve", action="store_true", help="judge the card's unlabelled resolve question too")
    p.add_argument("--try-examples", action="store_true",
                   help="after the last refit, try each item's reviewed turns as its examples on its held-out "
                        "reviews (judge calls; every other answer comes from the judge cache on a rerun)")
    p.add_argument("--work", default="out/weekly_cycles", help="work folder (run store, card versions); replaced")
    p.add_argument("--out", default="out/weekly_cycles.json")
    args = p.parse_args(argv)
    if args.judge == "scripted":
        judge = scripted_judge(weeks())
    else:
        from rubriceval.judge.config import load_judge_config
        from rubriceval.local.backends import make_judge

        judge = make_judge(load_judge_config(args.config))
    cycles = asyncio.run(run_cycles(judge, Path(args.work), reviews_per_week=args.reviews,
                                    keep_resolve=args.keep_resolve, weeks_to_run=args.weeks,
                                    try_examples=args.try_examples, out=Path(args.out), agreement=args.agreement))
    print(table(cycles, args.agreement))
    print()
    print(item_table(cycles))
    for c in cycles:
        print(f"week {c.week} refit:")
        for line in [*c.fit, *c.examples]:
            print("  " + re.sub(r"\s+", " ", line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
