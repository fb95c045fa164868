"""rubriceval: business rubrics + RAG metrics for customer-service chatbots.

Pipeline (one module per step):
  rubric/ (YAML → Rubric) → prompt/ (Rubric + Sample → messages) → judge/ (messages → raw text → parsed verdict)
  → verdict.py (score | unscored-with-reason) → store/ (SQLite runs) → report/ and ui/.

The public API is `__all__` below: `from rubriceval import evaluate, Sample, Rubric, JudgeConfig, …`. Each name is
imported on first use (module `__getattr__`), so `import rubriceval` loads none of pandas, openai or numpy.
"""
from __future__ import annotations

import sys
from importlib.util import spec_from_file_location
from pathlib import Path
from typing import TYPE_CHECKING

from rubriceval.common.lazy import lazy_exports

__version__ = "0.1.0"

# public name → the module that defines it
_EXPORTS: dict[str, str] = {
    # evaluate a dataset
    "evaluate": "rubriceval.run.evaluate",
    "EvaluationResult": "rubriceval.run.result",
    "plan_cost": "rubriceval.run.planning",
    # data
    "Sample": "rubriceval.data.sample",
    "Conversation": "rubriceval.data.conversation",
    "Turn": "rubriceval.data.conversation",
    "read_dataset": "rubriceval.data.io",
    "write_dataset": "rubriceval.data.io",
    # rubrics
    "Rubric": "rubriceval.rubric.schema",
    "TrustBar": "rubriceval.rubric.schema",
    "load_rubric": "rubriceval.rubric.loader",
    "load_rubrics": "rubriceval.store.stored_sources",
    "validate_path": "rubriceval.validate.lint",
    "compile_rubric": "rubriceval.prompt.rubric_prompts",
    # verdicts
    "Verdict": "rubriceval.core.verdict",
    "Usage": "rubriceval.core.verdict",
    "Evidence": "rubriceval.core.verdict",
    # configuration
    "JudgeConfig": "rubriceval.judge.config",
    "load_judge_config": "rubriceval.judge.config",
    "EmbedderConfig": "rubriceval.embed.config",
    "load_embedder_config": "rubriceval.embed.config",
    # stored runs and audits
    "RunStore": "rubriceval.store.runs",
    "RunConfig": "rubriceval.store.runs",
    "RunInfo": "rubriceval.store.runs",
    "AuditStore": "rubriceval.store.audit",
    # reports and gates
    "summarize": "rubriceval.report.aggregate",
    "markdown_summary": "rubriceval.report.markdown",
    "write_html_report": "rubriceval.report.html",
    "write_excel_report": "rubriceval.report.excel",
    "compare_runs": "rubriceval.report.compare",
    "evaluate_gate": "rubriceval.report.gate",
    "GateResult": "rubriceval.report.gate",
    "assert_gate": "rubriceval.report.pytest_helper",
    # production QA: segments, trends, incremental runs (docs/production_qa.md)
    "segment_tables": "rubriceval.segments.table",
    "parse_by": "rubriceval.data.segment_spec",
    "compute_trend": "rubriceval.trend.series",
    "run_increment": "rubriceval.incremental.increment",
    # trust in the judge
    "agreement_report": "rubriceval.stats.agreement",
    "AgreementReport": "rubriceval.stats.agreement",
    "trust_status": "rubriceval.trust.release_gate",
    "TrustStatus": "rubriceval.trust.release_gate",
    # errors: every bad input is one of these, naming file, line and field
    "RubricEvalError": "rubriceval.common.errors",
    "ConfigError": "rubriceval.common.errors",
    "DatasetError": "rubriceval.common.errors",
    "RubricError": "rubriceval.common.errors",
}

__all__ = sorted(_EXPORTS)

