"""`rubriceval scorecard fit RUN [RUN …] --card ID [--write]` (issue 44.1): each question item's p(yes) cut-off fitted
for the runs' judge from what reviewers decided (trust/fit_reviews.py, the fit of `calibrate --fit-thresholds`),
proposed as the card's next version (studio/calibration_proposal.py) — shown as a diff; written only with --write,
as the studio saves a version (the old one kept in `.versions/`). Exit 0 when a cut-off is proposed, 1 when none is
(each refusal says why)."""
from __future__ import annotations

import argparse

from rubriceval.cli.options import add_store_arg


def add_parser(group: argparse._SubParsersAction) -> None:
    f = group.add_parser("fit", help="fit question items' p(yes) cut-offs to reviewers' decisions for the run's judge; "
                                     "proposed as the card's next version (held-out reviews must show it beats the "
                                     "current cut-off)")
    f.add_argument("runs", nargs="+", metavar="RUN", help="the reviewed run(s) (weeks), judged by the same judge")
    f.add_argument("--card", required=True, help="scorecard id")
    f.add_argument("--scorecards", default="scorecards", metavar="DIR",
                   help="the folder holding the card file the proposal edits (default: scorecards)")
    f.add_argument("--item", action="append", help="only this item (repeatable; default: every question item)")
    f.add_argument("--holdout", type=float, default=0.5, help="share of reviewed decisions held out (default 0.5)")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--write", action="store_true", help="save the proposal as the card's next version")
    f.add_argument("--by", default="", help="who accepts it (recorded with the saved version)")
    add_store_arg(f)
    f.set_defaults(func=cmd_fit)


def cmd_fit(args) -> int:
    from rubriceval.studio.calibration_proposal import accept_proposal, current_card, propose_calibration
    from rubriceval.trust.fit_reviews import fit_from_store

    _, fit = fit_from_store(args.store, args.runs, args.card, items=args.item, holdout_fraction=args.holdout,
                            seed=args.seed, current=current_card(args.scorecards, args.card))
    print(f"scorecard:{fit.card} on judge {fit.judge}, reviews of {len(fit.runs)} run(s)")
    for item in fit.items:
        print("  " + item.line())
    proposal = propose_calibration(args.scorecards, fit)
    if proposal is None:
        print("no cut-off proposed: the card keeps its cut-offs")
        return 1
    for skipped in proposal.skipped:
        print(f"  skipped {skipped}: the card file now asks another question than the reviewed runs")
    print(proposal.diff)
    if not args.write:
        print(f"proposed as version {proposal.version} (from {proposal.from_version}); --write saves it")
        return 0
    saved = accept_proposal(args.scorecards, proposal, saved_by=args.by)
    print(f"saved {saved.path}: version {saved.version} ({saved.version_tag}); version {proposal.from_version} kept "
          f"in the history")
    return 0
