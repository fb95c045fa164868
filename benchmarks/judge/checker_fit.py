"""Fit rubriceval's turn checker of each evidence kind (issue 39, round 4; rubriceval/scoring/judgement/turn_checker.py).

Inputs: the spent labelled contact-centre sets, each written by a different hand (contact_centre_zh 56, _v2 40,
_v3 48 conversations — round 4 shipped the fit on these three —, _v4 48 — round 5 — and _v5 48 — round 6), and the
embedded judge's recorded per-turn answers on them (`python -m benchmarks.judge.contact_centre --split
all|heldout_v2|…|heldout_v5`, every answer from the judge cache).

For each kind (an upset customer, soothing, another person's data, a promise):

1. **The heads**: a logistic regression (scikit-learn, L2, balanced classes) per in-process embedder on its vector
   of each labelled turn of the kind's party (a variant reads one embedder, or all three summed: USE, e5 and the
   judge's hidden states) — a customer turn the labels name upset; an agent turn after the first
   upset turn that soothes; an agent turn that gives someone else's data; an agent turn with an over-promise.
2. **Cross-fitted by writer**: each set's turns are scored by a head fitted on the other sets only, so the stacker
   and the band below are fitted on scores of conversations the head never saw, as a new writer's will be.
3. **The stacker**: a logistic regression of the kind's label on [the highest head logit, the judge's highest
   per-turn p(yes) as a logit] — or on the head alone; the variant kept is the one whose band decides the
   left-out writer best (step 5).
4. **The band**: the cut-off and undecided band on the stacked probability, chosen as kind_fit.py chooses one —
   at most MAX_UNDECIDED undecided on each set, then the fewest silent passes, then the worse set's min(recall,
   precision) — replaying the package's own decision (decide.decide_findings, with its rules: someone else's
   data by rule, a third person's never cleared).
5. **Leave one writer out**: the whole fit on all sets but one, read on that one — the table printed, and what says
   whether a checker carries to a writer it has not seen. `--write` fits on every set and writes
   rubriceval/scoring/judgement/turn_checkers.yaml.

    python -m benchmarks.judge.checker_fit [--sets v1,v2,v3]    # the leave-one-writer-out table
    python -m benchmarks.judge.checker_fit --write              # + fit on every set, write the shipped file
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.judge.kind_fit import Case, Figures, cases, specs
from rubriceval.stats.log_odds import logit, sigmoid

RECORDS = {"v1": (Path("out/contact_centre_all.json"), "all"),
           "v2": (Path("out/contact_centre_heldout_v2.json"), "heldout_v2"),
           "v3": (Path("out/contact_centre_heldout_v3.json"), "heldout_v3"),
           "v4": (Path("out/contact_centre_heldout_v4.json"), "heldout_v4"),
           "v5": (Path("out/contact_centre_heldout_v5.json"), "heldout_v5")}
# record item → (evidence kind, whether the kind's yes is the violation)
ITEMS = {"soothe": ("soothing", False), "upset": ("upset", True), "leak_other": ("personal_data", True),
         "promise": ("promise", True)}
MAX_UNDECIDED = 0.15            # of each set: room under the acceptance's 20 % on fresh data
GRID = 30


@dataclass
class Labelled:
    """One set's conversations for one item: the recorded cases and each conversation's labelled turns."""
    cases: list[Case]
    positive_turns: dict[str, set[int]]          # conversation id → the turns labelled the kind's yes
    training_turns: dict[str, list[int]]         # conversation id → the party's turns a head learns from


def labelled_turns(row: dict, item: str) -> tuple[set[int], set[int] | None]:
    """(the turns labelled the kind's yes, the turns a head may learn from — None: every turn of the party)."""
    label = row["label"]
    if item == "upset":
        return set(label["customer_upset"]["turns"]), None
    if item == "leak_other":
        return set(label["leak"]["turns"]), None
    if item == "promise":
        return set(label["over_promise"]["turns"]), None
    upset = label["customer_upset"]["turns"]
    # soothing is labelled only after an upset turn: the agent turns before it, or of a calm customer, say nothing
    return set(label["soothed"]["turns"]), ({n for n in range(min(upset) + 1, 99)} if upset else set())


def load_sets(names: list[str]) -> dict[str, dict[str, Labelled]]:
    from benchmarks.judge.contact_centre import load_split

    out: dict[str, dict[str, Labelled]] = {}
    for name in names:
        path, split = RECORDS[name]
        rows = {row["id"]: row for row, _ in load_split(split)}
        per_item = cases(path, split, every=True)
        out[name] = {}
        for item in ITEMS:
            positive, training = {}, {}
            for case in per_item[item]:
                pos, allowed = labelled_turns(rows[case.id], item)
                positive[case.id] = pos
                training[case.id] = [f.turn for f in case.findings if allowed is None or f.turn in allowed]
            out[name][item] = Labelled(per_item[item], positive, training)
    return out


class Embeddings:
    """Every turn text's vector from one in-process embedder ("local" USE, "local-e5", "local-judge" the judge's hidden
    states), computed once and kept on disk under out/ by the embedder's identity (the judge's take ~0.5 s a turn)."""

    def __init__(self, model: str, cache_dir: Path | None = Path("out/checker_fit_vectors")) -> None:
        from rubriceval.scoring.judgement.turn_checker import embedder_identity

        self.model, self.identity = model, embedder_identity(model)
        self.vectors: dict[str, list[float]] = {}
        self.path = None
        if cache_dir is not None and self.identity is not None:
            import hashlib

            self.path = cache_dir / f"{hashlib.sha256(self.identity.encode()).hexdigest()[:16]}.json"
            if self.path.exists():
                self.vectors = json.loads(self.path.read_text(encoding="utf-8"))

    def of(self, texts: list[str]) -> list[list[float]]:
        from rubriceval.scoring.judgement.turn_checker import embed

        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, embed(self.model, missing)))
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text(json.dumps(self.vectors), encoding="utf-8")
        return [self.vectors[t] for t in texts]


