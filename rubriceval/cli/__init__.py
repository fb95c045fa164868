"""The `rubriceval` command. Every user-input error prints one line naming file, line and field; exit code 2.

Exit codes: 0 done; 1 the command ran and its answer is no (a gate check failed, validate found lint errors,
collect had failed rows, calibrate refused a version); 2 bad input or usage (one line naming file, line and
field; also validate when a file is not a rubric at all); 130 interrupted.

One module per command group, each adding its subcommands with `register(sub)`. Heavy dependencies (pandas, the
judge client, reports, gradio) are imported inside the command functions, so `rubriceval --help` stays fast.
"""
from __future__ import annotations

import argparse
import sys

from rubriceval.cli import (
    appeals,
    audit,
    authoring,
    batch,
    cache,
    datasets,
    export,
    incremental,
    pairwise,
    reports,
    run,
    scorecard,
    studio,
    team,
    trend,
    trust,
)
from rubriceval.common.errors import RubricEvalError

COMMAND_GROUPS = (authoring, run, incremental, batch, reports, trend, export, pairwise, audit, team, appeals, datasets,
                  trust, cache, scorecard, studio)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rubriceval", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except RubricEvalError as exc:
        print(f"error: {exc.format()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: verdicts so far are stored; finish with `rubriceval run --resume RUN`", file=sys.stderr)
        return 130
