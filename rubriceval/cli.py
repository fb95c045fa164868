"""The `rubriceval` command. Every user-input error prints one line naming file, line and field; exit code 2."""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from rubriceval.errors import RubricEvalError

DEFAULT_STORE = "out/runs.sqlite"


def _add_judge_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("judge (default: the embedded local judge)")
    g.add_argument("--config", help="YAML config file with judge:/embedder: sections")
    g.add_argument("--judge-base-url", help="OpenAI-compatible base URL (DashScope, OpenAI, vLLM, Ollama…)")
    g.add_argument("--judge-model")
    g.add_argument("--concurrency", type=int)
    g.add_argument("--timeout", type=float, dest="timeout_s")
    g.add_argument("--structured", choices=["json_schema", "text"])
    g.add_argument("--no-cache", action="store_true", help="do not read or write the judge cache")
    g.add_argument("--judge-mode", choices=["holistic", "checklist", "checklist_fitted"],
                   help="which judge scores the rubrics: one holistic 1–5 judgment, yes/no checklist questions + "
                        "the rubric's level rule, or + weights fitted to audits (default: each rubric's judge_mode)")
    g.add_argument("--self-consistency", type=int, metavar="N",
                   help="judge each rubric N times (sampling, distinct seeds); keep the median and record the spread")


def _judge_config(args):
    from rubriceval.judge.config import load_judge_config

    overrides = dict(base_url=args.judge_base_url, model=args.judge_model, concurrency=args.concurrency,
                     timeout_s=args.timeout_s, structured=args.structured,
                     self_consistency=getattr(args, "self_consistency", None),
                     judge_mode=getattr(args, "judge_mode", None))
    if getattr(args, "no_cache", False):
        overrides["cache"] = False
    return load_judge_config(args.config, **overrides)


def _panel_config(args, judge_config):
    """The judge panel: `--panel FILE`, else the `judges:` of `--config` (None when neither has one)."""
    from rubriceval.scoring.panel import load_panel_config

    path = getattr(args, "panel", None) or args.config
    panel = load_panel_config(path, base=judge_config) if path else None
    if panel is None and getattr(args, "panel", None):
        raise RubricEvalError("no 'judges:' list in the panel file", file=args.panel, field="judges",
                              hint="judges: [{name: a, model: …}, {name: b, model: …}]")
    return panel


def _embedder_config(args):
    from rubriceval.judge.config import load_embedder_config

    return load_embedder_config(args.config)


# -- commands ---------------------------------------------------------------------------------------------------------
def cmd_validate(args) -> int:
    from rubriceval.rubric.lint import validate_path

    rubrics, findings = validate_path(args.path)
    for f in findings:
        print(f.format())
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    print(f"{len(rubrics)} rubric(s) valid, {errors} error(s), {warnings} warning(s)")
    return 1 if errors or (args.strict and warnings) else 0


def cmd_schema(args) -> int:
    from rubriceval.rubric.schema import Rubric

    schema = Rubric.model_json_schema()
    text = json.dumps(schema, ensure_ascii=False, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text)
    return 0


def cmd_compile(args) -> int:
    from rubriceval.data.io import read_dataset
    from rubriceval.data.sample import Sample
    from rubriceval.prompt.compile import compile_rubric
    from rubriceval.rubric.loader import load_rubric

    rubric = load_rubric(args.rubric)
    if args.dataset:
        samples = read_dataset(args.dataset)
        if args.sample is None:
            sample = samples[0]
        else:
            match = [s for s in samples if s.id == args.sample]
            if not match and args.sample.isdigit() and int(args.sample) < len(samples):
                match = [samples[int(args.sample)]]
            if not match:
                raise RubricEvalError(f"no sample '{args.sample}'", file=args.dataset, field="id")
            sample = match[0]
    else:
        sample = Sample(id="example", question="{{question}}", answer="{{answer}}", contexts=["{{context}}"],
                        ground_truth="{{ground_truth}}")
    structured = args.structured != "text"
    prompts = compile_rubric(rubric, sample, structured=structured)
    if not prompts:
        print(f"rubric '{rubric.id}' has no judge items: it is scored by deterministic checks only.")
    for prompt in prompts:
        print(f"===== item: {prompt.item_id}  (cache tag {prompt.cache_tag}) =====")
        for m in prompt.messages:
            print(f"----- {m['role']} -----")
            print(m["content"])
        if prompt.json_schema:
            print("----- response_format json_schema -----")
            print(json.dumps(prompt.json_schema, ensure_ascii=False))
    return 0


