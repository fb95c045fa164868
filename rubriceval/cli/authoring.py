"""Rubric authoring: validate (lint), schema (for editors), compile (the exact judge messages), metrics (list)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rubriceval.cli.options import JUDGE_MODES, add_store_arg
from rubriceval.common.errors import RubricEvalError

if TYPE_CHECKING:
    from rubriceval.data.sample import Sample
    from rubriceval.rubric.schema import JudgeMode


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="lint rubric files",
                       description="Lint rubric files. Exit 0: all valid; 1: every file loads but lint found errors "
                                   "(or warnings, with --strict); 2: a file cannot be read as a rubric (YAML or "
                                   "schema error, the same error `run` stops on).")
    p.add_argument("path", nargs="?", default="rubrics", help="a rubric file or directory (default: rubrics), or "
                   "store: — the rubric versions the studio saved in --store (store:ID, store:ID@N)")
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    add_store_arg(p, help="the run store a store: PATH reads (default %(default)s)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="export the rubric JSON Schema (for editors)")
    p.add_argument("--out")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("compile", help="print the exact messages the judge will receive")
    p.add_argument("rubric")
    p.add_argument("--dataset", help="take the sample from this dataset")
    p.add_argument("--sample", help="sample id (or 0-based row index); default the first row the rubric applies to")
    p.add_argument("--structured", choices=["json_schema", "text"], default="json_schema")
    p.add_argument("--force", action="store_true",
                   help="print the messages even when the rubric does not apply to the sample (a run skips it)")
    p.add_argument("--judge-mode", choices=list(JUDGE_MODES),
                   help="the prompts of this judge mode (default: the mode the judge gets in a run — the one the "
                        "rubric's measured: block found best on it, else the rubric's judge_mode)")
    p.add_argument("--judge", metavar="MODEL",
                   help="the judge model whose mode to show (default: the configured judge — "
                        "RUBRICEVAL_JUDGE_MODEL — else 'local', the embedded judge)")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("metrics", help="list the standard metrics")
    p.set_defaults(func=cmd_metrics)


def cmd_validate(args) -> int:
    from rubriceval.validate.lint import validate_path

    rubrics, findings = validate_path(args.path, store=args.store)
    for f in findings:
        print(f.format())
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    print(f"{len(rubrics)} rubric(s) valid, {errors} error(s), {warnings} warning(s)")
    if any(f.stage == "load" for f in findings):
        return 2           # a file is not a rubric at all: a user-input error, as everywhere in the CLI
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
    from rubriceval.prompt.rubric_prompts import compile_rubric, prompts_text
    from rubriceval.rubric.applies import why_not
    from rubriceval.rubric.loader import load_rubric
    from rubriceval.scoring.turn_questions import item_questions

    if _is_scorecard(args.rubric):
        return _compile_scorecard(args)
    rubric = _in_judge_mode(load_rubric(args.rubric), args.judge_mode, args.judge)
    if args.dataset:
        samples = read_dataset(args.dataset)
        if args.sample is None:
            sample = next((s for s in samples if why_not(rubric, s) is None), samples[0])
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
    reason = why_not(rubric, sample) if args.dataset else None
    if reason:
        print(f"rubric '{rubric.id}' does not apply to sample '{sample.id}': {reason}. A run does not judge this "
              "sample with it." + ("" if args.force else " Add --force to print the messages anyway."))
        if not args.force:
            return 0
    structured = args.structured != "text"
    prompts = compile_rubric(rubric, sample, structured=structured) + _check_questions(rubric, sample)
    if prompts:
        print(prompts_text(prompts))
    elif rubric.judge_mode == "predicates" and any(item_questions(i) for i in rubric.check_items) \
            and sample.conversation is None:
        print(f"rubric '{rubric.id}' in judge mode predicates asks its checks' per-turn questions about a "
              "conversation: give --dataset with one to see them.")
    else:
        print(f"rubric '{rubric.id}' has no judge items: it is scored by deterministic checks only.")
    return 0


def _is_scorecard(path: str) -> bool:
    """A scorecard file (质检评分表: `dimensions:`/`base:` and point items) rather than a rubric."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False          # the rubric loader says what is wrong with the file
    return isinstance(data, dict) and "criterion" not in data and ("dimensions" in data or "base" in data)


