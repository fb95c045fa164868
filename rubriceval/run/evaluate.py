"""Python API: `rubriceval.evaluate(dataset, rubrics=…, metrics=…)` and the run lifecycle the CLI uses."""
from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from rubriceval.common.errors import ConfigError
from rubriceval.core.totals import RunTotals
from rubriceval.data.inputs import dataset_samples
from rubriceval.data.io import DatasetStream
from rubriceval.data.sample import Sample
from rubriceval.embed.config import EmbedderConfig, load_embedder_config
from rubriceval.judge.config import JudgeConfig, load_judge_config
from rubriceval.local.backends import make_embedder, make_judge, public_judge_config
from rubriceval.rubric.schema import Rubric
from rubriceval.run.dataset_scan import DatasetScan
from rubriceval.run.result import EvaluationResult  # noqa: F401  (public here too)
from rubriceval.run.runner import execute
from rubriceval.store.runs import RunConfig, RunStore, rubrics_from_run  # noqa: F401  (rubrics_from_run: public here too)
from rubriceval.store.stored_sources import load_rubrics

if TYPE_CHECKING:
    from rubriceval.standard_metrics.options import MetricOptions


def parse_metric_names(metrics: list[str] | str | None) -> list[str]:
    """Metric names from a list or a comma-separated string ("faithfulness, rouge_l"); unknown names are an error."""
    if not metrics:
        return []
    names = [m.strip() for m in (metrics.split(",") if isinstance(metrics, str) else metrics) if m.strip()]
    from rubriceval.standard_metrics.names import check_known

    return check_known(names)


def _needs(metrics: list[str], what: str, options: MetricOptions | None = None) -> bool:
    if not metrics:
        return False
    from rubriceval.standard_metrics import registry

    return getattr(registry, f"needs_{what}")(metrics, options)


def _metric_options(options: MetricOptions | dict | None, store: RunStore, run_id: str | None) -> MetricOptions:
    """The options given (a dict is validated); none given on a resumed run: the ones it was started with."""
    from rubriceval.run.metric_config import stored_metric_options
    from rubriceval.standard_metrics.options import MetricOptions

    if options is None and run_id is not None:
        return stored_metric_options(store.run_info(run_id).config.metric_options, run_id)
    try:
        return MetricOptions.coerce(options)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(error["msg"], field=".".join(map(str, ("metric_options", *error["loc"])))) from None


def scorer_rows(rubrics: list[Rubric], metrics: list[str], thresholds: dict[str, float] | None = None,
                twins: dict[str, str] | None = None) -> list[tuple[str, str, str, dict]]:
    """The run's scorers as the store keeps them; a metric's threshold set for the run is in its definition, where
    reports and gates read it (standard_metrics/thresholds.py); a metric added to cross-check another (`twins`:
    twin → LLM metric) is marked in its definition (run/cross_check.py)."""
    from rubriceval.run.cross_check import twin_definition

    rows = [(r.id, "rubric", r.version_tag, r.model_dump(mode="json")) for r in rubrics]
    rows += [(m, "metric", "1", {"name": m, **(twin_definition(m, twins[m]) if twins and m in twins else {}),
                                 **({"threshold": thresholds[m]} if thresholds and m in thresholds else {})})
             for m in metrics]
    return rows


def check_thresholds(thresholds: dict[str, float], metrics: list[str]) -> None:
    """A threshold names one of the run's metrics (a rubric's own threshold is in its YAML), or the non-LLM twin
    the cross-check adds beside one of them (start_run refuses it if the twin is not added after all)."""
    from rubriceval.standard_metrics.scope import CROSS_CHECK_TWINS

    allowed = {*metrics, *(twin for llm, twin in CROSS_CHECK_TWINS.items() if llm in metrics)}
    unknown = [name for name in thresholds if name not in allowed]
    if unknown:
        raise ConfigError(f"threshold for {', '.join(map(repr, unknown))}, which is not a metric of this run",
                          field="thresholds", hint=f"metrics of this run: {', '.join(metrics) or 'none'}; a "
                                                   "rubric's pass threshold is its YAML `threshold:`")