def _chatlog_config(args):
    """--speaker-map for chat-log exports (one row per message); None leaves the dataset's own config/defaults."""
    if not args.speaker_map:
        return None
    from rubriceval.data.chatlog import ChatLogConfig, parse_speaker_map

    return ChatLogConfig(speakers=parse_speaker_map(args.speaker_map))


def _load_for_run(args):
    from rubriceval.data.io import read_dataset
    from rubriceval.rubric.loader import load_rubrics

    samples = read_dataset(args.dataset, chatlog=_chatlog_config(args))
    rubrics = load_rubrics(args.rubrics, only=args.only.split(",") if args.only else None) if args.rubrics else []
    from rubriceval.api import _metric_names

    metrics = _metric_names(args.metrics)
    if not rubrics and not metrics:
        raise RubricEvalError("nothing to evaluate", hint="pass --rubrics DIR and/or --metrics a,b,c")
    return samples, rubrics, metrics


def cmd_run(args) -> int:
    from rubriceval.api import rubrics_from_run, run_async
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    judge_config = _judge_config(args)
    panel = _panel_config(args, judge_config)
    if args.resume:
        run_id = store.resolve(args.resume)
        samples = store.samples(run_id)
        rubrics, metrics = rubrics_from_run(store, run_id)
        info = store.run_info(run_id)
        # Resume with the judge the run started with, unless the user overrides it.
        from rubriceval.judge.config import JudgeConfig

        stored = {k: v for k, v in info.config.judge.items() if k in JudgeConfig.model_fields}
        if not args.judge_base_url and not os.environ.get("RUBRICEVAL_JUDGE_BASE_URL"):
            judge_config = JudgeConfig.model_validate({**stored, "api_key": judge_config.api_key})
        if info.config.panel and not args.panel:             # and with its judge panel
            from rubriceval.scoring.panel import PanelConfig

            panel = PanelConfig.from_public(info.config.panel, api_key=judge_config.api_key)
        print(f"resuming run {info.name} ({info.n_verdicts} verdicts already stored)", file=sys.stderr)
    else:
        if args.rescore_changed:
            return _rescore_changed(args, store, judge_config)
        if not args.dataset:
            raise RubricEvalError("rubriceval run needs a DATASET (or --resume RUN, or --rescore-changed RUN)")
        samples, rubrics, metrics = _load_for_run(args)
    if args.dry_run:
        return _dry_run(samples, rubrics, metrics, judge_config, panel)
    run_id, totals = asyncio.run(run_async(
        samples, rubrics, metrics, store=store, judge_config=judge_config, embedder_config=_embedder_config(args),
        name=args.name, dataset_path=args.dataset or "", rubrics_path=args.rubrics or "",
        progress=not args.quiet, resume_run=args.resume, panel_config=panel))
    _print_run_summary(store, run_id, totals)
    if args.out:
        _write_outputs(store, run_id, Path(args.out))
    return 0


def _rescore_changed(args, store, judge_config) -> int:
    """A new run over the expert-corrected dataset: changed rows are re-scored, unchanged verdicts are carried over."""
    from rubriceval.api import rescore_changed

    run_id, totals, n_changed = asyncio.run(rescore_changed(
        store, args.rescore_changed, judge_config=judge_config, embedder_config=_embedder_config(args),
        name=args.name, progress=not args.quiet))
    print(f"{n_changed} row(s) changed since run '{args.rescore_changed}'; re-scored only those")
    _print_run_summary(store, run_id, totals)
    return 0


