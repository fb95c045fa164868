"""Evaluate: `run` (new, --resume, --rescore-changed, --dry-run, --panel) and `runs` (list the stored runs)."""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

from rubriceval.cli.batch import add_run_options, start_batch_run, wants_batch
from rubriceval.cli.options import add_judge_args, add_store_arg, embedder_config_from, judge_config_from
from rubriceval.cli.run_summary import print_run_summary
from rubriceval.cli.scorecard_run import add_scorecard_args, print_scorecard_line, scorecards_for_run
from rubriceval.common.errors import RubricEvalError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="evaluate a dataset with rubrics and/or metrics")
    p.add_argument("dataset", nargs="?")
    p.add_argument("--rubrics", help="rubric file or directory, or store: — the newest version of each rubric the "
                   "studio saved in --store (store:ID for one, store:ID@N for its version N)")
    p.add_argument("--only", help="comma-separated rubric ids to use from --rubrics")
    p.add_argument("--knowledge", metavar="FILE", help="a knowledge file of policies (.md/.txt/.jsonl) for every "
                   "rubric and scorecard without its own knowledge: — context conditions, per-turn questions and "
                   "a rubric's judge items and checklist questions read it (docs/predicates.md, docs/scorecards.md)")
    p.add_argument("--metrics", help="comma-separated metric names (see `rubriceval metrics`)")
    add_store_arg(p)
    p.add_argument("--name", help="run name (default: timestamp)")
    p.add_argument("--out", help="write per-row results (CSV, JSONL) to this directory")
    p.add_argument("--resume", metavar="RUN", help="finish an interrupted run")
    p.add_argument("--dry-run", action="store_true", help="plan calls, tokens and cost; spend nothing")
    p.add_argument("--rescore-changed", metavar="RUN", help="re-score only rows whose inputs changed since RUN")
    p.add_argument("--panel", metavar="FILE", help="judge the rubrics with the panel of judges listed under "
                   "'judges:' in FILE (default: the judges: of --config, if any); median score, majority pass")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--format", default="auto", choices=("auto", "dataset", "chatlog", "otel", "langfuse"),
                   help="what DATASET is (default: told by its content): a dataset, a chat-log export, OpenTelemetry "
                        "GenAI spans (OTLP/JSON) or a Langfuse trace/session export (docs/ingest.md)")
    p.add_argument("--speaker-map", metavar="SPEAKER=ROLE,…",
                   help="chat-log export (one row per message): speakers' roles, e.g. 客服=assistant,用户=user")
    p.add_argument("--metric-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a standard-metric option, over the --config file's metrics: section (repeatable), e.g. "
                        "sql.mode=columns, sql.database=shop.sqlite, agent.argument_match=case_insensitive, "
                        "agent.strict_order=false, agent.topic_mode=recall; a resumed run keeps its own")
    p.add_argument("--threshold", action="append", default=[], metavar="METRIC=VALUE",
                   help="a metric's pass threshold (its verdicts' passed, the reports' pass rate), over the "
                        "--config file's metrics: {<metric>: {threshold: …}} (repeatable), e.g. faithfulness=0.8")
    p.add_argument("--no-cross-check", action="store_true",
                   help="do not add the non-LLM twin of context_recall/context_precision (computed from the "
                        "reference contexts, no judge call) that cross-checks them in the report")
    add_judge_args(p)
    add_run_options(p)
    add_scorecard_args(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("runs", help="list stored runs")
    add_store_arg(p)
    p.set_defaults(func=cmd_runs)


def _panel_config(args, judge_config):
    """The judge panel: `--panel FILE`, else the `judges:` of `--config` (None when neither has one)."""
    from rubriceval.scoring.panel import load_panel_config

    path = getattr(args, "panel", None) or args.config
    panel = load_panel_config(path, base=judge_config) if path else None
    if panel is None and getattr(args, "panel", None):
        raise RubricEvalError("no 'judges:' list in the panel file", file=args.panel, field="judges",
                              hint="judges: [{name: a, model: …}, {name: b, model: …}]")
    return panel


def _chatlog_config(args):
    """--speaker-map for chat-log exports (one row per message); None leaves the dataset's own config/defaults."""
    if not args.speaker_map:
        return None
    from rubriceval.data.chatlog import ChatLogConfig, parse_speaker_map

    return ChatLogConfig(speakers=parse_speaker_map(args.speaker_map))


def _load_for_run(args):
    from rubriceval.data.io import DatasetStream
    from rubriceval.run.evaluate import parse_metric_names
    from rubriceval.store.stored_sources import load_rubrics

    samples = DatasetStream(args.dataset, chatlog=_chatlog_config(args),      # read as a stream, never held whole
                            fmt=args.format)
    rubrics = load_rubrics(args.rubrics, only=args.only.split(",") if args.only else None,
                           store=args.store) if args.rubrics else []
    if getattr(args, "knowledge", None):          # the run's knowledge file, for rubrics that name none
        from pathlib import Path

        from rubriceval.data.knowledge import load_knowledge

        load_knowledge(args.knowledge)             # a missing or bad file fails here, naming it
        where = str(Path(args.knowledge).resolve())
        rubrics = [r if r.knowledge else r.model_copy(update={"knowledge": where}) for r in rubrics]
    metrics = parse_metric_names(args.metrics)
    if not rubrics and not metrics and not args.scorecards:
        raise RubricEvalError("nothing to evaluate", hint="pass --rubrics DIR, --metrics a,b,c and/or --scorecards DIR")
    return samples, rubrics, metrics


def cmd_run(args) -> int:
    import asyncio

    from rubriceval.judge.config import JudgeConfig
    from rubriceval.run.evaluate import rubrics_from_run, run_async
    from rubriceval.run.metric_config import load_metric_options, stored_metric_options
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    judge_config = judge_config_from(args)
    panel = _panel_config(args, judge_config)
    metric_options = load_metric_options(args.config, args.metric_option, args.threshold)
    if args.no_cross_check:
        metric_options = metric_options.model_copy(update={"cross_check": False})
    if args.resume:
        run_id = store.resolve(args.resume)
        samples = store.samples(run_id) if args.dry_run else None     # a run reads them from the store, by window
        rubrics, metrics = rubrics_from_run(store, run_id)
        info = store.run_info(run_id)
        # Resume with the judge the run started with, unless the user overrides it.
        stored = {k: v for k, v in info.config.judge.items() if k in JudgeConfig.model_fields}
        if not args.judge_base_url and not os.environ.get("RUBRICEVAL_JUDGE_BASE_URL"):
            judge_config = JudgeConfig.model_validate({**stored, "api_key": judge_config.api_key})
        if info.config.panel and not args.panel:             # and with its judge panel
            from rubriceval.scoring.panel import PanelConfig

            panel = PanelConfig.from_public(info.config.panel, api_key=judge_config.api_key)
        metric_options = stored_metric_options(info.config.metric_options, run_id)     # scored alike to the end
        print(f"resuming run {info.name} ({info.n_verdicts} verdicts already stored)", file=sys.stderr)
    else:
        if args.rescore_changed:
            return _rescore_changed(args, store, judge_config)
        if not args.dataset:
            raise RubricEvalError("rubriceval run needs a DATASET (or --resume RUN, or --rescore-changed RUN)")
        samples, rubrics, metrics = _load_for_run(args)
        from rubriceval.run.evaluate import check_thresholds

        check_thresholds(metric_options.thresholds, metrics)
    scorecards = scorecards_for_run(args, store, rubrics, judge_config)
    if args.dry_run:
        return _dry_run(samples, rubrics, metrics, judge_config, panel, metric_options, scorecards)
    if wants_batch(args, judge_config) and not args.resume:      # rubriceval/batch/: rounds of batches
        return start_batch_run(args, store, samples, rubrics, metrics, judge_config, panel, metric_options, scorecards)
    run_id, totals = asyncio.run(run_async(
        samples, rubrics, metrics, store=store, scorecards=scorecards, judge_config=judge_config,
        embedder_config=embedder_config_from(args),
        name=args.name, dataset_path=args.dataset or "", rubrics_path=args.rubrics or "",
        progress=not args.quiet, resume_run=args.resume, panel_config=panel, metric_options=metric_options,
        workers=None))          # a big checks-and-string-metrics run: one process per idle core (runner_pool.py)
    print_run_summary(store, run_id, totals)
    if args.out:
        _write_outputs(store, run_id, Path(args.out))
    print_scorecard_line(totals)
    return 0


def _rescore_changed(args, store, judge_config) -> int:
    """A new run over the expert-corrected dataset: changed rows are re-scored, unchanged verdicts are carried over."""
    import asyncio

    from rubriceval.run.evaluate import rescore_changed

    run_id, totals, n_changed = asyncio.run(rescore_changed(
        store, args.rescore_changed, judge_config=judge_config, embedder_config=embedder_config_from(args),
        name=args.name, progress=not args.quiet))
    print(f"{n_changed} row(s) changed since run '{args.rescore_changed}'; re-scored only those")
    print_run_summary(store, run_id, totals)
    return 0


def _dry_run(samples, rubrics, metrics, judge_config, panel=None, metric_options=None, scorecards=()) -> int:
    from rubriceval.run.cross_check import planned_cross_checks
    from rubriceval.run.planning import plan_cost

    metrics, _, notes = planned_cross_checks(samples, metrics, metric_options)     # as start_run will add them
    plan = plan_cost(samples, rubrics, metrics, judge_config, panel=panel, metric_options=metric_options,
                     scorecards=scorecards)
    plan.notes += notes
    print(plan.format())
    return 0


def _write_outputs(store, run_id: str, out: Path) -> None:
    import pandas as pd

    from rubriceval.data.spreadsheet import escape_frame
    from rubriceval.report.source import RunSource
    from rubriceval.run.cross_check import mark_results, stored_twins
    from rubriceval.run.scorecard_rows import CARD_COLUMNS, scorecard_records
    from rubriceval.store.runs import verdict_record
    from rubriceval.store.scorecards import ScorecardStore

    twins = stored_twins(store.scorers(run_id))          # metrics the run added for a cross-check: marked
    has_cards = bool(ScorecardStore(store).cards(run_id))
    out.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []                              # one header for rubric, metric and scorecard rows

    def write(frame, csv_out, jsonl_out) -> None:
        nonlocal columns
        if not columns:
            columns = list(frame.columns) + [c for c in CARD_COLUMNS if has_cards and c not in frame.columns]
        frame = frame.reindex(columns=columns)
        escape_frame(frame).to_csv(csv_out, index=False, header=csv_out.tell() == 0)   # no cell runs as a formula
        frame.to_json(jsonl_out, orient="records", lines=True, force_ascii=False)

    # Written a chunk of rows at a time (one header), so a million-row run is never held whole.
    with (out / "results.csv").open("w", encoding="utf-8-sig", newline="") as csv_out, \
            (out / "results.jsonl").open("w", encoding="utf-8") as jsonl_out:
        for chunk in RunSource(store, run_id).verdict_chunks():
            write(mark_results(pd.DataFrame([verdict_record(v, s) for v, s in chunk]), twins), csv_out, jsonl_out)
        rows: list[dict] = []
        for row in scorecard_records(store, run_id):      # a row per conversation × item, and the total
            rows.append(row)
            if len(rows) >= 5000:
                write(pd.DataFrame(rows), csv_out, jsonl_out)
                rows = []
        if rows:
            write(pd.DataFrame(rows), csv_out, jsonl_out)
    print(f"per-row results: {out / 'results.csv'} and {out / 'results.jsonl'}")


def cmd_runs(args) -> int:
    from rubriceval.store.location import display_location
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    runs = store.list_runs()
    if not runs:
        print(f"no runs in {display_location(store.path)}")
    for r in runs:
        when = dt.datetime.fromtimestamp(r.created_at).strftime("%Y-%m-%d %H:%M")
        scorers = ",".join(list(r.config.rubrics) + r.config.metrics)
        print(f"{r.run_id}  {r.name:<32} {when}  {r.status:<11} samples={r.n_samples} verdicts={r.n_verdicts}  "
              f"{scorers}" + (f"  ({r.hint})" if r.hint else ""))
    return 0
