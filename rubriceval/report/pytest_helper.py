"""Quality gates inside a test suite, for teams that keep their evals next to their unit tests.

    from rubriceval import evaluate
    from rubriceval.report.pytest_helper import assert_gate

    def test_bot_quality():
        result = evaluate("datasets/客服评测集.jsonl", rubrics="rubrics/", metrics=["faithfulness"])
        assert_gate(result, ["faithfulness>=0.8", "情绪安抚 mean>=4.0", "max_unscored_rate<=0.1"])

A failing gate raises AssertionError listing every failed check with its reason, so pytest shows why.

Regression checks compare with a baseline run: `baseline=` is an EvaluationResult (e.g. yesterday's
`evaluate(...)`, in the same store) or a run name/id in the store, and `store=` names the store when the gated run
is given by name (a RunStore, a SQLite path or a PostgreSQL URL):

        baseline = evaluate("datasets/客服评测集.jsonl", rubrics="rubrics/", name="v1")
        current = evaluate("datasets/客服评测集.jsonl", rubrics="rubrics/", name="v2")
        assert_gate(current, ["significant_regression>=-0.1"], baseline=baseline)
        assert_gate("v2", ["regression>=-0.2"], store="out/runs.sqlite", baseline="v1")

One test per sample instead (DeepEval's assert_test): `rubriceval.testing.assert_case`.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rubriceval.report.gate import GateResult, evaluate_gate, format_gate_result
from rubriceval.report.gate_checks import GateCheck, gate_config
from rubriceval.report.gate_trust import AgreementSource


def _baseline_run(baseline: Any, store_path: str) -> str | None:
    """A baseline given as an EvaluationResult (anything with store_path and run_id) → its run id; it must live in
    the gated run's store, where the gate reads both."""
    if baseline is None or isinstance(baseline, str):
        return baseline
    if hasattr(baseline, "store_path") and hasattr(baseline, "run_id"):
        if str(baseline.store_path) != store_path:
            raise ValueError(f"the baseline run is in {baseline.store_path}, the gated run in {store_path}: "
                             "evaluate both with the same store=")
        return baseline.run_id
    raise TypeError(f"baseline= takes an EvaluationResult or a run name, not {type(baseline).__name__}")


def gate_result(run_or_result: Any, checks: Sequence[str | GateCheck] = (), *, store: Any = None,
                baseline: Any = None, config_path: str | Path | None = None,
                refuse_untrusted: bool | None = None, agreement: AgreementSource = None) -> GateResult:
    """Evaluate a gate on: a GateResult (returned as is), an EvaluationResult (anything with store_path and run_id),
    or a run name/id together with `store` (a RunStore or the path/URL of one). baseline: an EvaluationResult or
    a run name/id in the same store (for regression checks)."""
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
    config = gate_config(checks, config_path, baseline=_baseline_run(baseline, str(run_store.path)),
                         refuse_untrusted=refuse_untrusted)
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