def _dry_run(samples, rubrics, metrics, judge_config, panel=None) -> int:
    from rubriceval.planning import plan_cost

    plan = plan_cost(samples, rubrics, metrics, judge_config, panel=panel)
    print(plan.format())
    return 0


def _print_run_summary(store, run_id: str, totals) -> None:
    info = store.run_info(run_id)
    try:
        from rubriceval.report.aggregate import summarize
        from rubriceval.report.markdown import summary_table

        print(summary_table(summarize(store.verdicts(run_id), store.scorers(run_id))))
    except ImportError:
        frame = store.verdict_frame(run_id)
        if not frame.empty:
            agg = frame.groupby("scorer").agg(n=("score", "size"), scored=("score", "count"), mean=("score", "mean"))
            print(agg.to_string())
    j = totals.judge
    print(f"run {info.name} ({run_id}): {totals.units_done} judgment(s) new, {totals.units_skipped} resumed; "
          f"{totals.scored} scored, {totals.unscored} unscored {totals.unscored_by_kind or ''}; "
          f"judge calls {j.get('calls', 0)}, cache hits {j.get('cache_hits', 0)}, "
          f"tokens {j.get('prompt_tokens', 0)}+{j.get('completion_tokens', 0)}, cost ${j.get('cost_usd', 0):.4f}, "
          f"wall {totals.wall_s:.1f}s")
    print(f"store: {store.path}")


def _write_outputs(store, run_id: str, out: Path) -> None:
    from rubriceval.safety.spreadsheet import escape_frame

    out.mkdir(parents=True, exist_ok=True)
    frame = store.verdict_frame(run_id)
    escape_frame(frame).to_csv(out / "results.csv", index=False, encoding="utf-8-sig")   # no cell runs as a formula
    frame.to_json(out / "results.jsonl", orient="records", lines=True, force_ascii=False)
    print(f"per-row results: {out / 'results.csv'} and {out / 'results.jsonl'}")


def cmd_runs(args) -> int:
    import datetime as dt

    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    runs = store.list_runs()
    if not runs:
        print(f"no runs in {store.path}")
    for r in runs:
        when = dt.datetime.fromtimestamp(r.created_at).strftime("%Y-%m-%d %H:%M")
        scorers = ",".join(list(r.config.rubrics) + r.config.metrics)
        print(f"{r.run_id}  {r.name:<32} {when}  {r.status:<11} samples={r.n_samples} verdicts={r.n_verdicts}  "
              f"{scorers}")
    return 0


def cmd_report(args) -> int:
    from rubriceval.report.excel import write_excel_report
    from rubriceval.report.html import write_html_report
    from rubriceval.report.markdown import markdown_summary
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    run_id = store.resolve(args.run)
    out = Path(args.out or "out/reports")
    out.mkdir(parents=True, exist_ok=True)
    info = store.run_info(run_id)
    name = info.name
    # Judge–expert agreement of each rubric version (audits, imported labels, calibration), for this judge model.
    from rubriceval.store.runs import rubrics_from_run
    from rubriceval.trust.release_gate import agreement_lines

    rubrics, _ = rubrics_from_run(store, run_id)
    agreement = agreement_lines(store.path, rubrics, judge_model=str(info.config.judge.get("model") or "") or None)
    html = write_html_report(store, run_id, out / f"{name}.html", lang=args.lang, agreement=agreement)
    xlsx = write_excel_report(store, run_id, out / f"{name}.xlsx", lang=args.lang)
    md = markdown_summary(store, run_id, lang=args.lang, agreement=agreement)
    (out / f"{name}.md").write_text(md, encoding="utf-8")
    print(md)
    print(f"HTML report: {html.resolve()}")
    print(f"Excel workbook: {xlsx.resolve()}")
    print(f"Markdown summary: {(out / f'{name}.md').resolve()}")
    return 0