def start_run(samples: Iterable[Sample | tuple[int | None, Sample]], rubrics: list[Rubric], metrics: list[str], *,
              store: RunStore,
              judge_config: JudgeConfig, embedder_config: EmbedderConfig | None = None, name: str | None = None,
              dataset_path: str = "", rubrics_path: str = "", panel_config: Any = None,
              metric_options: MetricOptions | None = None) -> tuple[str, list[Rubric]]:
    """A new run in the store, before anything is judged: the judge mode applied to the rubrics, rubrics that apply
    to no sample left out (with a note), trust warnings said. Returns the run id and the rubrics it uses (online
    runs and the Batch API mode both start here).

    samples: a list, or a `DatasetStream` (a file read as a stream): it is read once, into the store (one copy per
    dataset version), and what the run needs to know is noted on the way."""
    from rubriceval.scoring.judge_mode import judging_models, with_judge_mode  # each rubric's mode for its judge(s)

    rubrics, notes = with_judge_mode(rubrics, judge_config.judge_mode,
                                     judge_models=judging_models(judge_config, panel_config))
    from rubriceval.safety.manipulation_policy import screen_notes

    notes += screen_notes(rubrics, judge_config)
    for line in notes:
        print(line, file=sys.stderr)
    store.check_name_free(name)
    scan = DatasetScan(rubrics)
    from rubriceval.run.cross_check import ReferenceTally, cross_check_twins, with_twins

    references = ReferenceTally()

    def observe(sample: Sample, input_hash: str) -> None:
        scan.observe(sample, input_hash)
        references.observe(sample)
    numbered = samples.with_lines() if isinstance(samples, DatasetStream) else samples
    dataset = store.store_dataset(numbered, source=dataset_path, observe=observe)
    # A rubric directory often holds rubrics for other datasets (e.g. a copy of benchmarks/judge/rubrics/);
    # leave out those that apply to no sample here, and say so, rather than reporting empty rows.
    unused = scan.unused_rubrics(rubrics)
    if unused:
        print(f"note: rubric(s) applying to no sample in this dataset are left out: {', '.join(unused)}",
              file=sys.stderr)
        rubrics = [r for r in rubrics if r.id not in unused]
    # Likewise metrics for a kind of sample the dataset lacks (agent metrics without conversations …).
    from rubriceval.standard_metrics.scope import unused_metrics, unused_metrics_note

    unused_metric = unused_metrics(list(scan.examples.values()), metrics)     # one sample of each kind
    if unused_metric:
        print(unused_metrics_note(unused_metric), file=sys.stderr)
        metrics = [m for m in metrics if m not in unused_metric]
    # An LLM retrieval metric on samples with reference contexts: its non-LLM twin beside it (run/cross_check.py).
    twins, twin_notes = cross_check_twins(metrics, references, metric_options)
    for line in twin_notes:
        print(line, file=sys.stderr)
    unadded = [name for name in (metric_options.thresholds if metric_options else {})
               if name not in metrics and name not in twins]
    if unadded:
        raise ConfigError(f"threshold for {', '.join(map(repr, unadded))}: the cross-check did not add it to this "
                          "run", field="thresholds", hint="list the metric itself (e.g. --metrics …,"
                          f"{unadded[0]}), or give every sample reference_contexts")
    metrics = with_twins(metrics, twins)
    # Say up front which rubrics are used below their own trust bar (the run still goes ahead).
    from rubriceval.trust.release_gate import run_warnings

    for line in run_warnings(store.path, rubrics, judge_model=judge_config.model):
        print(line, file=sys.stderr)
    use_panel = panel_config is not None and any(r.judge_items for r in rubrics)
    from rubriceval.run.metric_config import public_metric_options

    config = RunConfig(dataset_path=dataset_path, dataset_hash=scan.dataset_hash,
                       rubrics={r.id: r.version_tag for r in rubrics}, metrics=metrics,
                       judge=public_judge_config(judge_config),
                       panel=panel_config.public() if use_panel else {},
                       embedder=(embedder_config.model_dump(exclude={"api_key"}) if embedder_config else {}),
                       rubrics_path=rubrics_path,
                       metric_options=public_metric_options(metric_options) if metric_options else {})
    rows = scorer_rows(rubrics, metrics, metric_options.thresholds if metric_options else None, twins)
    return store.create_run(config, dataset, rows, name=name), rubrics