@dataclass(frozen=True)
class Variant:
    """What a checker is built from: the embedders its heads read (their logits summed), and whether it stacks the
    judge's p(yes)."""
    embedders: tuple[str, ...]
    reads_judge: bool

    def __str__(self) -> str:
        return f"{' + '.join(self.embedders)}{' + judge' if self.reads_judge else ''}"


# round 6 adds the ensemble of all three embedders (left one writer out of four, it ranked every kind better than any
# one of them: docs/benchmarks.md "Round 6")
VARIANTS = tuple(Variant(e, j) for e in (("local",), ("local-e5",), ("local", "local-e5", "local-judge"))
                 for j in (True, False))
# each head's inverse L2 strength: the judge's unit-length 1536-d hidden states need a weaker penalty (leave one
# writer out, AUC rose from C 1 to 100 and held at 300); the encoders' moved < 0.05 over 0.3–10
HEAD_C = {"local": 3.0, "local-e5": 3.0, "local-judge": 100.0}


class Heads:
    """One scikit-learn head per embedder; a turn's logit is their sum, as the shipped checker's (TurnChecker.heads)."""

    def __init__(self, fitted: dict[str, Any], embeds: dict[str, Any]) -> None:
        self.fitted, self.embeds = fitted, embeds

    def logits(self, texts: list[str]) -> list[float]:
        total = [0.0] * len(texts)
        for model, head in self.fitted.items():
            total = [t + float(x) for t, x in zip(total, head.decision_function(self.embeds[model].of(texts)))]
        return total


def turn_text(case: Case, turn: int) -> str:
    return case.conversation.turns[turn - 1].content


def fit_head(sets: list[Labelled], embeds: dict[str, Any], models: tuple[str, ...]) -> Heads:
    """A head per embedder, each fitted alone on the sets' labelled turns."""
    from sklearn.linear_model import LogisticRegression

    texts, ys = [], []
    for labelled in sets:
        for case in labelled.cases:
            for turn in labelled.training_turns[case.id]:
                texts.append(turn_text(case, turn))
                ys.append(turn in labelled.positive_turns[case.id])
    return Heads({m: LogisticRegression(C=HEAD_C.get(m, 3.0), max_iter=5000, class_weight="balanced")
                  .fit(embeds[m].of(texts), ys) for m in models}, embeds)