def cmd_compare(args) -> int:
    from rubriceval.report.compare import compare_runs, format_comparison, write_compare_html
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    comparison = compare_runs(store, args.run_a, args.run_b, n_boot=args.n_boot, seed=args.seed, lang=args.lang)
    print(format_comparison(comparison, lang=args.lang))
    if args.html:
        path = write_compare_html(comparison, args.html, lang=args.lang)
        print(f"comparison report: {Path(path).resolve()}")
    return 0


def cmd_gate(args) -> int:
    from rubriceval.report.gate import run_gate
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    return run_gate(store, args.run, args.check or (), config_path=args.config, baseline=args.baseline,
                    junit_path=args.junit, refuse_untrusted=args.refuse_untrusted or None, lang=args.lang)


def cmd_audit(args) -> int:
    from ui.app import launch

    auth = None
    if args.auth_file:
        # One "user:password" a line; the file keeps secrets out of shell history and process lists.
        pairs = [l.strip().split(":", 1) for l in Path(args.auth_file).read_text(encoding="utf-8").splitlines()
                 if l.strip() and not l.startswith("#")]
        bad = [i + 1 for i, p in enumerate(pairs) if len(p) != 2 or not p[0] or not p[1]]
        if bad:
            raise RubricEvalError("each line must be user:password", file=args.auth_file, line=bad[0])
        auth = [(u, pw) for u, pw in pairs]
    if not Path(args.store).exists():
        raise RubricEvalError("run store not found", file=args.store, hint="run `rubriceval run …` first")
    print(f"audit app for {args.store} on http://{args.host}:{args.port}  (Ctrl-C to stop)")
    launch(args.store, run=args.run, host=args.host, port=args.port, export_dir=args.export_dir, auth=auth)
    return 0


def cmd_collect(args) -> int:
    from rubriceval.collect import collect, parse_target

    target = parse_target(args.target)
    if args.conversations:
        from rubriceval.collect.conversations import collect_conversations_with_judge
        from rubriceval.judge.config import load_judge_config

        judge_config = load_judge_config(args.config, base_url=args.judge_base_url, model=args.judge_model)
        summary = asyncio.run(collect_conversations_with_judge(
            judge_config, args.questions, target, args.out, concurrency=args.concurrency, timeout_s=args.timeout,
            retries=args.retries, progress=not args.quiet))
    else:
        summary = asyncio.run(collect(args.questions, target, args.out, concurrency=args.concurrency,
                                      timeout_s=args.timeout, retries=args.retries, progress=not args.quiet))
    print(summary.describe())
    print(f"dataset: {Path(args.out).resolve()}")
    return 0 if summary.failed == 0 else 1


def cmd_generate(args) -> int:
    from rubriceval.backends import make_judge
    from rubriceval.generate import generate

    async def go():
        judge = make_judge(_judge_config(args))
        try:
            return await generate(args.docs, args.out, judge=judge, n=args.n, chunk_size=args.chunk_size,
                                  overlap=args.overlap, threshold=args.threshold, language=args.language,
                                  seed=args.seed, domain=args.domain, progress=not args.quiet)
        finally:
            await judge.close()

    summary = asyncio.run(go())
    print(summary.describe())
    print(f"dataset: {Path(args.out).resolve()}")
    return 0


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
    if args.fit_weights:               # checklist weights fitted to audits; refused unless they beat the rule
        from rubriceval.trust.calibrate_weights import fit_weights

        fitted = fit_weights(args.store, args.rubric, _judge_config(args), holdout_fraction=args.holdout,
                             seed=args.seed)
        print(fitted.summary())
        return 0 if fitted.accepted else 1
    result = calibrate(args.store, args.rubric, _judge_config(args), k_examples=args.k, holdout_fraction=args.holdout,
                       seed=args.seed)
    print(result.summary())
    return 0


