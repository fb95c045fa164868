"""`benchmark-judge conversations`' own options, one set for `python -m benchmarks.judge.conversations` and the
CLI — apart from the benchmark so that building the CLI's parser loads nothing heavy (tests/test_public_api.py)."""
from __future__ import annotations

import argparse
from pathlib import Path

DATA = Path(__file__).parent / "data" / "conversations_zh.jsonl"
SPLITS = ("heldout", "dev", "all")
RUBRIC_IDS = ("identity_verification", "emotional_soothing_multiturn")
RUBRICS = Path("rubrics")
MODES = ("predicates", "checklist", "holistic")      # judge modes, run in this order (rubric.schema.JudgeMode)


def add_args(p: argparse.ArgumentParser, *, under_benchmark_judge: bool = False) -> None:
    """This benchmark's options, one set for `python -m benchmarks.judge.conversations` and for `rubriceval
    benchmark-judge conversations`; that parser already has --out, --resume, --data, --rubrics and the judge options
    for every kind, and --modes/--split from the robustness group (with no default: each kind has its own)."""
    if not under_benchmark_judge:
        p.add_argument("--modes", help=f"comma-separated, in this order (default: {','.join(MODES)})")
        p.add_argument("--out", default="out/bench_conversations.json")
        p.add_argument("--resume", action="store_true", help="keep the rows of the partial file")
        p.add_argument("--data", default=str(DATA))
        p.add_argument("--split", choices=SPLITS, default="heldout",
                       help="which half (dev: for looking at and fitting; all: a set that is held out as a whole)")
        p.add_argument("--rubrics", default=str(RUBRICS))
        p.add_argument("--config", help="judge YAML (default: the embedded judge)")
    p.add_argument("--rubric", choices=RUBRIC_IDS, help="conversations: only this rubric's dialogues")
