"""`rubriceval trend`: a rubric's or metric's figure per period (runs, or day/week/month buckets) and segment, with
CIs and the change against the previous period tested against noise; text, HTML line charts and an Excel sheet. On
official scores (each point says how many rows are human-decided); --machine-only: the judge's."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rubriceval.cli.options import add_store_arg
from rubriceval.cli.reports import add_machine_only_arg, add_segment_args, segment_settings

if TYPE_CHECKING:
    from rubriceval.data.sample import Sample


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("trend", help="figures per period and segment with CIs; the change against the previous "
                       "period with an unpaired test (different conversations each period)")
    p.add_argument("runs", nargs="*", help="runs in any order (default: every complete run of the store)")
    p.add_argument("--period", default="run", help="run (each run one period; default), or day, week, month "
                   "[:timestamp field] buckets of the samples' start times")
    p.add_argument("--scorer", help="comma-separated rubric ids / metric names (default: all)")
    p.add_argument("--statistic", choices=["mean", "pass_rate"], default="mean")
    p.add_argument("--out", help="write trend.html and trend.xlsx here")
    p.add_argument("--n-boot", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lang", choices=["zh", "en"], help="default: zh when the runs' data is Chinese")
    add_segment_args(p)
    add_machine_only_arg(p)
    add_store_arg(p)
    p.set_defaults(func=cmd_trend)


def cmd_trend(args) -> int:
    from rubriceval.data.segment_spec import SegmentError, parse_by
    from rubriceval.report.trend_views import format_trend, render_trend_html, write_trend_workbook
    from rubriceval.store.runs import RunStore
    from rubriceval.trend.series import compute_trend

    groupings = parse_by(args.by)
    if len(groupings) > 1:
        raise SegmentError("a trend follows one grouping: cross fields with '+', not ','", field="by",
                           hint="e.g. --by agent_id or --by agent_id+skill_group")
    store = RunStore(args.store)
    trend = compute_trend(store, args.runs, period=args.period, by=groupings[0] if groupings else None,
                          scorers=[s.strip() for s in (args.scorer or "").split(",") if s.strip()],
                          statistic=args.statistic, settings=segment_settings(args), n_boot=args.n_boot,
                          seed=args.seed, machine_only=args.machine_only)
    args.lang = args.lang or _data_language(store, args.runs)
    print(format_trend(trend, args.lang), end="")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "trend.html").write_text(render_trend_html(trend, args.lang), encoding="utf-8")
        xlsx = write_trend_workbook(trend, out / "trend.xlsx", args.lang)
        print(f"HTML: {(out / 'trend.html').resolve()}\nExcel: {Path(xlsx).resolve()}")
    return 0


def _data_language(store, runs: list[str]) -> str:
    """The language of the trend's data, as a report decides it (detect_language): the samples of the last run named,
    else of the newest (its first window: a run's data is one language in practice); 'en' without a run."""
    from rubriceval.common.errors import RubricEvalError
    from rubriceval.i18n import detect_language

    try:
        run_id = store.resolve(runs[-1] if runs else "latest")
    except RubricEvalError:    # no run to read: the trend itself says so
        return "en"
    first: list[tuple[Sample, str]] = next(iter(store.sample_windows(run_id, 200)), [])
    return detect_language(sample for sample, _ in first)
