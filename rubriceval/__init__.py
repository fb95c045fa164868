"""rubriceval: business rubrics + RAG metrics for customer-service chatbots.

Pipeline (one module per step):
  rubric/ (YAML → Rubric) → prompt/ (Rubric + Sample → messages) → judge/ (messages → raw text → parsed verdict)
  → verdict.py (score | unscored-with-reason) → store/ (SQLite runs) → report/ and ui/.

The public API is `__all__` below: `from rubriceval import evaluate, Sample, Rubric, JudgeConfig, …`. Each name is
imported on first use (module `__getattr__`), so `import rubriceval` loads none of pandas, openai or numpy.
"""
from __future__ import annotations

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
    "load_rubrics": "rubriceval.rubric.loader",
    "validate_path": "rubriceval.rubric.lint",
    "compile_rubric": "rubriceval.prompt.rubric_prompts",
    # verdicts
    "Verdict": "rubriceval.scoring.verdict",
    "Usage": "rubriceval.scoring.verdict",
    "Evidence": "rubriceval.scoring.verdict",
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
    "parse_by": "rubriceval.segments.spec",
    "compute_trend": "rubriceval.trend.series",
    "run_increment": "rubriceval.incremental.increment",
    # trust in the judge
    "agreement_report": "rubriceval.trust.agreement",
    "AgreementReport": "rubriceval.trust.agreement",
    "trust_status": "rubriceval.trust.release_gate",
    "TrustStatus": "rubriceval.trust.release_gate",
    # errors: every bad input is one of these, naming file, line and field
    "RubricEvalError": "rubriceval.common.errors",
    "ConfigError": "rubriceval.common.errors",
    "DatasetError": "rubriceval.common.errors",
    "RubricError": "rubriceval.common.errors",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})

