"""Results of stored runs: `report` (HTML, Excel, Markdown), `compare` (two runs), `gate` (CI exit codes)."""
from __future__ import annotations

import argparse
from pathlib import Path

from rubriceval.cli.options import add_store_arg


def add_segment_args(p: argparse.ArgumentParser, *, by: bool = True) -> None:
    """--by and the time zones of its buckets (rubriceval/data/segment_spec.py)."""
    if by:
        p.add_argument("--by", help="segments: metadata fields, tag, intent or day/week/month[:timestamp field]; "
                       "',' separates tables, '+' crosses fields (e.g. agent_id,skill_group,agent_id+week)")
    p.add_argument("--tz", default="UTC", help="time zone the day/week/month buckets are counted in "
                   "(IANA name, e.g. Asia/Shanghai; default UTC)")
    p.add_argument("--naive-tz", default="UTC", help="zone of timestamps written without an offset (default UTC)")


def segment_settings(args):
    from rubriceval.data.segment_spec import TimeSettings

    return TimeSettings(zone=args.tz, naive_zone=args.naive_tz)


def add_machine_only_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--machine-only", action="store_true",
                   help="the judge's scores alone (to measure the judge); default: official scores, where the latest "
                        "human decision (override, adjudication, accepted appeal) replaces the judge's")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write the HTML report, Excel workbook and Markdown summary of a run")
    p.add_argument("run", nargs="?", default="latest", help="run id or name (default: latest)")
    add_store_arg(p)
    p.add_argument("--out", help="directory (default out/reports)")
    p.add_argument("--lang", choices=["zh", "en"], help="default: zh when the data is Chinese")
    add_segment_args(p)
    add_machine_only_arg(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", help="compare two runs: deltas with bootstrap CIs, samples that got worse")
    p.add_argument("run_a", help="baseline run")
    p.add_argument("run_b", help="new run")
    add_store_arg(p)
    p.add_argument("--html", help="also write an HTML comparison page here")
    p.add_argument("--n-boot", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lang", choices=["zh", "en"])
    add_machine_only_arg(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("gate", help="CI gate: exit 1 when a threshold fails (JUnit XML with --junit)")
    p.add_argument("run", nargs="?", default="latest")
    p.add_argument("--check", action="append", help='e.g. "emotional_soothing mean>=4.0", "faithfulness>=0.8", '
                   '"regression>=-0.2" (repeatable)')
    p.add_argument("--config", help="gate YAML")
    p.add_argument("--baseline", help="baseline run for regression checks")
    p.add_argument("--junit", help="write JUnit XML here")
    p.add_argument("--refuse-untrusted", action="store_true",
                   help="fail when gating on a rubric below its judge-agreement bar")
    add_segment_args(p, by=False)        # zones of "… by week" checks
    add_store_arg(p)
    p.add_argument("--lang", choices=["zh", "en"])
    add_machine_only_arg(p)
    p.set_defaults(func=cmd_gate)


def cmd_report(args) -> int:
    from rubriceval.report.compose import RunReport
    from rubriceval.store.runs import RunStore

    # The run is read once (summary in SQL, rows in chunks) for all three outputs, by the composer the public
    # writers use too (report/compose.py): same sections, same order, whichever way a report is asked for.
    report = RunReport.read(RunStore(args.store), args.run, lang=args.lang, machine_only=args.machine_only,
                            by=args.by, time=segment_settings(args) if args.by else None)
    files = report.write(args.out or "out/reports")
    print(files.markdown_text)
    print(f"HTML report: {files.html.resolve()}")
    print(f"Excel workbook: {files.excel.resolve()}")
    print(f"Markdown summary: {files.markdown.resolve()}")
    return 0


def cmd_compare(args) -> int:
    from rubriceval.report.compare import compare_runs, format_comparison, write_compare_html
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    comparison = compare_runs(store, args.run_a, args.run_b, n_boot=args.n_boot, seed=args.seed, lang=args.lang,
                              machine_only=args.machine_only)
    print(format_comparison(comparison, lang=args.lang))
    from rubriceval.report.scorecard_compare import compare_scorecards, format_scorecard_deltas  # issue 25

    scorecards = compare_scorecards(store, args.run_a, args.run_b, n_boot=args.n_boot, seed=args.seed,
                                    machine_only=args.machine_only)
    if scorecards:
        print(format_scorecard_deltas(scorecards))
    if args.html:
        path = write_compare_html(comparison, args.html, lang=args.lang)
        print(f"comparison report: {Path(path).resolve()}")
    return 0


def cmd_gate(args) -> int:
    from rubriceval.report.gate import run_gate
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    return run_gate(store, args.run, args.check or (), config_path=args.config, baseline=args.baseline,
                    junit_path=args.junit, refuse_untrusted=args.refuse_untrusted or None, lang=args.lang,
                    zones=(args.tz, args.naive_tz), machine_only=args.machine_only)
