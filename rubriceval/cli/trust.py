"""Can the judge be trusted: `trust` (each rubric of a run: judge–expert agreement beside what appeals say about it),
`agreement` (judge vs experts), `calibrate` (few-shot versions, fitted weights and cut-offs), `benchmark-judge`."""
from __future__ import annotations

import argparse
import sys

from rubriceval.cli.benchmark_judge import (
    NOT_INSTALLED,
    add_conversation_rubric_arg,
    add_robustness_args,
    find_benchmarks,
    use_benchmarks,
)
from rubriceval.cli.options import add_judge_args, add_store_arg, judge_config_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("trust", help="per rubric of a run: judge–expert agreement and what appeals say about it")
    p.add_argument("run", nargs="?", default="latest")
    add_store_arg(p)
    p.set_defaults(func=cmd_trust)

    p = sub.add_parser("agreement", help="judge-vs-expert agreement for one rubric (from audits or a labels file)")
    p.add_argument("--rubric", required=True)
    p.add_argument("--run", help="only this run's audits / verdicts")
    p.add_argument("--labels", help="JSONL/CSV/Excel of human labels: sample_id, score[, expert]")
    add_store_arg(p)
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_agreement)

    p = sub.add_parser("calibrate", help="propose a rubric version with few-shot examples from audits; "
                                         "evaluate on held-out audited items")
    p.add_argument("--rubric", required=True)
    add_store_arg(p)
    p.add_argument("--k", type=int, default=4, help="few-shot examples to add")
    p.add_argument("--holdout", type=float, default=0.5, help="share of audited items kept for evaluation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fit-weights", action="store_true",
                   help="fit the checklist's question weights to the audits (ordinal logistic on p(yes)); proposed "
                        "as a new version only when it beats the declared level rule on held-out items (exit 1 if not)")
    p.add_argument("--fit-thresholds", action="store_true",
                   help="fit each per-turn question's p(yes) cut-off to audited turns (--labels: sample_id, turn, "
                        "question|item, answer; a row without a turn: a checklist question, item = its id) for the "
                        "judge that answered them; proposed only when it beats the current cut-off (0.5, or the one "
                        "fitted for that judge) on held-out rows (exit 1 if none is). Scorecard items: scorecard fit")
    p.add_argument("--labels", help="--fit-thresholds: the audited turns (JSONL or CSV)")
    p.add_argument("--run", help="--fit-thresholds: the run whose answers to use (default: the newest with the rubric)")
    p.add_argument("--accept", metavar="VERSION", help="accept a proposed version")
    p.add_argument("--reject", metavar="VERSION", help="reject a proposed version")
    p.add_argument("--expert", help="who decides (with --accept/--reject)")
    add_judge_args(p)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("benchmark-judge", help="any configured judge vs human labels (SummEval, HaluEval, cs_zh, "
                                             "robustness, conversations); run from a clone: the benchmarks are in "
                                             "the source repository's benchmarks/, not in the package")
    p.add_argument("kind", choices=["summeval", "halueval", "cs_zh", "robustness", "conversations"])
    p.add_argument("--n", type=int, help="items (default: all SummEval / 60 balanced HaluEval / all 66 cs_zh rows)")
    p.add_argument("--few-shot", choices=["all", "per_level", "none"],
                   help="holistic: the rubric's examples all, one per level, or none (default: the rubric's); "
                        "summeval/halueval: examples taken from the benchmark's items not measured in this run")
    p.add_argument("--shuffle-levels", action="store_true",
                   help="cs_zh holistic: list the level descriptions in a seeded per-row order")
    p.add_argument("--rubrics", help="cs_zh: the rubric folder (default: rubrics)")
    p.add_argument("--answers", help="checklist_fitted: reuse the p(yes) of a saved checklist result (--out of a "
                                     "--judge-mode checklist run on the same items) instead of asking the judge again")
    p.add_argument("--out", help="write every item's result as JSON (each item is also kept in OUT.partial.jsonl "
                                 "as it is judged, until the run completes)")
    p.add_argument("--resume", action="store_true",
                   help="finish a stopped run: keep the items OUT.partial.jsonl holds when they were judged with "
                        "these very prompts and judge (else refused, naming what differs), judge only the others")
    add_store_arg(p, default=None, help="record the SummEval κ as trust evidence for the rubric version in this run "
                                         "store (a SQLite file or postgresql://…)")
    p.add_argument("--data", help="your own copy of the benchmark (a file, or a folder holding it), or a clone of "
                                  "rubriceval (its benchmarks/); default: the benchmarks/ tree of this checkout "
                                  "(the benchmarks ship with the source repository, not with the package)")
    add_judge_args(p)
    add_robustness_args(p)        # robustness: answers that attack the grader (issue 31); also --modes/--split
    add_conversation_rubric_arg(p)                            # conversations: --rubric
    p.set_defaults(func=cmd_benchmark_judge)


