"""`python -m benchmarks.judge.conversations`' options and constants, apart from the benchmark (which imports them) so
that reading them loads nothing heavy."""
from __future__ import annotations

import argparse
from pathlib import Path

from rubriceval.cli.benchmark_judge import CONVERSATION_RUBRIC_IDS, add_conversation_rubric_arg

DATA = Path(__file__).parent / "data" / "conversations_zh.jsonl"
SPLITS = ("heldout", "dev", "all")
RUBRIC_IDS = CONVERSATION_RUBRIC_IDS
RUBRICS = Path("rubrics")
MODES = ("predicates", "checklist", "holistic")      # judge modes, run in this order (rubric.schema.JudgeMode)


def add_args(p: argparse.ArgumentParser) -> None:
    """`python -m benchmarks.judge.conversations`' options; `rubriceval benchmark-judge conversations` has the same
    ones for every kind (--out, --resume, --data, --rubrics, the judge's, --modes/--split from the robustness group)
    and this benchmark's --rubric from rubriceval/cli/benchmark_judge.py."""
    p.add_argument("--modes", help=f"comma-separated, in this order (default: {','.join(MODES)})")
    p.add_argument("--out", default="out/bench_conversations.json")
    p.add_argument("--resume", action="store_true", help="keep the rows of the partial file")
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--split", choices=SPLITS, default="heldout",
                   help="which half (dev: for looking at and fitting; all: a set that is held out as a whole)")
    p.add_argument("--rubrics", default=str(RUBRICS))
    p.add_argument("--config", help="judge YAML (default: the embedded judge)")
    add_conversation_rubric_arg(p)