async def run_async(samples: Iterable[Sample | tuple[int | None, Sample]] | None, rubrics: list[Rubric],
                    metrics: list[str], *, store: RunStore,
                    judge_config: JudgeConfig, embedder_config: EmbedderConfig | None = None,
                    name: str | None = None, dataset_path: str = "", rubrics_path: str = "",
                    progress: bool = True, resume_run: str | None = None,
                    panel_config: Any = None, metric_options: MetricOptions | dict | None = None,
                    workers: int | None = 1, scorecards: list | None = None) -> tuple[str, RunTotals]:
    """panel_config: a `rubriceval.scoring.panel.PanelConfig` whose judges judge the rubrics (the judge config then
    serves the metrics). samples: as `start_run` takes them (None to resume: the run's samples are in the store);
    the run reads them back from the store a window at a time. metric_options: `MetricOptions` (or a dict of its
    fields) for the standard metrics; None: defaults, or on a resumed run the options it was started with.
    workers: processes for a run without judge, panel or embedder (`rubriceval.run.runner.execute`; None: automatic)."""
    if resume_run:
        run_id = store.resolve(resume_run)
        options = _metric_options(metric_options, store, run_id)
        from rubriceval.scoring.judge_mode import judging_models, resumed_mode_notes  # versions kept: say so

        for line in resumed_mode_notes(rubrics, judging_models(judge_config, panel_config)):
            print(line, file=sys.stderr)
    else:
        if samples is None:
            raise ValueError("a new run needs samples (None is for resuming a run)")
        options = _metric_options(metric_options, store, None)
        run_id, rubrics = start_run(samples, rubrics, metrics, store=store, judge_config=judge_config,
                                    embedder_config=embedder_config, name=name, dataset_path=dataset_path,
                                    rubrics_path=rubrics_path, panel_config=panel_config, metric_options=options)
        metrics = store.run_info(run_id).config.metrics     # as started: cross-check twins added (cross_check.py)
    # Scorecards (rubriceval/run/scorecard_stage.py): stored with a new run, read back on a resume; scored after the
    # rubrics and metrics, whose verdicts their `rubric:` items read. Imported only when there may be some.
    if scorecards or resume_run:
        from rubriceval.run.scorecard_stage import needs_judge, prepare_scorecards, score_run_scorecards

        scorecards = prepare_scorecards(store, run_id, scorecards, rubrics, resumed=bool(resume_run))
    scorecards = scorecards or []
    use_panel = panel_config is not None and any(r.judge_items for r in rubrics)
    from rubriceval.scoring.turn_questions import asks_judge

    # A rubric scored without the panel asks the run's judge: checks' per-turn questions (predicates mode) too.
    need_judge = any(asks_judge(r) for r in rubrics if not (use_panel and r.judge_items)) \
        or _needs(metrics, "judge", options) or (bool(scorecards) and needs_judge(scorecards))
    need_embedder = _needs(metrics, "embedder", options)
    judge = make_judge(judge_config) if need_judge else None
    panel = None
    if use_panel:
        from rubriceval.scoring.panel import make_panel

        panel = make_panel(panel_config, stats=judge.stats if judge is not None else None)
    embedder = make_embedder(embedder_config or EmbedderConfig()) if need_embedder else None
    # issue 44: a rubric's auto_accept target — fitted once on the reviews made before the run, said before judging
    # ("cannot accept anything yet: 0 reviews"); verdicts outside the region are stored pending review
    accept = None
    if any(r.auto_accept is not None for r in rubrics):
        from rubriceval.trust.rubric_selective import RubricAcceptance

        accept = RubricAcceptance(store, run_id, rubrics)
        for line in accept.notes():
            print(f"note: {line}", file=sys.stderr)
    store.set_status(run_id, "running")
    status, totals = "interrupted", None
    started = time.perf_counter()
    try:
        # A scorecards-only run has no rubric stage to show: its bar would read "40/40 calls=0" at once.
        totals = await execute(store, run_id, None, rubrics, metrics, judge=judge, embedder=embedder,
                               progress=progress and bool(rubrics or metrics or not scorecards), panel=panel,
                               metric_options=options, workers=workers, accept=accept)
        if scorecards:
            # Conversations in flight as for the rubrics' samples: enough to keep the judge's concurrency busy (a
            # fixed 8 left a 64-slot vLLM server mostly idle: 3 calls per conversation, asked one after another).
            in_flight = max(8, 2 * judge.config.concurrency) if judge is not None else 8
            totals.scorecards = (await score_run_scorecards(store, run_id, scorecards, judge, concurrency=in_flight,
                                                            progress=progress)).as_dict()
        status = "complete"
    finally:
        counters = judge.stats if judge is not None else panel.stats if panel is not None else None
        if totals is not None:       # the whole run, scorecard stage included (execute counts its own stage only)
            totals.wall_s = time.perf_counter() - started
            totals.judge = counters.as_dict() if counters is not None else totals.judge
        stats = totals.as_dict() if totals else {"judge": counters.as_dict() if counters else {}}
        store.set_status(run_id, status, stats)
        if judge is not None:
            await judge.close()
        if panel is not None:
            await panel.close()
    return run_id, totals


