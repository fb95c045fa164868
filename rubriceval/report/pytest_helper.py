"""Quality gates inside a test suite, for teams that keep their evals next to their unit tests.

    from rubriceval import evaluate
    from rubriceval.report.pytest_helper import assert_gate

    def test_bot_quality():
        result = evaluate("datasets/客服评测集.jsonl", rubrics="rubrics/", metrics=["faithfulness"])
        assert_gate(result, ["faithfulness>=0.8", "情绪安抚 mean>=4.0", "max_unscored_rate<=0.1"])

A failing gate raises AssertionError listing every failed check with its reason, so pytest shows why.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rubriceval.report.gate import GateResult, evaluate_gate, format_gate_result
from rubriceval.report.gate_checks import GateCheck, gate_config
from rubriceval.report.gate_trust import AgreementSource


def gate_result(run_or_result: Any, checks: Sequence[str | GateCheck] = (), *, store: Any = None,
                baseline: str | None = None, config_path: str | Path | None = None,
                refuse_untrusted: bool | None = None, agreement: AgreementSource = None) -> GateResult:
    """Evaluate a gate on: a GateResult (returned as is), an EvaluationResult (anything with store_path and run_id),
    or a run name/id together with `store` (a RunStore or the path to one)."""
    if isinstance(run_or_result, GateResult):
        return run_or_result
    from rubriceval.store.runs import RunStore

    if hasattr(run_or_result, "store_path") and hasattr(run_or_result, "run_id"):
        run_store, run = RunStore(run_or_result.store_path), run_or_result.run_id
    elif isinstance(run_or_result, str):
        if store is None:
            raise ValueError("a run name needs store= (a RunStore or the path to runs.sqlite)")
        run_store = store if hasattr(store, "verdicts") else RunStore(store)
        run = run_or_result
    else:
        raise TypeError(f"assert_gate takes an EvaluationResult, a GateResult or a run name, "
                        f"not {type(run_or_result).__name__}")
    config = gate_config(checks, config_path, baseline=baseline, refuse_untrusted=refuse_untrusted)
    return evaluate_gate(run_store, run, config, agreement=agreement)


def assert_gate(run_or_result: Any, checks: Sequence[str | GateCheck] = (), **kwargs: Any) -> GateResult:
    """Assert that every gate check passes; returns the GateResult so a test can look further."""
    __tracebackhide__ = True   # pytest: show the assertion, not this helper's frame
    result = gate_result(run_or_result, checks, **kwargs)
    if not result.passed:
        failed = "\n".join(f"  ✗ {c.name}: {c.reason}" for c in result.failures)
        raise AssertionError(f"quality gate failed on run '{result.run}' "
                             f"({len(result.failures)}/{len(result.checks)} checks):\n{failed}\n\n"
                             + format_gate_result(result))
    return result
