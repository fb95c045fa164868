"""`rubriceval pairwise A B [C …] --rubrics DIR`: judge bot versions side by side and print the win rates.

    rubriceval pairwise answers_v1.jsonl answers_v2.jsonl --rubrics rubrics      # two datasets, same sample ids
    rubriceval pairwise RUN_A RUN_B                                               # two stored runs (their rubrics)
    rubriceval pairwise v1.jsonl v2.jsonl v3.jsonl --rubrics rubrics --labels v1,v2,v3   # + Bradley–Terry ranking
    rubriceval pairwise --show latest                                             # print a stored comparison

The first version is the baseline. Verdicts go to the run store (`--store`), where `rubriceval compare RUN_A RUN_B`
and `rubriceval gate --check "pairwise:<rubric> win_rate>=0.5"` read them.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from rubriceval.cli.options import add_judge_args, add_store_arg
from rubriceval.common.errors import RubricEvalError


def register(sub: Any) -> None:
    """Add the `pairwise` subcommand (one module per command group, as in `rubriceval.cli`)."""
    p = sub.add_parser("pairwise", help="A/B: judge two or more bot versions' answers to the same questions side by "
                                        "side (both orders), win rates with CIs, Bradley–Terry ranking")
    p.add_argument("versions", nargs="*", help="dataset files or run ids/names, two or more; the first is the "
                                               "baseline")
    p.add_argument("--rubrics", help="rubric file or directory (default: the rubrics of the first run given)")
    p.add_argument("--only", help="comma-separated rubric ids to use")
    p.add_argument("--labels", help="comma-separated names for the versions (default: file stems / run names)")
    p.add_argument("--name", help="comparison name (default: timestamp)")
    add_store_arg(p)
    p.add_argument("--resume", metavar="NAME", help="finish an interrupted comparison")
    p.add_argument("--show", metavar="NAME", help="print a stored comparison ('latest' for the newest); no judging")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for the win-rate CIs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lang", choices=["zh", "en"], help="default: the rubrics' language")
    p.add_argument("--quiet", action="store_true")
    add_judge_args(p)
    p.set_defaults(func=cmd_pairwise)


def _language(requested: str | None, rubric_languages: list[str]) -> str:
    if requested:
        return requested
    return "zh" if "zh" in rubric_languages or not rubric_languages else "en"


def cmd_pairwise(args: argparse.Namespace) -> int:
    import asyncio  # ~40 ms: only when judging, so `rubriceval --help` stays fast

    from rubriceval.cli.options import judge_config_from
    from rubriceval.pairwise.report import format_pairwise
    from rubriceval.pairwise.run import run_pairwise
    from rubriceval.pairwise.summary import load_pairwise
    from rubriceval.rubric.loader import load_rubrics

    if not args.show:
        if not args.resume and len(args.versions) < 2:
            raise RubricEvalError("rubriceval pairwise needs two or more versions (datasets or runs)",
                                  field="versions", hint="e.g. rubriceval pairwise v1.jsonl v2.jsonl --rubrics rubrics")
        rubrics = load_rubrics(args.rubrics, only=args.only.split(",") if args.only else None) \
            if args.rubrics else None
        comparison_id, totals = asyncio.run(run_pairwise(
            args.versions, rubrics, store_path=args.store, judge_config=judge_config_from(args), name=args.name,
            labels=args.labels.split(",") if args.labels else None, rubrics_path=args.rubrics or "",
            progress=not args.quiet, resume=args.resume))
        j = totals.judge
        print(f"pairwise: {totals.units_done} judgement(s) new, {totals.units_skipped} resumed; {totals.scored} "
              f"scored, {totals.unscored} unscored {totals.unscored_by_kind or ''}; judge calls {j.get('calls', 0)}, "
              f"cache hits {j.get('cache_hits', 0)}, tokens {j.get('prompt_tokens', 0)}+"
              f"{j.get('completion_tokens', 0)}, wall {totals.wall_s:.1f}s", file=sys.stderr)
        ref = comparison_id
    else:
        ref = args.show
    summary = load_pairwise(args.store, ref, n_boot=args.n_boot, seed=args.seed)
    from rubriceval.pairwise.store import PairwiseStore

    with PairwiseStore(args.store) as store:
        languages = [d.get("language", "zh") for d in store.info(ref).config.rubric_definitions]
        where = store.location
    print(format_pairwise(summary, _language(args.lang, languages)), end="")  # type: ignore[arg-type]
    print(f"store: {where}  (comparison {summary.comparison}, id {summary.comparison_id})")
    return 0
