"""`rubriceval scorecard fit RUN [RUN …] --card ID [--write]` (issue 44.1): each question item's p(yes) cut-off fitted
for the runs' judge from what reviewers decided (trust/fit_reviews.py, the fit of `calibrate --fit-thresholds`),
proposed as the card's next version (studio/calibration_proposal.py) — shown as a diff; written only with --write,
as the studio saves a version (the old one kept in `.versions/`). Exit 0 when a cut-off is proposed, 1 when none is
(each refusal says why)."""
from __future__ import annotations

import argparse
from typing import Any

from rubriceval.cli.options import add_judge_args, add_store_arg, judge_config_from


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
    f.add_argument("--try-examples", action="store_true",
                   help="also try each item's reviewed turns as its examples (a yes and a no from the fitting half): "
                        "the held-out reviewed conversations are judged again with them (judge calls); proposed "
                        "only where they beat the cut-off")
    f.add_argument("--write", action="store_true", help="save the proposal as the card's next version")
    f.add_argument("--by", default="", help="who accepts it (recorded with the saved version)")
    add_store_arg(f)
    add_judge_args(f)
    f.set_defaults(func=cmd_fit)


def cmd_fit(args) -> int:
    import asyncio  # here, not at the top: `rubriceval --help` loads no event loop

    from rubriceval.studio.calibration_proposal import accept_proposal, current_card, propose_calibration
    from rubriceval.trust.fit_reviews import fit_card, load_reviewed

    reviewed = load_reviewed(args.store, args.runs, args.card)
    current = current_card(args.scorecards, args.card)
    made = asyncio.run(_examples_rules(args, current or reviewed.card, reviewed.judge))
    fit = fit_card(reviewed.card, reviewed.judge, reviewed.verdicts, reviewed.decided, runs=reviewed.runs,
                   items=args.item, holdout_fraction=args.holdout, seed=args.seed, current=current, made=made)
    print(f"scorecard:{fit.card} on judge {fit.judge}, reviews of {len(fit.runs)} run(s)")
    for item in fit.items:
        print("  " + item.line())
    examples = asyncio.run(_try_examples(args, reviewed, fit)) if args.try_examples else {}
    proposal = propose_calibration(args.scorecards, fit, examples)
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


async def _try_examples(args: Any, reviewed: Any, fit: Any) -> dict[str, Any]:
    """The items whose reviewed examples beat the cut-off on held-out reviews (trust/fit_examples.py)."""
    from rubriceval.local.backends import make_judge
    from rubriceval.store.runs import RunStore
    from rubriceval.trust.fit_examples import try_examples
    from rubriceval.trust.fit_reviews import judge_of_run, reviewed_answers

    config = judge_config_from(args)
    runs = RunStore(args.store)
    samples = {f"{run_id}/{s.id}": s for run_id in reviewed.runs for s in runs.samples(run_id)}
    judge = make_judge(config, announce=False)
    helping = {}
    try:
        if judge_of_run({"model": config.model, "base_url": config.base_url}) != fit.judge:
            print(f"  examples not tried: the judge configured is not the runs' ({fit.judge})")
            return {}
        answers, _ = reviewed_answers(reviewed.card, reviewed.verdicts, reviewed.decided)
        for item in fit.items:
            trial = await try_examples(reviewed.card, item, answers[item.item], samples, judge,
                                       holdout_fraction=args.holdout, seed=args.seed)
            if trial is None:
                print(f"  {item.item}: examples not tried (too few reviews, or no decisive turn to quote)")
                continue
            print("  " + trial.line())
            if trial.helps:
                helping[item.item] = trial.examples
    finally:
        await judge.close()
    return helping


async def _examples_rules(args: Any, card: Any, judge_name: str) -> dict[str, Any]:
    """The rules the card's examples make on the runs' judge (what a fit must beat for an item without a carried
    calibration; from the judge cache after a run). Needs that judge configured; otherwise those items are compared
    with 0.5, and said so."""
    from rubriceval.local.backends import make_judge
    from rubriceval.trust.fit_examples import examples_rules
    from rubriceval.trust.fit_reviews import judge_of_run

    waiting = [i.id for i in card.items if i.question and i.examples and i.calibration_for(judge_name) is None]
    if not waiting:
        return {}
    config = judge_config_from(args)
    if judge_of_run({"model": config.model, "base_url": config.base_url}) != judge_name:
        print(f"  note: {', '.join(waiting)} decide by their examples on {judge_name}; configure that judge to compare "
              "with that rule (compared with 0.5 here)")
        return {}
    judge = make_judge(config, announce=False)
    try:
        return await examples_rules(card, judge)
    finally:
        await judge.close()
