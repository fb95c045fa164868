"""Judging through a Batch API: `run … --batch` / `--batch-file DIR` (start), `batch status` and `batch collect`."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from rubriceval.cli.options import add_judge_args, add_store_arg, embedder_config_from, judge_config_from
from rubriceval.common.errors import RubricEvalError

BATCH_DIR_HELP = ("where request/result files go (default: batches/RUN_ID beside the store file; out/batches/RUN_ID "
                  "for a PostgreSQL store)")


def add_run_options(p: argparse.ArgumentParser) -> None:
    """`rubriceval run` options that send the judge calls through a Batch API instead of calling online."""
    g = p.add_argument_group("batch (half price, answers within 24 h; finish with `rubriceval batch collect`)")
    g.add_argument("--batch", action="store_true",
                   help="submit the judge calls to the judge provider's Batch API (also: judge.batch: true)")
    g.add_argument("--batch-file", metavar="DIR",
                   help="write the request JSONL into DIR for an offline runner (vllm run-batch …) instead; "
                        "read its output with `rubriceval batch collect RUN --from DIR`")
    g.add_argument("--batch-dir", metavar="DIR", help=BATCH_DIR_HELP)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="status and results of runs judged through a Batch API")
    actions = p.add_subparsers(dest="batch_command", required=True)

    s = actions.add_parser("status", help="rounds, files, batches, requests and cost of a batch run")
    s.add_argument("run", nargs="?", default="latest")
    add_store_arg(s)
    add_judge_args(s)
    s.set_defaults(func=cmd_status)

    c = actions.add_parser("collect", help="read finished batches, save the verdicts, submit the next round")
    c.add_argument("run", nargs="?", default="latest")
    add_store_arg(c)
    c.add_argument("--from", dest="source", metavar="PATH",
                   help="an offline runner's output JSONL (file, or every JSONL file in a directory)")
    c.add_argument("--finish-online", action="store_true",
                   help="make every call still without a reply (failed, expired, next step) online now")
    c.add_argument("--finish-online-judge", action="append", default=[], metavar="NAME",
                   help="a judge panel's run: finish online only this panel judge's calls (repeatable); the other "
                        "judges' calls still without a reply go to a new batch")
    c.add_argument("--wait", action="store_true", help="keep polling and collecting until the run is complete")
    c.add_argument("--poll", type=float, default=30.0, metavar="SECONDS", help="seconds between polls with --wait")
    c.add_argument("--no-submit", action="store_true", help="read results only; do not submit a next round")
    c.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 4), metavar="N",
                   help="processes that turn replies into verdicts when many are left (default: one per core, ≤ 4)")
    c.add_argument("--batch-dir", metavar="DIR", help=BATCH_DIR_HELP)
    c.add_argument("--quiet", action="store_true")
    add_judge_args(c)
    c.set_defaults(func=cmd_collect)


def wants_batch(args: argparse.Namespace, judge_config) -> bool:
    return bool(getattr(args, "batch", False) or getattr(args, "batch_file", None) or judge_config.batch)


def start_batch_run(args: argparse.Namespace, store, samples, rubrics, metrics, judge_config, panel=None,
                    metric_options=None, scorecards=None) -> int:
    """`rubriceval run … --batch`: create the run, write and submit round 1 (scorecards' questions included)."""
    import asyncio

    from rubriceval.batch import rounds

    given = args.batch_file or args.batch_dir
    batch_run, report = rounds.start_batch_run(
        samples, rubrics, metrics, store=store, judge_config=judge_config, offline=bool(args.batch_file),
        directory=Path(given) if given else None, embedder_config=embedder_config_from(args), name=args.name,
        dataset_path=args.dataset or "", rubrics_path=args.rubrics or "", metric_options=metric_options,
        panel_config=panel, scorecards=scorecards)
    try:
        info = store.run_info(batch_run.run_id)
        print(f"run {info.name} ({info.run_id}): round 1, {report.submitted} request(s) in {batch_run.directory}"
              + (f", batches {', '.join(report.new_batches)}" if report.new_batches else "") + f" · {_took(report)}")
        for line in _endpoint_files(batch_run):
            print(line)
        if report.submitted == 0:           # all cached, or nothing to ask a judge: verdicts now
            report = asyncio.run(batch_run.collect(source=None))
            print(_line(batch_run, report))
            _scorecard_line(store, batch_run)
        elif batch_run.offline:
            print(f"run the files with your runner (e.g. vllm run-batch -i FILE -o {batch_run.directory}/FILE.out"
                  f".jsonl), then: rubriceval batch collect {info.name} --from {batch_run.directory}")
        else:
            print(f"follow it with: rubriceval batch status {info.name} · rubriceval batch collect {info.name} --wait")
    finally:
        batch_run.close()
    return 0


def _open(args: argparse.Namespace):
    """The stored run and a BatchRun for it, with the judge it started with (the key from the environment/config;
    --judge-base-url overrides the provider)."""
    from rubriceval.batch.rounds import BatchRun
    from rubriceval.judge.config import JudgeConfig
    from rubriceval.store.batches import BatchStore
    from rubriceval.store.location import display_location, folder_beside_store
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    run_id = store.resolve(args.run)
    info = store.run_info(run_id)
    given = judge_config_from(args)
    stored = {k: v for k, v in info.config.judge.items() if k in JudgeConfig.model_fields}
    config = JudgeConfig.model_validate({**stored, "api_key": given.api_key})
    if args.judge_base_url or os.environ.get("RUBRICEVAL_JUDGE_BASE_URL"):
        config = config.model_copy(update={"base_url": given.base_url})
    files = BatchStore(store).files(run_id)
    if not files and info.status != "complete":
        raise RubricEvalError(f"run '{info.name}' was not judged through batches", file=display_location(store.path),
                              hint="start one with `rubriceval run … --batch`")
    offline = bool(files) and all(f.target == "offline" for f in files)
    directory = Path(args.batch_dir) if getattr(args, "batch_dir", None) else (
        Path(files[0].path).parent if files else folder_beside_store(store.path) / "batches" / run_id)
    return store, info, BatchRun(store, run_id, config, directory=directory, offline=offline)


def _endpoint_files(batch_run) -> list[str]:
    """A panel's run: which files go to which judges (each endpoint is its own provider account and model)."""
    if not batch_run.judges.is_panel:
        return []
    files = batch_run.batches.files(batch_run.run_id)
    return [f"  judges {', '.join(n or '(metrics judge)' for n in endpoint.judges)} → {endpoint.config.short_name()}:"
            f" {sum(f.endpoint == endpoint.name for f in files)} file(s)" for endpoint in batch_run.judges.endpoints]


def _line(batch_run, report, *, per_endpoint: bool = False) -> str:
    from rubriceval.batch.progress import by_endpoint, endpoint_lines, progress_line

    took = _took(report)
    parts = by_endpoint(batch_run.batches, batch_run.run_id, batch_run.judges)
    return "\n".join([progress_line(report.requests, batch_run.config, report.units_done, report.units_total,
                                    malformed=report.read.malformed, endpoints=parts) + (f" · {took}" if took else ""),
                      *(endpoint_lines(parts) if per_endpoint else [])])


def _took(report) -> str:
    return ", ".join(f"{name.removesuffix('_s').replace('_', ' ')} {seconds:.1f}s"
                     for name, seconds in report.timings.items() if seconds >= 0.05)


def cmd_status(args) -> int:
    from rubriceval.batch.collect import poll
    from rubriceval.batch.progress import by_endpoint, endpoint_lines, progress_line, status_table

    store, info, batch_run = _open(args)
    try:
        for endpoint in batch_run.judges.endpoints:
            if endpoint.name in batch_run.providers:
                poll(batch_run.batches, batch_run.providers[endpoint.name], batch_run.run_id, endpoint.name)
        print(f"run {info.name} ({info.run_id}): {info.status}")
        print(status_table(batch_run.batches.files(batch_run.run_id)))
        units_total = int((info.stats.get("batch") or {}).get("units_total") or 0)
        parts = by_endpoint(batch_run.batches, batch_run.run_id, batch_run.judges)
        print(progress_line(batch_run.batches.counts(batch_run.run_id), batch_run.config,
                            batch_run.judgments_done(), units_total, endpoints=parts))
        for line in endpoint_lines(parts):
            print(line)
    finally:
        batch_run.close()
    return 0


def cmd_collect(args) -> int:
    import asyncio

    store, info, batch_run = _open(args)
    source = Path(args.source) if args.source else None
    if source is not None and not source.exists():
        raise RubricEvalError("no such file or directory", file=str(source), field="--from")
    try:
        while True:
            report = asyncio.run(_collect_once(args, batch_run, source))
            if not args.quiet or report.complete:
                print(_line(batch_run, report, per_endpoint=not args.quiet)
                      + (f" · {report.submitted} request(s) in round {report.round}" if report.submitted else ""),
                      file=sys.stderr)
            if report.complete or not args.wait or source is not None:
                break
            time.sleep(args.poll)
    finally:
        batch_run.close()
    if report.complete and not args.quiet:
        _summary(store, info.run_id, report)
        _scorecard_line(store, batch_run)
    return 0


def _scorecard_line(store, batch_run) -> None:
    """A batch run's scorecards, as `rubriceval run` prints them (counted from the store)."""
    if batch_run.scorecards:
        from types import SimpleNamespace

        from rubriceval.cli.scorecard_run import print_scorecard_line
        from rubriceval.run.scorecard_stage import stored_totals

        print_scorecard_line(SimpleNamespace(scorecards=stored_totals(store, batch_run.run_id).as_dict()), stored=True)


async def _collect_once(args, batch_run, source):
    from rubriceval.local.backends import make_embedder
    from rubriceval.standard_metrics.registry import needs_embedder

    only = args.finish_online_judge or None
    if only and not batch_run.judges.is_panel:
        raise RubricEvalError("--finish-online-judge names a judge of a panel; this run has one judge",
                              field="--finish-online-judge", hint="use --finish-online")
    # One online client per judge finishing online (a panel's judges may sit at different providers).
    online = batch_run.online_judges(only) if (args.finish_online or only) else {}
    batch_run.workers = max(1, args.workers)
    if batch_run.metrics and needs_embedder(batch_run.metrics):
        batch_run.embedder_config = embedder_config_from(args)
        batch_run.embedder = make_embedder(batch_run.embedder_config, announce=False)
    try:
        return await batch_run.collect(source=source, finish_online=online or None, submit=not args.no_submit)
    finally:
        for client in online.values():
            await client.close()


def _summary(store, run_id: str, report) -> None:
    """The run's summary, as `rubriceval run` prints it (scorecards on their own line); the counts come from SQL (no
    verdict is loaded)."""
    from rubriceval.cli.run_summary import print_run_summary
    from rubriceval.core.totals import RunTotals
    from rubriceval.store.batches import BatchStore

    units, saved = report.units_total - report.scorecard_units, report.saved - report.scorecards_saved
    totals = RunTotals(units_total=units, units_skipped=units - saved)
    for unscored_kind, n in BatchStore(store).verdict_counts(run_id).items():
        for _ in range(n):
            totals.count(unscored_kind is None, unscored_kind)
    totals.units_done = saved                 # new in this collect; the counts above are the whole run's
    print_run_summary(store, run_id, totals)
