"""How far the shipped turn checkers' ranking lets any band go on a writer they were not fitted on (issue 39, round 6).

For each item the shipped checker's variant (its embedders, whether it reads the judge: turn_checkers.yaml) is
fitted on all writers but one, as `checker_fit` does; on the left-out writer this prints

* the figures of the band fitted on the other writers (what the method gives a new writer), and
* the figures of the best band placed on the left-out writer itself, with its own labels — not a method, an upper
  bound for every cut-off on this ranking: at most 20 % undecided (the acceptance's limit), the fewest silent passes
  first, then the highest min(recall, precision); `+ und` widens nothing beyond that limit.

Where even the second stays under 0.8, no band fitted on other writers reaches the acceptance with this ranking:
the ranking, not the band, is the limit. The package's own decision is replayed (decide.decide_findings, with its
rules), as in checker_fit. Promise and other people's data only: 未安抚情绪 chains two checkers.

    PYTHONPATH=. python -m benchmarks.judge.ranking_limit [--sets v1,v2,v3,v4,v5]
"""
from __future__ import annotations

import argparse
import sys

from benchmarks.judge.checker_fit import RECORDS, Fit, Variant, item_figures, worst
from benchmarks.judge.kind_fit import Case, Figures
from rubriceval.stats.log_odds import sigmoid

ACCEPTANCE_UNDECIDED = 0.20
ITEMS = {"promise": "promise", "leak_other": "personal_data"}


def best_band_on(cases: list[Case], item: str, checker, specs_) -> tuple[tuple[float, float], Figures]:
    """The band over these cases' own scores that decides them best (module docstring), and its figures."""
    from benchmarks.judge.checker_fit import features

    scores = sorted({checker.score(f[0], sigmoid(f[1])) for f in map(features, cases) if f is not None})
    cuts = [scores[0] / 2] + [(a + b) / 2 for a, b in zip(scores, scores[1:])] + [(1 + scores[-1]) / 2]
    best: tuple | None = None
    for i, low in enumerate(cuts):
        for high in cuts[i:]:
            calibration = checker.calibration.model_copy(update={"cutoff": round((low + high) / 2, 6),
                                                                 "undecided": (round(low, 6), round(high, 6))})
            got = item_figures(cases, item, checker.model_copy(update={"calibration": calibration}), specs_)
            if got.undecided > ACCEPTANCE_UNDECIDED * got.n:
                continue
            key = (-got.silent, round(worst([got]), 2), -got.undecided)
            if best is None or key > best[0]:
                best = (key, (low, high), got)
    assert best is not None                     # the band that decides everything is always admissible
    return best[1], best[2]


def main(argv: list[str] | None = None) -> int:
    from rubriceval.scoring.judgement.turn_checker import shipped

    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge.ranking_limit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(RECORDS), help="the labelled sets, each left out in turn")
    names = [n.strip() for n in parser.parse_args(argv).sets.split(",") if n.strip()]
    by_kind = {c.kind: c for c in shipped()}
    fit = Fit(names)
    print("| item | checker | left out | band fitted on the other writers | best band on the left-out writer itself |\n"
          "|---|---|---|---|---|")
    for item, kind in ITEMS.items():
        entry = by_kind[kind]
        variant = Variant(tuple(h.embedder_model for h in entry.heads), entry.reads_judge)
        for left in names:
            fitted = fit.fitted(item, variant, [s for s in names if s != left])
            if fitted is None:
                print(f"| {item} | {variant} | {left} | (no admissible band) | |")
                continue
            cases = fit.scored(item, fitted, left)
            _, best = best_band_on(cases, item, fitted.checker, fit.specs)
            print(f"| {item} | {variant} | {left} | {fit.on_left_out(item, fitted, left).row()} | {best.row()} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