def _compile_scorecard(args) -> int:
    """The exact questions a run asks the judge about one conversation for a scorecard (scorecard/plan.py, the
    dry run's and the Batch API's count): its items' and N/A conditions' questions, its checks' per-turn ones."""
    from rubriceval.data.io import read_dataset
    from rubriceval.prompt.rubric_prompts import prompts_text
    from rubriceval.scorecard.applicability import card_applies
    from rubriceval.scorecard.loader import load_scorecard
    from rubriceval.scorecard.plan import planned_questions

    card = load_scorecard(args.rubric)
    if not args.dataset:
        raise RubricEvalError("a scorecard's questions are asked about a conversation: give --dataset FILE (and "
                              "--sample ID)", file=args.rubric, hint="e.g. rubriceval compile "
                              f"{args.rubric} --dataset datasets/demo_conversations_zh.jsonl")
    samples = read_dataset(args.dataset, require=())
    sample = _pick_sample(samples, args.sample, args.dataset, lambda s: card_applies(card, s))
    if not card_applies(card, sample):
        print(f"scorecard '{card.id}' ({card.scope}) does not score sample '{sample.id}'; a run does not score "
              "this sample with it.")
        return 0
    prompts = planned_questions(card, sample) or []
    if prompts:
        print(prompts_text(prompts))
    print(f"scorecard '{card.id}' on sample '{sample.id}': {len(prompts)} judge question(s); items decided by "
          f"deterministic checks: {sum(1 for i in card.items if i.check is not None)} (no judge call)")
    if any(i.applies_when is not None and i.applies_when.question for i in card.items):
        print("  (at most: an item behind an applies_when question is asked only when that question answers yes)")
    if any(i.question for i in card.items):
        print("  (as a large judge asks them: a small judge, the embedded one, asks a question item of each turn of "
              "the party it names, so more calls; docs/scorecards.md)")
    return 0


def _pick_sample(samples: list[Sample], wanted: str | None, dataset: str, fits) -> Sample:
    """--sample: an id or a 0-based row index; default the first sample that `fits`."""
    if not samples:
        raise RubricEvalError("the dataset has no rows", file=dataset)
    if wanted is None:
        return next((s for s in samples if fits(s)), samples[0])
    match = [s for s in samples if s.id == wanted]
    if not match and wanted.isdigit() and int(wanted) < len(samples):
        match = [samples[int(wanted)]]
    if not match:
        raise RubricEvalError(f"no sample '{wanted}'", file=dataset, field="id")
    return match[0]


def _in_judge_mode(rubric, mode: JudgeMode | None, judge: str | None):
    """The rubric in the mode a run gives it with this judge (`mode`, else its measured best, else its own), said
    on stderr with any note the run would print (scoring/judge_mode.py)."""
    from rubriceval.scoring.judge_mode import with_judge_mode

    if judge is None:
        from rubriceval.judge.config import load_judge_config

        judge = load_judge_config().model
    [rubric], notes = with_judge_mode([rubric], mode, judge_models=[judge])
    for line in notes:
        print(line, file=sys.stderr)
    print(f"judge mode: {rubric.judge_mode} (judge '{judge}')", file=sys.stderr)
    return rubric


def _check_questions(rubric, sample) -> list:
    """The per-turn questions the rubric's checks may ask about a conversation sample in this mode (a run asks only
    those its checks reach; in holistic/checklist modes only `must` checks ask)."""
    from rubriceval.scoring.turn_questions import idle_question_checks, plan_turn_questions, rubric_knowledge

    idle = idle_question_checks(rubric)
    return plan_turn_questions([i for i in rubric.check_items if i.id not in idle], sample.conversation,
                               rubric.language, rubric_knowledge(rubric))


def cmd_metrics(args) -> int:
    from rubriceval.standard_metrics.registry import list_metrics

    rows = [("name", "family", "scope", "needs", "fields", "summary")]
    for m in list_metrics():
        needs = ", ".join(x for x, on in (("judge", m.needs_judge), ("embedder", m.needs_embedder)) if on) or "—"
        rows.append((m.name, m.family, m.scope, needs, ", ".join(m.required_fields) or "—", m.summary))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]     # each column fits its longest
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
    return 0
