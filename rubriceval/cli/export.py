"""Verdicts back where people look: `export otel RUN --out FILE` (OpenTelemetry gen_ai.evaluation.result events,
OTLP/JSON) and `export langfuse RUN --out FILE` (Langfuse score records, one POST /api/public/scores body a line)."""
from __future__ import annotations

import argparse

from rubriceval.cli.options import add_store_arg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a run's verdicts as OpenTelemetry evaluation events or Langfuse scores")
    p.add_argument("target", choices=("otel", "langfuse"),
                   help="otel: gen_ai.evaluation.result events (OTLP/JSON logs, one request a line); "
                        "langfuse: score records ready to POST to /api/public/scores")
    p.add_argument("run", metavar="RUN", help="run name or id (see `rubriceval runs`)")
    p.add_argument("--out", required=True, metavar="FILE", help=".jsonl (one record or request a line) or .json")
    add_store_arg(p)
    p.set_defaults(func=cmd_export)


def cmd_export(args) -> int:
    from rubriceval.export.langfuse import export_langfuse
    from rubriceval.export.otel import export_otel
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    try:
        tally = (export_otel if args.target == "otel" else export_langfuse)(store, args.run, args.out)
    finally:
        store.close()
    print(tally.line())
    return 0