def scored_cases(labelled: Labelled, heads) -> list[Case]:
    """The set's cases with each turn's head logit filled in (as the run fills it); `heads.logits(texts)`."""
    out = []
    for case in labelled.cases:
        texts = [turn_text(case, f.turn) for f in case.findings]
        logits = heads.logits(texts) if texts else []
        findings = [f.model_copy(update={"checker": round(float(x), 4)}) for f, x in zip(case.findings, logits)]
        out.append(Case(case.id, case.name, findings, case.violation, case.conversation))
    return out


def features(case: Case) -> tuple[float, float] | None:
    heads = [f.checker for f in case.findings if f.checker is not None]
    scores = [f.p_yes for f in case.findings if f.p_yes is not None]
    return (max(heads), logit(max(scores)) if scores else -6.0) if heads else None


@dataclass
class Fitted:
    """A checker fitted on some sets, its figures on them, and those sets' cases scored by heads that never saw
    them (what its band was fitted on)."""
    checker: Any
    figures: list[Figures]
    oof: list[list[Case]]


def checker_for(item: str, heads: Heads, stacker, variant: Variant, judge: str, question: str | None,
                low: float, high: float, n: int):
    from rubriceval.rubric.calibration import ItemCalibration
    from rubriceval.scoring.judgement.turn_checker import TurnChecker, TurnHead

    cut = sigmoid((logit(low) + logit(high)) / 2)
    calibration = ItemCalibration(judge=judge, cutoff=round(cut, 4), undecided=(round(low, 4), round(high, 4)),
                                  method="labelled_set", n=n, score="checker",
                                  fitted_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                  note=f"turn checker ({variant}) fitted on {n} labelled conversations of "
                                       f"several writers (benchmarks/judge/checker_fit.py)")
    coef = list(stacker.coef_[0])
    return TurnChecker(kind=ITEMS[item][0], lang="zh",
                       heads=[TurnHead(embedder_model=m, embedder=heads.embeds[m].identity,
                                       weights=[float(w) for w in h.coef_[0]], bias=float(h.intercept_[0]))
                              for m, h in heads.fitted.items()],
                       judge=judge if variant.reads_judge else None, question=question if variant.reads_judge else None,
                       head_weight=round(float(coef[0]), 6),
                       judge_weight=round(float(coef[1]), 6) if variant.reads_judge else 0.0,
                       intercept=round(float(stacker.intercept_[0]), 6), calibration=calibration)


def judged(case: Case, item: str, checker, specs_) -> bool | None:
    """violated True/False, None undecided: the package's decision on the case's findings with the checker."""
    from rubriceval.scoring.judgement.decide import decide_findings, item_kind
    from rubriceval.scoring.judgement.roles import question_role

    spec, violation_answer = specs_[item]
    role = question_role(spec.question, spec.lang) or "assistant"
    findings = case.findings if checker.reads_judge else [f.model_copy(update={"p_yes": None}) for f in case.findings]
    found = decide_findings(spec, case.conversation, role, item_kind(spec, role), findings, checker.calibration,
                            checker=checker)
    return None if found.status != "decided" else found.answer == violation_answer


def item_figures(cases_: list[Case], item: str, checker, specs_) -> Figures:
    got = Figures()
    for case in cases_:
        if case.violation is not None:
            got.add(judged(case, item, checker, specs_), bool(case.violation))
    return got


def card_soothe(upset: list[Case], soothe: list[Case], upset_checker, soothe_checker, specs_) -> Figures:
    """未安抚情绪 as the card decides it, replayed (kind_fit.card_soothe with checkers): not applicable unless the
    upset checker says yes; a hit when it does and the soothing checker says no; undecided when either is."""
    by_id = {c.id: c for c in soothe}
    out = Figures()
    for case in upset:
        other = by_id[case.id]
        up = judged(case, "upset", upset_checker, specs_)
        unsoothed = judged(other, "soothe", soothe_checker, specs_) if up is not False else False
        hit = None if unsoothed is None or (up is None and unsoothed) else bool(up and unsoothed)
        out.add(hit, bool(other.violation))
    return out


Evaluate = Callable[[Any, list[list[Case]]], list[Figures]]