async def rescore_changed(store: RunStore, run: str, *, judge_config: JudgeConfig,
                          embedder_config: EmbedderConfig | None = None, name: str | None = None,
                          progress: bool = True) -> tuple[str, RunTotals, int]:
    """New run over the expert-corrected samples of `run`: verdicts of unchanged rows are copied, changed rows are
    judged again (matched by Sample.input_hash, so only real input changes count)."""
    from rubriceval.store.export import changed_samples

    old_id = store.resolve(run)
    info = store.run_info(old_id)
    rubrics, metrics = rubrics_from_run(store, old_id)
    changed = {s.id: s for s in changed_samples(store.path, old_id)}
    name = name or f"{info.name}-rescored-{len(changed)}"
    store.check_name_free(name)
    scan = DatasetScan([])
    corrected = (changed.get(s.id, s) for window in store.sample_windows(old_id) for s, _ in window)
    dataset = store.store_dataset(corrected, observe=scan.observe)
    config = info.config.model_copy(update={"dataset_hash": scan.dataset_hash,
                                            "dataset_path": f"{info.config.dataset_path} (corrected from {info.name})"})
    thresholds = {row["scorer"]: row["definition"]["threshold"] for row in store.scorers(old_id)
                  if row.get("kind") == "metric" and (row.get("definition") or {}).get("threshold") is not None}
    from rubriceval.run.cross_check import stored_twins

    new_id = store.create_run(config, dataset, scorer_rows(rubrics, metrics, thresholds,
                                                           stored_twins(store.scorers(old_id))), name=name)
    store.copy_verdicts(old_id, new_id, leave_out=list(changed))
    new_id, totals = await run_async(None, rubrics, metrics, store=store, judge_config=judge_config,
                                     embedder_config=embedder_config, progress=progress, resume_run=new_id)
    return new_id, totals, len(changed)


