"""Options shared by several commands: the run store, and the judge/embedder settings."""
from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_STORE = "out/runs.sqlite"
JUDGE_MODES = ("holistic", "checklist", "checklist_fitted", "predicates")    # rubric.schema.JudgeMode, not imported:
                                                                            # `rubriceval --help` loads no rubric code
STORE_HELP = ("the run store: a SQLite file (default %(default)s) or a shared PostgreSQL database "
              "(postgresql://user@host:5432/db; pip install 'rubriceval[postgres]')")


def store_option(value: str) -> str | Path:
    """A --store value as the stores take it: a postgresql:// URL as given, anything else a file path."""
    from rubriceval.store.location import store_target  # here, not at the top: `rubriceval --help` loads no store

    return store_target(value)


def add_store_arg(p: argparse.ArgumentParser, *, default: str | None = DEFAULT_STORE, help: str = STORE_HELP) -> None:
    """The one --store option of every command that reads or writes the run store."""
    p.add_argument("--store", default=default, type=store_option, metavar="FILE|URL", help=help)


def add_judge_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("judge (default: the embedded local judge)")
    g.add_argument("--config", help="YAML config file with judge:/embedder:/metrics: sections")
    g.add_argument("--judge-base-url", help="OpenAI-compatible base URL (DashScope, OpenAI, vLLM, Ollama…)")
    g.add_argument("--judge-model")
    g.add_argument("--concurrency", type=int)
    g.add_argument("--timeout", type=float, dest="timeout_s")
    g.add_argument("--structured", choices=["json_schema", "text"])
    g.add_argument("--no-cache", action="store_true", help="do not read or write the judge cache")
    g.add_argument("--judge-mode", choices=list(JUDGE_MODES),
                   help="which judge scores the rubrics: one holistic 1–5 judgment, yes/no checklist questions + "
                        "the rubric's level rule, or + weights fitted to audits, or predicates: the check items alone "
                        "(entities, regex, per-turn questions) leveled by predicate_levels (default: each rubric's "
                        "mode measured best on this judge in its measured: block, else its judge_mode)")
    g.add_argument("--self-consistency", type=int, metavar="N",
                   help="judge each rubric N times (sampling, distinct seeds); keep the median and record the spread")


def judge_config_from(args: argparse.Namespace):
    from rubriceval.judge.config import load_judge_config

    overrides = dict(base_url=args.judge_base_url, model=args.judge_model, concurrency=args.concurrency,
                     timeout_s=args.timeout_s, structured=args.structured,
                     self_consistency=getattr(args, "self_consistency", None),
                     judge_mode=getattr(args, "judge_mode", None))
    if getattr(args, "no_cache", False):
        overrides["cache"] = False
    return load_judge_config(args.config, **overrides)


def embedder_config_from(args: argparse.Namespace):
    from rubriceval.embed.config import load_embedder_config

    return load_embedder_config(args.config)
