"""Fit rubriceval's shipped calibration of each evidence kind on the embedded judge (issue 39, round 3).

The shipped card's four judgement questions (承诺了知识库没有的政策 → the promise kind, 泄露他人信息 → personal data,
未安抚情绪's applies question → upset, its own question → soothing) were asked of every turn of the two spent
labelled contact-centre sets (`python -m benchmarks.judge.contact_centre --split all` and `--split heldout_v2`,
which record each turn's evidence and p(yes)). For each kind this script replays the package's own decision
(scoring/judgement/decide.decide_findings: the rules, the fatal band, the upset cues) on those recorded turns with
every candidate undecided band, and keeps the band that decides best within an undecided share:

- the candidates are bands [low, high] on the item's score (the highest p(yes) over the turns asked) between
  quantiles of the recorded scores; inside the band the item is undecided, above it yes, below it no;
- a band is admissible when at most MAX_UNDECIDED of the conversations fall in it;
- the best one has the fewest silent passes (a true violation decided clear: never a silent pass comes first),
  then the highest min(recall, precision) of the violation on the decided conversations — on the worse
  of the two sets when fitted on both (each set is another writer's: a band must hold on each) —, then the fewest
  undecided.

Cross-set check first: fit on the first set and read the second, and the other way round — the number that says
whether a fit transfers to conversations it has not seen (both sets are spent, so neither is a held-out
measurement; the fresh set v3 is). `--write` fits on both sets together and writes
rubriceval/scoring/judgement/kind_calibrations.yaml for the judge that answered.

    python -m benchmarks.judge.kind_fit                       # the cross-set table
    python -m benchmarks.judge.kind_fit --write               # + fit on both, write the shipped file
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.judge.item_figures import Figures as ItemFigures
from rubriceval.data.conversation import Conversation

MAX_UNDECIDED = 0.15            # of the conversations: leaves room under the acceptance's 20 % on fresh data
GRID = 40                       # candidate band edges: quantiles of the recorded scores
FILES = {"v1": Path("out/contact_centre_all.json"), "v2": Path("out/contact_centre_heldout_v2.json")}


@dataclass(frozen=True)
class Case:
    """One conversation's recorded findings for one item, and the label the decision is read against."""
    id: str
    name: str                   # the record's item name: upset, promise, leak_other, soothe
    findings: list
    violation: bool             # the label: the item is violated (promise made, leak, upset, not soothed)
    conversation: Conversation


class Figures(ItemFigures):
    """The item's figures, with the row the fit's table prints."""

    def row(self) -> str:
        def f(x: float | None) -> str:
            return "–" if x is None else f"{x:.2f}"
        return (f"R {f(self.recall)} P {f(self.precision)} und {self.undecided / max(self.n, 1):.0%} "
                f"silent {self.silent} ({self.tp}/{self.fp}/{self.fn}/{self.tn}/{self.undecided})")


def specs():
    """record name → (spec, the answer that is the violation) for the shipped card's four questions."""
    from benchmarks.judge.contact_centre import CARD
    from rubriceval.scorecard.judged import applies_spec, item_spec
    from rubriceval.scorecard.loader import load_scorecard

    card = load_scorecard(CARD)
    items = {i.id: i for i in card.items}
    return {"upset": (applies_spec(card, items["soothe"]), True), "promise": (item_spec(card, items["promise"]), True),
            "leak_other": (item_spec(card, items["leak_other"]), True), "soothe": (item_spec(card, items["soothe"]), False)}


def cases(path: Path, split: str, every: bool = False) -> dict[str, list[Case]]:
    """The recorded findings per item; 未安抚情绪's own question only on conversations labelled upset (`every`: on
    all, its label then None for a calm customer — the card-level replay asks it wherever the upset question says
    yes)."""
    from benchmarks.judge.contact_centre import load_split
    from rubriceval.scoring.judgement.decide import TurnFinding

    records = json.loads(path.read_text(encoding="utf-8"))["conversations"]
    samples = {row["id"]: sample for row, sample in load_split(split)}
    out: dict[str, list[Case]] = {}
    for cid, record in records.items():
        truth = record["truth"]
        labels = {"upset": truth["upset"], "promise": truth["promise"], "leak_other": truth["leak_other"],
                  "soothe": truth["soothe"]}
        for name, found in record["found"].items():
            if labels.get(name) is None and not every:
                continue                                  # a calm customer: whether soothed is not labelled
            findings = [TurnFinding.model_validate(t) for t in found["turns"]]
            out.setdefault(name, []).append(Case(cid, name, findings, labels[name], samples[cid].conversation))
    return out