def evaluate(dataset: Any, *, rubrics: str | Path | list[Rubric | str | Path] | None = None,
             metrics: list[str] | str | None = None, judge: JudgeConfig | dict | None = None,
             embedder: EmbedderConfig | dict | None = None, store: str | Path | None = None,
             name: str | None = None, progress: bool = True, panel: Any = None,
             metric_options: MetricOptions | dict | None = None,
             thresholds: dict[str, float] | None = None, scorecards: Any = None) -> EvaluationResult:
    """Evaluate a dataset with rubrics, metrics and/or scorecards; every verdict is stored and returned.

        result = evaluate("datasets/demo_cs_zh.jsonl", rubrics="rubrics", metrics="faithfulness,rouge_l")
        result                      # {'emotional_soothing': 4.2, 'faithfulness': 0.81, …}: means of scored rows
        result["faithfulness"]      # per-sample values, in dataset order (None: unscored or not applicable)
        result.to_pandas()          # one row per sample × rubric/metric
        result.to_pandas(wide=True) # one row per sample, a column per rubric/metric
        result.unscored_counts      # unscored rows per scorer (never averaged in)

    dataset   a JSONL/CSV/Excel file (column names as in the README; Ragas's names work too), a list of Samples or
              of dicts, a pandas DataFrame, a Ragas EvaluationDataset or list of SingleTurnSample/MultiTurnSample,
              a Hugging Face Dataset or its column dict. Ragas's column names (user_input, response,
              retrieved_contexts, reference) or ours (question, answer, contexts, ground_truth); `id` is optional
              (generated from the row's content: stable from run to run). See rubriceval/data/inputs.py.
    rubrics   a rubric YAML file or a folder of them, or a list of Rubric objects or paths; None: metrics only. Rubrics that
              apply to no sample of the dataset are left out, with a note. "store:" (or "store:ID", "store:ID@N"):
              the rubric versions the studio saved in `store` (docs/studio.md), the same rubrics as their files.
    metrics   standard metric names, as a list or a comma-separated string (`rubriceval metrics` lists them);
              an unknown name raises ConfigError before anything runs. context_recall/context_precision on samples
              with reference contexts bring their non-LLM twin along, to cross-check them (`result.cross_checks`;
              metric_options={"cross_check": False} leaves it out).
    judge     a JudgeConfig, or a dict of its fields; None: the environment (RUBRICEVAL_JUDGE_BASE_URL, …), else the
              embedded local judge (offline, weak: not for trusted grading).
    embedder  an EmbedderConfig, or a dict of its fields, for the metrics that embed text; None: the environment
              (RUBRICEVAL_EMBED_BASE_URL, …), else the embedded local embedder.
    store     the run store: a SQLite file, or a team's PostgreSQL database as a URL (postgresql://user@host:5432/db,
              needs `pip install 'rubriceval[postgres]'`); None: out/runs.sqlite. Every verdict is written there as
              it is made.
    name      the run's name in the store; None: a timestamp.
    progress  show a progress bar on stderr.
    panel     judge the rubrics with several judges: a PanelConfig, or a YAML file with `judges:`
              (rubriceval.scoring.panel); None: the one `judge`.
    metric_options  a `standard_metrics.MetricOptions`, or a dict of its fields (e.g. {"sql": {"mode": "columns"},
              "agent": {"argument_match": "case_insensitive"}}); None: the defaults.
    thresholds  pass thresholds per metric ({"faithfulness": 0.8}): each metric verdict's `passed`, the reports'
              pass rates and the gates use them; unset: standard_metrics/thresholds.py's defaults (faithfulness
              0.8, answer_correctness/answer_relevancy/context_precision/context_recall 0.7, others 0.5). A
              rubric's threshold is its YAML `threshold:`.
    scorecards  a scorecard YAML file or folder (质检评分表: a 100-point total per conversation, docs/scorecards.md), or
              a list of Scorecard objects or paths, or "store:" as for rubrics; scored after the rubrics and metrics;
              `result.scorecards()`.

    Returns an EvaluationResult (run id and name, store path, call/token/cost totals, the verdicts). Bad input
    raises a RubricEvalError subclass naming the file (or the in-memory input), line and field.
    """
    samples = dataset_samples(dataset)
    if rubrics is None:
        rubric_list: list[Rubric] = []
    elif isinstance(rubrics, (str, Path)):
        rubric_list = load_rubrics(rubrics, store=store)
    else:                                   # Rubric objects, or paths to load
        rubric_list = [r for item in rubrics
                       for r in (load_rubrics(item, store=store) if isinstance(item, (str, Path)) else [item])]
    judge_config = judge if isinstance(judge, JudgeConfig) else load_judge_config(**(judge or {}))
    embedder_config = embedder if isinstance(embedder, EmbedderConfig) else load_embedder_config(**(embedder or {}))
    if isinstance(panel, (str, Path)):
        from rubriceval.scoring.panel import load_panel_config

        panel = load_panel_config(panel, base=judge_config)
    cards = _scorecard_list(scorecards, rubric_list, store) if scorecards is not None else None
    run_store = RunStore(store)
    metric_list = parse_metric_names(metrics)
    if thresholds:
        check_thresholds(thresholds, metric_list)
        options = _metric_options(metric_options, run_store, None)
        metric_options = options.model_copy(update={"thresholds": {**options.thresholds, **thresholds}})
    run_id, totals = asyncio.run(run_async(samples, rubric_list, metric_list, store=run_store,
                                           judge_config=judge_config, embedder_config=embedder_config, name=name,
                                           dataset_path=str(dataset) if isinstance(dataset, (str, Path)) else "",
                                           progress=progress, panel_config=panel, metric_options=metric_options,
                                           scorecards=cards))
    info = run_store.run_info(run_id)
    from rubriceval.run.cross_check import stored_twins

    return EvaluationResult(run_id=run_id, run_name=info.name, store_path=str(run_store.path),
                            totals=totals.as_dict(), verdicts=run_store.verdicts(run_id),
                            cross_checks=stored_twins(run_store.scorers(run_id)),
                            sample_ids=[s.id for window in run_store.sample_windows(run_id) for s, _ in window])


def _scorecard_list(scorecards: Any, rubrics: list[Rubric], store: str | Path | None = None) -> list:
    """Scorecards given to evaluate(): loaded, and their rubric: items checked against the run's rubrics."""
    from rubriceval.run.scorecard_stage import check_rubric_references
    from rubriceval.store.stored_sources import load_scorecards

    items = [scorecards] if isinstance(scorecards, (str, Path)) else list(scorecards)
    cards = [c for item in items
             for c in (load_scorecards(item, store=store) if isinstance(item, (str, Path)) else [item])]
    check_rubric_references(cards, [r.id for r in rubrics])
    return cards
