"""`rubriceval run … --scorecards DIR`: the run options of scorecards (rubriceval/scorecard/), kept apart from
cli/run.py so the run command only calls these."""
from __future__ import annotations

import argparse

from rubriceval.common.errors import ConfigError


def add_scorecard_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scorecards (质检评分表: points, deductions, fatal items; docs/scorecards.md)")
    g.add_argument("--scorecards", metavar="DIR", help="scorecard file or directory (e.g. scorecards/): one total per "
                   "conversation or sample, after the rubrics and metrics; or store: (store:ID, store:ID@N), the "
                   "versions the studio saved in --store")
    g.add_argument("--only-scorecards", metavar="IDS", help="comma-separated scorecard ids to use from --scorecards")


def scorecards_for_run(args: argparse.Namespace, store, rubrics, judge_config) -> list:
    """The scorecards of this `run`: from --scorecards (a new run), or those a resumed run started with. With
    --batch their questions join the Batch API's rounds (rubriceval/batch/scorecards.py)."""
    if getattr(args, "resume", None):
        from rubriceval.store.scorecards import ScorecardStore

        return ScorecardStore(store).cards(args.resume)
    if not getattr(args, "scorecards", None):
        return []
    from rubriceval.run.scorecard_stage import check_rubric_references
    from rubriceval.scorecard.loader import with_run_knowledge
    from rubriceval.store.stored_sources import load_scorecards

    only = args.only_scorecards.split(",") if args.only_scorecards else None
    cards = load_scorecards(args.scorecards, only=only, store=args.store)
    cards = with_run_knowledge(cards, getattr(args, "knowledge", None))     # --knowledge: for cards naming none
    if only and set(only) - {c.id for c in cards}:
        raise ConfigError(f"unknown scorecard id(s): {sorted(set(only) - {c.id for c in cards})}",
                          file=args.scorecards, field="--only-scorecards")
    check_rubric_references(cards, [r.id for r in rubrics])
    return cards


def print_scorecard_line(totals, *, stored: bool = False) -> None:
    """totals: a run's totals (`.scorecards`: the stage's counts); stored: they count every stored verdict (a batch
    run's, made over several collects), not those new in this process."""
    done = getattr(totals, "scorecards", None)
    if done:
        usage = done["usage"]
        made = f"{done['done']} verdict(s)" if stored else f"{done['done']} verdict(s) new, {done['skipped']} resumed"
        waiting = f"{done['awaiting']} awaiting review (not in any mean), " if done.get("awaiting") else ""
        print(f"scorecards: {made}; {done['fatal']} fatal, {waiting}"
              f"{done['unscored']} unscored; {usage['calls']} judge call(s), {usage['cache_hits']} cached, "
              f"{usage['prompt_tokens'] + usage['completion_tokens']} tokens")