def card_soothe(upset: list[Case], soothe: list[Case], specs_, upset_rule, soothe_rule) -> Figures:
    """未安抚情绪 as the card decides it, replayed: not applicable unless the upset question says yes; a hit when it
    does and the soothing question says no; undecided when either is (an undecided applies question leaves a
    would-be hit undecided). Read against the card label (hit / clear / N/A for a calm customer)."""
    by_id = {c.id: c for c in soothe}
    out = Figures()
    for case in upset:
        other = by_id[case.id]
        up, _ = judged(case, specs_["upset"][0], True, upset_rule)
        unsoothed, _ = judged(other, specs_["soothe"][0], False, soothe_rule) if up is not False else (False, False)
        hit = None if unsoothed is None or (up is None and unsoothed) else bool(up and unsoothed)
        out.add(hit, bool(other.violation))                # labelled: upset and not soothed
    return out


def judged(case: Case, spec, violation_answer: bool, calibration) -> tuple[bool | None, bool]:
    """(violated: True/False, None undecided) by the package's decision on the recorded turns, and whether it was
    decided by rule."""
    from rubriceval.scoring.judgement.decide import decide_findings, item_kind
    from rubriceval.scoring.judgement.roles import question_role

    role = question_role(spec.question, spec.lang) or "assistant"
    found = decide_findings(spec, case.conversation, role, item_kind(spec, role), case.findings, calibration)
    if found.status != "decided":
        return None, False
    return found.answer == violation_answer, found.decided_by == "rule"


def figures(items: list[Case], spec, violation_answer: bool, calibration) -> Figures:
    out = Figures()
    for case in items:
        out.add(judged(case, spec, violation_answer, calibration)[0], bool(case.violation))
    return out


def calibration_for(low: float, high: float, judge: str, n: int, note: str, auc: float | None):
    from rubriceval.rubric.calibration import ItemCalibration

    def logit(p: float) -> float:
        p = min(max(p, 1e-4), 1 - 1e-4)
        return math.log(p / (1 - p))
    cutoff = 1 / (1 + math.exp(-(logit(low) + logit(high)) / 2))
    return ItemCalibration(judge=judge, cutoff=round(cutoff, 4), undecided=(round(low, 4), round(high, 4)),
                           method="labelled_set", n=n, score="turn_max", auc=None if auc is None else round(auc, 3),
                           fitted_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), note=note)


def item_scores(items: list[Case]) -> list[float]:
    return [max(p) for c in items if (p := [f.p_yes for f in c.findings if f.p_yes is not None])]


def best_band(items: list[Case], evaluate: Callable[[Any], list[Figures]], judge: str, note: str,
              auc: float | None, silent_first: bool = True):
    """The candidate band (between quantiles of the items' scores) whose figures on every set, as `evaluate` reads
    them, are best: at most MAX_UNDECIDED undecided per set; then the fewest silent passes; then the worse set's
    min(recall, precision); then the fewest undecided; then the narrowest. (calibration, figures) or (None, None)."""
    scores = sorted(set(item_scores(items)))
    if len(scores) < 2:
        return None, None
    edges = sorted({scores[min(len(scores) - 1, round(i * (len(scores) - 1) / GRID))] for i in range(GRID + 1)})
    mids = [(a + b) / 2 for a, b in zip(edges, edges[1:])]
    best = None
    for i, low in enumerate(mids):
        for high in mids[i:]:
            calibration = calibration_for(low, high, judge, len(items), note, auc)
            got = evaluate(calibration)
            if any(g.undecided > MAX_UNDECIDED * g.n for g in got):
                continue
            worst = min(min(g.recall or 0.0, g.precision or 0.0) for g in got)
            silent = sum(g.silent for g in got)
            key = (-silent if silent_first else 0, round(worst, 2), -sum(g.undecided for g in got), -(high - low))
            if best is None or key > best[0]:
                best = (key, calibration, got)
    return (best[1], best[2]) if best else (None, None)


def ranking(items: list[Case], violation_answer: bool) -> float | None:
    """AUC of the item's score for the question's yes (the violation when yes is the violation)."""
    from rubriceval.trust.fit_cutoff import auc

    scored = [(max(p), c.violation) for c in items if (p := [f.p_yes for f in c.findings if f.p_yes is not None])]
    return auc([x for x, _ in scored], [v == violation_answer for _, v in scored])


def fit(groups: list[list[Case]], spec, violation_answer: bool, judge: str, silent_first: bool, note: str):
    """The band that decides the item best on every group at once (module doc). Each group is one labelled set,
    written by a different hand: a band must hold on each, not on their pool only."""
    items = [c for group in groups for c in group]
    return best_band(items, lambda rule: [figures(g, spec, violation_answer, rule) for g in groups], judge, note,
                     ranking(items, violation_answer), silent_first)