def fit_item(item: str, train: list[Labelled], variant: Variant, embeds: dict[str, Any], specs_, judge: str,
             question: str | None, evaluate: Evaluate | None = None) -> Fitted | None:
    """The checker fitted on these sets (cross-fitted by set: module doc), or None when no band is admissible.
    `evaluate`: how a candidate's figures are read on the cross-fitted cases (default: the item's own)."""
    from sklearn.linear_model import LogisticRegression

    oof: list[list[Case]] = []
    for i, labelled in enumerate(train):
        others = [t for j, t in enumerate(train) if j != i] or [labelled]
        oof.append(scored_cases(labelled, fit_head(others, embeds, variant.embedders)))
    rows = [(features(c), c.violation == ITEMS[item][1]) for g in oof for c in g if c.violation is not None]
    xs = [list(f) if variant.reads_judge else [f[0]] for f, _ in rows if f is not None]
    stacker = LogisticRegression(max_iter=1000).fit(xs, [y for f, y in rows if f is not None])
    if not variant.reads_judge:           # the checker's score() reads two coefficients: the judge's is 0
        stacker.coef_ = [[stacker.coef_[0][0], 0.0]]
    heads = fit_head(train, embeds, variant.embedders)
    n = sum(len(t.cases) for t in train)
    evaluate = evaluate or (lambda candidate, groups: [item_figures(g, item, candidate, specs_) for g in groups])
    probe = checker_for(item, heads, stacker, variant, judge, question, 0.5, 0.5, n)
    scores = sorted({probe.score(f[0], sigmoid(f[1])) for f, _ in rows if f is not None})
    edges = sorted({scores[min(len(scores) - 1, round(i * (len(scores) - 1) / GRID))] for i in range(GRID + 1)})
    mids = [(a + b) / 2 for a, b in zip(edges, edges[1:])]
    best = None
    for i, low in enumerate(mids):
        for high in mids[i:]:
            candidate = checker_for(item, heads, stacker, variant, judge, question, low, high, n)
            got = evaluate(candidate, oof)
            if any(g.undecided > MAX_UNDECIDED * g.n for g in got):
                continue
            key = (-sum(g.silent for g in got), round(worst(got), 2), -sum(g.undecided for g in got), -(high - low))
            if best is None or key > best[0]:
                best = (key, candidate, got)
    return Fitted(best[1], best[2], oof) if best else None


def worst(got: list[Figures]) -> float:
    return min(min(g.recall or 0.0, g.precision or 0.0) for g in got)


def upset_on_the_card(soothe: Fitted, specs_) -> Evaluate:
    """The upset question serves 未安抚情绪: its band is read on the card's item, with the soothing checker fitted
    on the same sets (kind_fit.py refits the upset band the same way)."""
    def evaluate(candidate, groups: list[list[Case]]) -> list[Figures]:
        return [card_soothe(g, s, candidate, soothe.checker, specs_) for g, s in zip(groups, soothe.oof)]
    return evaluate


