"""Per-case assertions for pytest, as DeepEval's `assert_test`: one test per sample, and a failure that says why
(each failing rubric/metric's score against its threshold, the judge's feedback, the evidence of each item).

    import pytest
    from rubriceval import evaluate
    from rubriceval.testing import assert_case

    RESULT = evaluate("datasets/demo_cs_zh.jsonl", rubrics="rubrics/", metrics="faithfulness")

    @pytest.mark.parametrize("case", RESULT.cases(), ids=str)
    def test_case(case):
        assert_case(case)

or judge one sample in the test itself: `assert_case({"question": …, "answer": …}, rubrics=…, metrics=…)` (any
keyword of `evaluate`). A whole-run gate is `rubriceval.report.pytest_helper.assert_gate`.
"""
from __future__ import annotations

from typing import Any

from rubriceval.run.cases import CaseResult
from rubriceval.run.evaluate import evaluate


def assert_case(case: Any, *, allow_unscored: bool = False, lang: str = "en", **evaluate_kwargs: Any) -> CaseResult:
    """Assert that every verdict of the case passes its threshold; returns the CaseResult.

    case: a CaseResult (from `EvaluationResult.cases()`), or one sample in any form `evaluate` takes (a Sample, a
    dict, a Ragas SingleTurnSample), judged here with `evaluate_kwargs` (rubrics=, metrics=, judge=, store= …).
    allow_unscored: an unscored verdict does not fail the case (it fails by default: it was not shown to pass)."""
    __tracebackhide__ = True   # pytest: show the assertion, not this helper's frame
    if not isinstance(case, CaseResult):
        if evaluate_kwargs.get("rubrics") is None and evaluate_kwargs.get("metrics") is None:
            raise TypeError("assert_case on a sample needs rubrics= and/or metrics= (or pass a CaseResult from "
                            "EvaluationResult.cases())")
        cases = evaluate([case], **{"progress": False, **evaluate_kwargs}).cases()
        case = cases[0]
    failing = [v for v in case.failures if not (allow_unscored and v.score is None)]
    if not case.verdicts or failing:
        raise AssertionError(case.failure_message(lang))
    return case