def cmd_benchmark_judge(args) -> int:
    from rubriceval.trust.bench import run_benchmark

    if args.kind == "cs_zh":          # the labelled Chinese customer-service set, per judge mode
        from rubriceval.trust.bench_cs import run_cs_benchmark

        config = _judge_config(args)
        run_cs_benchmark(config, config.judge_mode or "holistic", out=args.out, few_shot=args.few_shot,
                         shuffle_levels=args.shuffle_levels, data=args.data, rubrics_dir=args.rubrics, n=args.n,
                         command="rubriceval " + " ".join(sys.argv[1:]))
        return 0

    run_benchmark(args.kind, _judge_config(args), n=args.n, out=args.out, store=args.store, data=args.data)
    return 0


def cmd_metrics(args) -> int:
    from standard_metrics.registry import list_metrics

    for m in list_metrics():
        needs = ", ".join(x for x, on in (("judge", m.needs_judge), ("embedder", m.needs_embedder)) if on) or "—"
        print(f"{m.name:<28} {m.family:<8} needs: {needs:<16} fields: {', '.join(m.required_fields):<36} {m.summary}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rubriceval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="lint rubric files")
    p.add_argument("path", nargs="?", default="rubrics")
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="export the rubric JSON Schema (for editors)")
    p.add_argument("--out")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("compile", help="print the exact messages the judge will receive")
    p.add_argument("rubric")
    p.add_argument("--dataset", help="take the sample from this dataset")
    p.add_argument("--sample", help="sample id (or 0-based row index); default the first row")
    p.add_argument("--structured", choices=["json_schema", "text"], default="json_schema")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("run", help="evaluate a dataset with rubrics and/or metrics")
    p.add_argument("dataset", nargs="?")
    p.add_argument("--rubrics", help="rubric file or directory")
    p.add_argument("--only", help="comma-separated rubric ids to use from --rubrics")
    p.add_argument("--metrics", help="comma-separated metric names (see `rubriceval metrics`)")
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--name", help="run name (default: timestamp)")
    p.add_argument("--out", help="write per-row results (CSV, JSONL) to this directory")
    p.add_argument("--resume", metavar="RUN", help="finish an interrupted run")
    p.add_argument("--dry-run", action="store_true", help="plan calls, tokens and cost; spend nothing")
    p.add_argument("--rescore-changed", metavar="RUN", help="re-score only rows whose inputs changed since RUN")
    p.add_argument("--panel", metavar="FILE", help="judge the rubrics with the panel of judges listed under "
                   "'judges:' in FILE (default: the judges: of --config, if any); median score, majority pass")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--speaker-map", metavar="SPEAKER=ROLE,…",
                   help="chat-log export (one row per message): speakers' roles, e.g. 客服=assistant,用户=user")
    _add_judge_args(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("runs", help="list stored runs")
    p.add_argument("--store", default=DEFAULT_STORE)
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("report", help="write the HTML report, Excel workbook and Markdown summary of a run")
    p.add_argument("run", nargs="?", default="latest", help="run id or name (default: latest)")
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--out", help="directory (default out/reports)")
    p.add_argument("--lang", choices=["zh", "en"], help="default: zh when the data is Chinese")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", help="compare two runs: deltas with bootstrap CIs, samples that got worse")
    p.add_argument("run_a", help="baseline run")
    p.add_argument("run_b", help="new run")
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--html", help="also write an HTML comparison page here")
    p.add_argument("--n-boot", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lang", choices=["zh", "en"])
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
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--lang", choices=["zh", "en"])
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("audit", help="expert audit app (Gradio) on 127.0.0.1")
    p.add_argument("run", nargs="?", help="run to open first (default: latest)")
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--host", default="127.0.0.1", help="anything but loopback requires --auth-file")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--export-dir", help="where corrected datasets are written (default: next to the store)")
    p.add_argument("--auth-file", help="file of user:password lines")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("collect", help="run questions through the system under test; save answers + contexts")
    p.add_argument("questions", help="dataset with at least a question column (ground_truth etc. are kept)")
    p.add_argument("--target", required=True,
                   help="module:function | http(s)://endpoint (JSON contract) | openai:BASE_URL#model | target.yaml")
    p.add_argument("--out", required=True, help="output JSONL (resumes when it exists)")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--retries", type=int, default=2)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--conversations", action="store_true",
                   help="the input is a conversation script (YAML: user_turns, or simulated_user with persona, goal, "
                        "stop_condition, max_turns); the output is a conversation dataset")
    p.add_argument("--config", help="judge config (YAML judge: section) for simulated users")
    p.add_argument("--judge-base-url", help="judge for simulated users (default: $RUBRICEVAL_JUDGE_BASE_URL, else "
                                            "the embedded local judge)")
    p.add_argument("--judge-model")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("generate", help="draft question/answer pairs from documents, critique-filtered")
    p.add_argument("docs", help=".txt/.md file or directory (PDF is not supported)")
    p.add_argument("--n", type=int, required=True, help="pairs to draft (one per sampled chunk)")
    p.add_argument("--out", required=True, help="output dataset (.jsonl)")
    p.add_argument("--chunk-size", type=int, default=500)
    p.add_argument("--overlap", type=int, default=50)
    p.add_argument("--threshold", type=int, default=3, help="minimum critique score on every criterion")
    p.add_argument("--language", default="auto", choices=["auto", "zh", "en"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--domain", default="", help="what the knowledge base is about (helps the usefulness critique)")
    p.add_argument("--quiet", action="store_true")
    _add_judge_args(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("agreement", help="judge-vs-expert agreement for one rubric (from audits or a labels file)")
    p.add_argument("--rubric", required=True)
    p.add_argument("--run", help="only this run's audits / verdicts")
    p.add_argument("--labels", help="JSONL/CSV/Excel of human labels: sample_id, score[, expert]")
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_agreement)

    p = sub.add_parser("calibrate", help="propose a rubric version with few-shot examples from audits; "
                                         "evaluate on held-out audited items")
    p.add_argument("--rubric", required=True)
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--k", type=int, default=4, help="few-shot examples to add")
    p.add_argument("--holdout", type=float, default=0.5, help="share of audited items kept for evaluation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fit-weights", action="store_true",
                   help="fit the checklist's question weights to the audits (ordinal logistic on p(yes)); proposed "
                        "as a new version only when it beats the declared level rule on held-out items (exit 1 if not)")
    p.add_argument("--accept", metavar="VERSION", help="accept a proposed version")
    p.add_argument("--reject", metavar="VERSION", help="reject a proposed version")
    p.add_argument("--expert", help="who decides (with --accept/--reject)")
    _add_judge_args(p)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("benchmark-judge", help="any configured judge vs human labels: SummEval (1–5) or HaluEval")
    p.add_argument("kind", choices=["summeval", "halueval", "cs_zh"])
    p.add_argument("--n", type=int, help="items (default: all SummEval / 60 balanced HaluEval / all 66 cs_zh rows)")
    p.add_argument("--few-shot", choices=["all", "per_level", "none"],
                   help="cs_zh holistic: the rubric's examples all, one per level, or none (default: the rubric's)")
    p.add_argument("--shuffle-levels", action="store_true",
                   help="cs_zh holistic: list the level descriptions in a seeded per-row order")
    p.add_argument("--rubrics", help="cs_zh: the rubric folder (default: rubrics)")
    p.add_argument("--out", help="write every item's result as JSON")
    p.add_argument("--store", help="record the SummEval κ as trust evidence for the rubric version in this run store")
    p.add_argument("--data", help="your own copy of the benchmark (a file, or a folder holding it); default: the copy "
                                  "shipped with rubriceval")
    _add_judge_args(p)
    p.set_defaults(func=cmd_benchmark_judge)

    from rubriceval.pairwise.command import add_pairwise_parser

    add_pairwise_parser(sub)

    p = sub.add_parser("metrics", help="list the standard metrics")
    p.set_defaults(func=cmd_metrics)
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


if __name__ == "__main__":
    sys.exit(main())