def cmd_trust(args) -> int:
    from rubriceval.audit.appeal_stats import appeal_stats
    from rubriceval.cli.appeals import format_appeal_stats
    from rubriceval.i18n import render
    from rubriceval.store.runs import RunStore, rubrics_from_run
    from rubriceval.trust.release_gate import agreement_lines

    store = RunStore(args.store)
    run_id = store.resolve(args.run)
    info = store.run_info(run_id)
    rubrics, _ = rubrics_from_run(store, run_id)
    lines = agreement_lines(store.path, rubrics, judge_model=str(info.config.judge.get("model") or "") or None)
    stats = appeal_stats(store.conn, run_id)
    for rubric in rubrics:
        print(f"{rubric.id}: {render(lines[rubric.id], 'en')}")
        for row in (r for r in stats if r.scorer == rubric.id and r.flagged):
            print(f"  ⚑ appeals: {row.item or 'the whole verdict'}: {row.why}")
    flagged = [r for r in stats if r.flagged]
    ids = {rubric.id for rubric in rubrics}
    for row in (r for r in flagged if r.scorer not in ids):      # scorecards: no agreement line, their flags still
        print(f"{row.scorer} (scorecard): ⚑ appeals: {row.item or 'the whole verdict'}: {row.why}")
    if stats:
        print()
        print(format_appeal_stats(stats))
    print(f"{len(flagged)} item(s) flagged by appeals" if flagged else "no item flagged by appeals")
    _print_rubric_acceptance(store, run_id)
    return 0


def _print_rubric_acceptance(store, run_id: str) -> None:
    """Each rubric with an auto_accept target: what the run accepted automatically, what waits, and why (issue 44)."""
    from rubriceval.common.tables import text_table
    from rubriceval.report.auto_accept import card_heading, card_table
    from rubriceval.trust.rubric_selective import rubric_acceptance

    for found in rubric_acceptance(store, run_id):
        print(f"\n{card_heading(found, 'en')}")
        print(text_table(*card_table(found, "en"), right_align=range(2, 8)))


def cmd_agreement(args) -> int:
    from rubriceval.trust.human_scores import agreement_for_rubric

    report = agreement_for_rubric(args.store, args.rubric, run=args.run, labels_file=args.labels,
                                  n_boot=args.n_boot, seed=args.seed)
    print(report.summary())
    for attr in ("exact", "within_one", "kappa_quadratic", "spearman", "kendall"):
        est = getattr(report, attr, None)
        if est is not None and getattr(est, "value", None) is not None:
            print(f"  {attr:<16} {est.value:.3f}  [{est.ci_low if est.ci_low is not None else '—'}, "
                  f"{est.ci_high if est.ci_high is not None else '—'}]")
    if getattr(report, "confusion", None):
        print("  confusion (rows = human 1–5, columns = judge 1–5):")
        for row in report.confusion:
            print("   ", " ".join(f"{c:>4}" for c in row))
    for item in (getattr(report, "worst_items", None) or [])[:5]:
        print(f"  disagreement: {item}")
    return 0


