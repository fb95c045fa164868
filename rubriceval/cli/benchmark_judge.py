"""`rubriceval benchmark-judge`: its per-kind options, and where the benchmarks are.

The benchmarks (runners and labelled data) live in the repository's benchmarks/ tree, not in the installed package:
from a clone they are found beside the package's source, or in the clone `--data` points into; from a wheel the
command says in one line where to get them. The options are here so that building the CLI's parser needs neither
the benchmarks nor anything heavy (tests/architecture/test_public_api.py).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

ROBUSTNESS_SCREENS = ("patterns", "perplexity", "llm_screen")
ROBUSTNESS_MODES = ("holistic", "checklist", "predicates", "panel")
CONVERSATION_RUBRIC_IDS = ("identity_verification", "emotional_soothing_multiturn")
TREE = Path("benchmarks") / "judge"             # the judge benchmarks, from a repository's root
NOT_INSTALLED = ("benchmark-judge: the benchmarks (runners and labelled data) ship with the source repository, not "
                 "with the installed package; run it from a clone of rubriceval, or point --data into one")


def add_robustness_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("robustness")
    g.add_argument("--modes", help=f"judge modes, comma-separated (robustness: {', '.join(ROBUSTNESS_MODES)}, or "
                                   "'none' for the defences only; default holistic. conversations: predicates, "
                                   "checklist, holistic; default all)")
    g.add_argument("--split", choices=["heldout", "dev", "all"], default="heldout",
                   help="robustness, conversations: which half (default heldout)")
    g.add_argument("--screens", default="patterns",
                   help=f"defences measured, comma-separated ({', '.join(ROBUSTNESS_SCREENS)})")
    g.add_argument("--families", help="only these attack families, comma-separated")
    g.add_argument("--benign-per-corpus", type=int, default=12,
                   help="model screens (perplexity, llm_screen): benign texts screened per corpus")
    g.add_argument("--skip-capped", action="store_true",
                   help="do not judge attacked answers the patterns flag: the default policy caps them at 1 without "
                        "the judge, as a run does (fewer calls; the raw column then covers the other pairs)")
    g.add_argument("--panel", metavar="FILE",
                   help="mode panel: the judges of this config file's `judges:` list (default: the judge three "
                        "times, seeds 1-3 at its self_consistency_temperature, 0.7 by default)")
    g.add_argument("--report-partial", action="store_true",
                   help="judge nothing: report the pairs whose verdicts OUT's partial files already hold")
    g.add_argument("--stub-judge", choices=["gullible"],
                   help="judge with the loopback stub that obeys readable score cues (no model; tests the plumbing)")


def add_conversation_rubric_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rubric", choices=CONVERSATION_RUBRIC_IDS, help="conversations: only this rubric's dialogues")


def _holds_tree(folder: Path) -> bool:
    return (folder / TREE / "__init__.py").is_file()


def find_benchmarks(data: str | None) -> tuple[Path, str | None] | None:
    """The repository root whose benchmarks/ to run, and the --data left for the benchmark itself (None when --data
    named the clone or its benchmarks/ folder rather than a data copy); None when there are none (a wheel)."""
    if data:
        given = Path(data).expanduser().resolve()
        for root in (given, given.parent):              # the clone itself, or its benchmarks/ folder
            if given.is_dir() and _holds_tree(root) and (root == given or given.name == "benchmarks"):
                return root, None
        for root in given.parents:                      # a data file or folder inside a clone
            if _holds_tree(root):
                return root, data
    source = Path(__file__).resolve().parents[2]        # rubriceval/cli/ -> the checkout's root
    return (source, data) if _holds_tree(source) else None


def use_benchmarks(root: Path) -> None:
    """Make `benchmarks.judge` importable from ROOT, unless a checkout's own tree already is (pytest's pythonpath,
    PYTHONPATH)."""
    if importlib.util.find_spec("benchmarks") is None:
        sys.path.insert(0, str(root))