# The same names for type checkers and editors (never run): the lazy `__getattr__` alone makes every public name `Any`
# to them. `name as name` marks an explicit re-export; tests/architecture/test_static_checks.py keeps this list equal to _EXPORTS.
if TYPE_CHECKING:
    from rubriceval.common.errors import (
        ConfigError as ConfigError,
    )
    from rubriceval.common.errors import (
        DatasetError as DatasetError,
    )
    from rubriceval.common.errors import (
        RubricError as RubricError,
    )
    from rubriceval.common.errors import (
        RubricEvalError as RubricEvalError,
    )
    from rubriceval.core.verdict import Evidence as Evidence
    from rubriceval.core.verdict import Usage as Usage
    from rubriceval.core.verdict import Verdict as Verdict
    from rubriceval.data.conversation import Conversation as Conversation
    from rubriceval.data.conversation import Turn as Turn
    from rubriceval.data.io import read_dataset as read_dataset
    from rubriceval.data.io import write_dataset as write_dataset
    from rubriceval.data.sample import Sample as Sample
    from rubriceval.data.segment_spec import parse_by as parse_by
    from rubriceval.embed.config import EmbedderConfig as EmbedderConfig
    from rubriceval.embed.config import load_embedder_config as load_embedder_config
    from rubriceval.incremental.increment import run_increment as run_increment
    from rubriceval.judge.config import JudgeConfig as JudgeConfig
    from rubriceval.judge.config import load_judge_config as load_judge_config
    from rubriceval.prompt.rubric_prompts import compile_rubric as compile_rubric
    from rubriceval.report.aggregate import summarize as summarize
    from rubriceval.report.compare import compare_runs as compare_runs
    from rubriceval.report.excel import write_excel_report as write_excel_report
    from rubriceval.report.gate import GateResult as GateResult
    from rubriceval.report.gate import evaluate_gate as evaluate_gate
    from rubriceval.report.html import write_html_report as write_html_report
    from rubriceval.report.markdown import markdown_summary as markdown_summary
    from rubriceval.report.pytest_helper import assert_gate as assert_gate
    from rubriceval.rubric.loader import load_rubric as load_rubric
    from rubriceval.rubric.schema import Rubric as Rubric
    from rubriceval.rubric.schema import TrustBar as TrustBar
    from rubriceval.run.evaluate import evaluate as evaluate
    from rubriceval.run.planning import plan_cost as plan_cost
    from rubriceval.run.result import EvaluationResult as EvaluationResult
    from rubriceval.segments.table import segment_tables as segment_tables
    from rubriceval.stats.agreement import AgreementReport as AgreementReport
    from rubriceval.stats.agreement import agreement_report as agreement_report
    from rubriceval.store.audit import AuditStore as AuditStore
    from rubriceval.store.runs import RunConfig as RunConfig
    from rubriceval.store.runs import RunInfo as RunInfo
    from rubriceval.store.runs import RunStore as RunStore
    from rubriceval.store.stored_sources import load_rubrics as load_rubrics
    from rubriceval.trend.series import compute_trend as compute_trend
    from rubriceval.trust.release_gate import TrustStatus as TrustStatus
    from rubriceval.trust.release_gate import trust_status as trust_status
    from rubriceval.validate.lint import validate_path as validate_path

# The design's top-level folders ui/ and standard_metrics/ belong to this package: a wheel installs them as
# rubriceval/ui and rubriceval/standard_metrics (setup.py's package_dir), so there is one import name.
MOUNTED_FOLDERS = ("ui", "standard_metrics")


class _SourceFolders:
    """From a source tree (a clone, `pip install -e .`, pytest's pythonpath) `rubriceval.ui` and
    `rubriceval.standard_metrics` are found in the folders beside this package, as the wheel lays them out. Exactly
    those two names, and only the folders of this very checkout; first on sys.meta_path, so that a second checkout
    run with PYTHONPATH (.ci/run's bare clone) loads its own folders, not those an editable install points at."""

    def __init__(self, folders: dict[str, Path]) -> None:
        self.folders = folders

    def find_spec(self, fullname: str, path=None, target=None):
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return spec_from_file_location(fullname, folder / "__init__.py", submodule_search_locations=[str(folder)])


def _mount_source_folders() -> None:
    here = Path(__file__).resolve().parent
    folders = {f"{__name__}.{name}": here.parent / name for name in MOUNTED_FOLDERS
               if not (here / name).is_dir() and (here.parent / name / "__init__.py").is_file()}
    if folders and not any(isinstance(finder, _SourceFolders) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SourceFolders(folders))


_mount_source_folders()


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})

