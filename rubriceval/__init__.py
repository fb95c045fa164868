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