def cmd_calibrate(args) -> int:
    from rubriceval.trust.calibrate import accept_version, calibrate, reject_version

    if args.accept or args.reject:
        fn = accept_version if args.accept else reject_version
        record = fn(args.store, args.rubric, args.accept or args.reject, decided_by=args.expert or "")
        print(record)
        return 0
    if args.fit_thresholds:            # per-turn question cut-offs fitted to audited turns; refused unless > 0.5
        from rubriceval.trust.fit_cutoff import fit_thresholds

        if not args.labels:
            print("--fit-thresholds needs --labels (the audited turns)", file=sys.stderr)
            return 2
        fits, unasked, path = fit_thresholds(args.store, args.rubric, args.labels, run=args.run,
                                             holdout_fraction=args.holdout, seed=args.seed)
        for fit in fits:
            print(fit.line())
        if unasked:
            print(f"{unasked} audited turn(s) were never asked about in the run (no p(yes)); left out")
        print(f"proposed: {path}" if path else "no cut-off proposed: the rubric keeps 0.5")
        return 0 if path else 1
    if args.fit_weights:               # checklist weights fitted to audits; refused unless they beat the rule
        from rubriceval.trust.calibrate_weights import fit_weights

        fitted = fit_weights(args.store, args.rubric, judge_config_from(args), holdout_fraction=args.holdout,
                             seed=args.seed)
        print(fitted.summary())
        return 0 if fitted.accepted else 1
    result = calibrate(args.store, args.rubric, judge_config_from(args), k_examples=args.k, holdout_fraction=args.holdout,
                       seed=args.seed)
    print(result.summary())
    return 0


def cmd_benchmark_judge(args) -> int:
    try:
        return _benchmark_judge(args)
    except KeyboardInterrupt:           # the generic message names `run --resume`, which is not this command's
        kept = f" (the items judged are kept in {args.out}.partial.jsonl)" if args.out else ""
        again = "the same command with --resume" if args.out else "it again (with --out, a stopped run can resume)"
        print(f"interrupted{kept}: finish with {again}", file=sys.stderr)
        return 130


def _benchmark_judge(args) -> int:
    found = find_benchmarks(args.data)
    if found is None:                 # an installed wheel: the benchmarks stay in the repository
        print(NOT_INSTALLED, file=sys.stderr)
        return 2
    root, args.data = found
    use_benchmarks(root)
    from benchmarks.judge.judge import run_benchmark

    if args.kind == "robustness":     # answers that attack the grader, per family, mode and defence
        from benchmarks.judge.robustness_cli import run_from_args

        return run_from_args(args, judge_config_from(args), "rubriceval " + " ".join(sys.argv[1:]))
    if args.kind == "conversations":  # the labelled conversation set, per mode (issue 28): the module's own reading
        from benchmarks.judge.conversations import run_from_args as run_conversations

        return run_conversations(args, judge_config_from(args), "rubriceval " + " ".join(sys.argv[1:]))
    if args.kind == "cs_zh":          # the labelled Chinese customer-service set, per judge mode
        from benchmarks.judge.cs_zh import run_cs_benchmark

        config = judge_config_from(args)
        run_cs_benchmark(config, config.judge_mode or "holistic", out=args.out, few_shot=args.few_shot,
                         shuffle_levels=args.shuffle_levels, data=args.data, rubrics_dir=args.rubrics, n=args.n,
                         answers=args.answers, resume=args.resume, command="rubriceval " + " ".join(sys.argv[1:]))
        return 0

    run_benchmark(args.kind, judge_config_from(args), n=args.n, out=args.out, store=args.store, data=args.data,
                  few_shot=args.few_shot, answers=args.answers, resume=args.resume,
                  command="rubriceval " + " ".join(sys.argv[1:]))
    return 0