def fit_applies(pairs, specs_, soothe_rule, judge: str):
    """The upset question's band that decides 未安抚情绪 (as card_soothe replays it) best on every set."""
    upset = [c for group, _ in pairs for c in group]
    rule, _ = best_band(upset, lambda rule: [card_soothe(u, so, specs_, rule, soothe_rule) for u, so in pairs],
                        judge, "fitted on both, for 未安抚情绪", ranking(upset, True))
    return rule


def main(argv: list[str] | None = None) -> int:
    from rubriceval.judge.embedded_model import embedded_judge_identity
    from rubriceval.scoring.judgement.decide import item_kind
    from rubriceval.scoring.judgement.kind_calibration import KindCalibration, write
    from rubriceval.scoring.judgement.roles import question_role

    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge.kind_fit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="fit on both sets and write the shipped file")
    parser.add_argument("--v1", type=Path, default=FILES["v1"], help="collected records of contact_centre_zh (all)")
    parser.add_argument("--v2", type=Path, default=FILES["v2"], help="collected records of contact_centre_zh_v2")
    args = parser.parse_args(argv)
    FILES.update({"v1": args.v1, "v2": args.v2})
    for path in FILES.values():
        if not path.exists():
            print(f"missing {path}: run python -m benchmarks.judge.contact_centre --split all / --split heldout_v2 "
                  f"first (they record every turn's p(yes))", file=sys.stderr)
            return 2
    judge = embedded_judge_identity()
    sets = {"v1": cases(FILES["v1"], "all"), "v2": cases(FILES["v2"], "heldout_v2")}
    every = {"v1": cases(FILES["v1"], "all", every=True), "v2": cases(FILES["v2"], "heldout_v2", every=True)}
    the_specs = specs()
    chosen: dict = {}
    entries: list[KindCalibration] = []
    print("| item | fit on | band | on v1 | on v2 |\n|---|---|---|---|---|")
    for name, (spec, violation_answer) in the_specs.items():
        role = question_role(spec.question, spec.lang) or "assistant"
        kind = item_kind(spec, role)
        # silent passes first for every item: "never a silent pass" comes before precision (issue 39)
        silent_first = True
        for fitted_on, groups in (("v1", [sets["v1"][name]]), ("v2", [sets["v2"][name]]),
                                  ("both", [sets["v1"][name], sets["v2"][name]])):
            calibration, _ = fit(groups, spec, violation_answer, judge, silent_first, f"fitted on {fitted_on}")
            if calibration is None:
                print(f"| {name} | {fitted_on} | (no admissible band) | | |")
                continue
            on = {s: figures(sets[s][name], spec, violation_answer, calibration).row() for s in ("v1", "v2")}
            print(f"| {name} | {fitted_on} | {calibration.undecided} | {on['v1']} | {on['v2']} |")
            if fitted_on == "both":
                chosen[name] = calibration
    if "upset" in chosen and "soothe" in chosen:
        # the upset band is for 未安抚情绪's sake: refit it on the card's item as replayed (a calm customer taken
        # for upset is asked the soothing question and, unsoothed, is a false hit)
        pairs = [(every[s]["upset"], every[s]["soothe"]) for s in ("v1", "v2")]
        refit = fit_applies(pairs, the_specs, chosen["soothe"], judge)
        if refit is not None:
            chosen["upset"] = refit
            print(f"| upset (refit on 未安抚情绪) | both | {refit.undecided} | "
                  f"{figures(sets['v1']['upset'], the_specs['upset'][0], True, refit).row()} | "
                  f"{figures(sets['v2']['upset'], the_specs['upset'][0], True, refit).row()} |")
        on = {s: card_soothe(every[s]["upset"], every[s]["soothe"], the_specs, chosen["upset"], chosen["soothe"]).row()
              for s in ("v1", "v2")}
        print(f"| 未安抚情绪 (the card's item: both fits) | both | | {on['v1']} | {on['v2']} |")
    for name, calibration in chosen.items():
        spec = the_specs[name][0]
        role = question_role(spec.question, spec.lang) or "assistant"
        kind = item_kind(spec, role)
        wording = kind.wording(spec.lang, sees_policy=spec.sees_knowledge) if kind is not None else None
        if kind is None or wording is None:
            continue
        n1, n2 = len(sets["v1"][name]), len(sets["v2"][name])
        calibration = calibration.model_copy(update={
            "note": f"rubriceval's fit on {n1 + n2} labelled conversations (contact_centre_zh {n1}, _v2 {n2}; "
                    f"benchmarks/judge/kind_fit.py); cross-set figures in docs/benchmarks.md"})
        entries.append(KindCalibration(kind=kind.name, lang=spec.lang, question=wording, calibration=calibration))
    if args.write:
        write(entries)
        print(f"wrote {len(entries)} kind calibrations for {judge}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
