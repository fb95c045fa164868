"""`rubriceval increment SOURCE`: judge only what is new or changed in a growing source since the last increment
(rubriceval/incremental/); meant for cron or a systemd timer (docs/production_qa.md)."""
from __future__ import annotations

import argparse

from rubriceval.cli.options import add_judge_args, add_store_arg, embedder_config_from, judge_config_from
from rubriceval.common.errors import RubricEvalError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("increment", help="judge only conversations new or changed in a growing source (a folder of "
                       "exports, an appended JSONL file) since the last increment; each increment is a run")
    p.add_argument("source", help="a folder of exports, or one appended JSONL file")
    p.add_argument("--rubrics", help="rubric file or directory")
    p.add_argument("--only", help="comma-separated rubric ids to use from --rubrics")
    p.add_argument("--metrics", help="comma-separated metric names")
    p.add_argument("--idle-timeout", default="30m", help="a conversation whose last message is younger than this "
                   "waits for the next increment (30m, 2h, 1d; default 30m)")
    p.add_argument("--now", help="the time the idle timeout counts back from (ISO-8601; default: now)")
    p.add_argument("--name", help="run name (default: <source>-<cutoff time>)")
    p.add_argument("--naive-tz", default="UTC", help="zone of timestamps written without an offset (default UTC)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--metric-option", action="append", default=[], metavar="KEY=VALUE")
    add_judge_args(p)
    add_store_arg(p)
    p.set_defaults(func=cmd_increment)


def cmd_increment(args) -> int:
    from rubriceval.data.segment_spec import TimeSettings
    from rubriceval.data.segment_values import parse_instant
    from rubriceval.incremental.increment import run_increment
    from rubriceval.rubric.loader import load_rubrics
    from rubriceval.run.evaluate import parse_metric_names
    from rubriceval.run.metric_config import load_metric_options
    from rubriceval.store.runs import RunStore

    rubrics = load_rubrics(args.rubrics, only=args.only.split(",") if args.only else None) if args.rubrics else []
    metrics = parse_metric_names(args.metrics)
    if not rubrics and not metrics:
        raise RubricEvalError("nothing to evaluate", hint="pass --rubrics DIR and/or --metrics a,b,c")
    now = parse_instant(args.now, args.naive_tz, where="now") if args.now else None
    store = RunStore(args.store)
    result = run_increment(args.source, rubrics, metrics, store=store, judge_config=judge_config_from(args),
                           embedder_config=embedder_config_from(args),
                           metric_options=load_metric_options(args.config, args.metric_option),
                           idle_timeout=args.idle_timeout, now=now, name=args.name,
                           settings=TimeSettings(naive_zone=args.naive_tz), progress=not args.quiet)
    print(result.line())
    return 0