class Fit:
    """The sets, embedders and the card's questions a fit reads, and the variants chosen so far."""

    def __init__(self, names: list[str]) -> None:
        from rubriceval.judge.embedded_model import embedded_judge_identity

        self.embeds = {model: Embeddings(model) for model in HEAD_C}
        self.judge, self.sets, self.specs, self.names = embedded_judge_identity(), load_sets(names), specs(), names
        self.chosen: dict[str, Variant] = {}

    def fitted(self, item: str, variant: Variant, train: list[str]) -> Fitted | None:
        """The item's checker on these sets (the upset band read on the card's item: upset_on_the_card)."""
        evaluate = None
        if item == "upset":
            soothe = self.fitted("soothe", self.chosen["soothe"], train)
            evaluate = upset_on_the_card(soothe, self.specs) if soothe else None
        return fit_item(item, [self.sets[s][item] for s in train], variant, self.embeds, self.specs,
                        self.judge, question_for(item, self.specs), evaluate)

    def scored(self, item: str, fitted: Fitted, left: str) -> list[Case]:
        return scored_cases(self.sets[left][item], heads_of(fitted.checker, self.embeds))

    def on_left_out(self, item: str, fitted: Fitted, left: str) -> Figures:
        """The checker's figures on the writer it was not fitted on (the upset checker: on 未安抚情绪)."""
        if item != "upset":
            return item_figures(self.scored(item, fitted, left), item, fitted.checker, self.specs)
        soothe = self.fitted("soothe", self.chosen["soothe"], [s for s in self.names if s != left])
        assert soothe is not None
        return card_soothe(self.scored("upset", fitted, left), self.scored("soothe", soothe, left), fitted.checker,
                           soothe.checker, self.specs)

    def choose(self, item: str) -> Fitted | None:
        """Every variant left one writer out at a time; the one that decides the left-out writers best (fewest silent
        passes, then the worse min(recall, precision), then the fewest undecided), fitted on every set."""
        keys = {}
        for variant in VARIANTS:
            on_left: list[Figures] = []
            for left in self.names:
                got = self.fitted(item, variant, [s for s in self.names if s != left])
                if got is None:
                    print(f"| {item} | {variant} | {left} | (no admissible band) |")
                    continue
                on_left.append(self.on_left_out(item, got, left))
                print(f"| {item if item != 'upset' else 'upset → 未安抚情绪'} | {variant} | {left} | {on_left[-1].row()} |")
            if len(on_left) == len(self.names):
                keys[variant] = (-sum(g.silent for g in on_left), round(worst(on_left), 2),
                                 -sum(g.undecided for g in on_left))
        if not keys:
            return None
        self.chosen[item] = max(keys, key=lambda v: keys[v])
        return self.fitted(item, self.chosen[item], self.names)


def main(argv: list[str] | None = None) -> int:
    from rubriceval.scoring.judgement.turn_checker import embedder_identity, write

    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge.checker_fit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="fit on every set and write the shipped file")
    parser.add_argument("--sets", default=",".join(RECORDS),
                        help=f"the labelled sets to fit on and leave out in turn (default: {','.join(RECORDS)}; round 4 "
                             f"shipped v1,v2,v3)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.sets.split(",") if n.strip()]
    if unknown := [n for n in names if n not in RECORDS]:
        parser.error(f"unknown set(s) {unknown}: choose from {list(RECORDS)}")
    for path, split in (RECORDS[n] for n in names):
        if not path.exists():
            print(f"missing {path}: run python -m benchmarks.judge.contact_centre --split {split} first",
                  file=sys.stderr)
            return 2
    if None in (embedder_identity(m) for m in HEAD_C):
        print("the in-process embedders are not installed: pip install 'rubriceval[local]'", file=sys.stderr)
        return 2
    fit = Fit(names)
    shipped = []
    print("| item | checker | left out | figures on the left-out writer |\n|---|---|---|---|")
    for item in ITEMS:                  # soothe first: the upset band is read with its checker
        final = fit.choose(item)
        if final is None:
            continue
        shipped.append(final.checker.model_copy(update={"figures": dict(zip(fit.names, (g.row() for g in final.figures)))}))
        print(f"| {item} | **{fit.chosen[item]}** | (fit on every set) | "
              f"{'; '.join(f'{s}: {g.row()}' for s, g in zip(fit.names, final.figures))} |")
    if args.write:
        write(shipped)
        print(f"wrote {len(shipped)} turn checkers for {fit.judge}", file=sys.stderr)
    return 0


def question_for(item: str, specs_) -> str | None:
    from rubriceval.scoring.judgement.decide import item_kind
    from rubriceval.scoring.judgement.roles import question_role

    spec = specs_[item][0]
    kind = item_kind(spec, question_role(spec.question, spec.lang) or "assistant")
    return kind.wording(spec.lang, sees_policy=spec.sees_knowledge) if kind is not None else None


class _Fitted:
    """A shipped checker's TurnHead read as a scikit-learn head (decision_function), so Heads sums both alike."""

    def __init__(self, head) -> None:
        self.head = head

    def decision_function(self, vectors):
        return self.head.logits(vectors)


def heads_of(checker, embeds: dict[str, Any]) -> Heads:
    """A fitted checker's heads, as scored_cases reads them (Heads: the sum of each head's logit)."""
    return Heads({head.embedder_model: _Fitted(head) for head in checker.heads}, embeds)


if __name__ == "__main__":
    sys.exit(main())
