"""Rubric authoring: validate (lint), schema (for editors), compile (the exact judge messages), metrics (list)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from rubriceval.errors import RubricEvalError


def register(sub: argparse._SubParsersAction) -> None:
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

    p = sub.add_parser("metrics", help="list the standard metrics")
    p.set_defaults(func=cmd_metrics)


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


def cmd_metrics(args) -> int:
    from standard_metrics.registry import list_metrics

    for m in list_metrics():
        needs = ", ".join(x for x, on in (("judge", m.needs_judge), ("embedder", m.needs_embedder)) if on) or "—"
        print(f"{m.name:<28} {m.family:<8} needs: {needs:<16} fields: {', '.join(m.required_fields):<36} {m.summary}")
    return 0
