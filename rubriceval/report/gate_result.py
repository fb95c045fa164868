"""One gate check's result, and the rule that turns a figure and a check into it (shared by every kind of check)."""
from __future__ import annotations

from pydantic import BaseModel

from rubriceval.report.gate_checks import (
    GateCheck,
)

_DECIMALS = 9   # compare at this precision, so a mean of 3.2000000000000006 meets ">= 3.2"


class CheckResult(BaseModel):
    name: str
    stat: str
    scorer: str | None = None
    passed: bool
    actual: float | None = None
    expected: str
    reason: str
    untrusted: bool = False


def meets(actual: float, op: str, value: float) -> bool:
    """Whether `actual op value` holds, compared at _DECIMALS places (every gate check kind compares so)."""
    a, v = round(actual, _DECIMALS), round(value, _DECIMALS)
    return {">=": a >= v, "<=": a <= v, ">": a > v, "<": a < v}[op]


def format_figure(value: float | None) -> str:
    """A gate figure as the results print it: three significant digits, whole numbers from 1000, n/a for None."""
    if value is None:
        return "n/a"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def check_result(check: GateCheck, name: str, actual: float | None, why_missing: str | None,
                 untrusted: list[str], refuse_untrusted: bool, scorer: str | None = None, extra: str = "") -> CheckResult:
    """One check's result from its figure: failed as untrusted (when refused), as not computable (with why), or
    passed / failed by `meets`; every gate check kind builds its result here."""
    expected = f"{check.op} {check.value:g}"
    if untrusted and refuse_untrusted:
        return CheckResult(name=name, stat=check.stat, scorer=scorer, passed=False, actual=actual, expected=expected,
                           reason="untrusted: " + "; ".join(untrusted), untrusted=True)
    if actual is None:
        return CheckResult(name=name, stat=check.stat, scorer=scorer, passed=False, actual=None, expected=expected,
                           reason=f"cannot be computed: {why_missing}")
    passed = meets(actual, check.op, check.value)
    reason = f"{format_figure(actual)} {check.op if passed else 'fails ' + check.op} {check.value:g}" + extra
    if untrusted:
        reason += " (warning, untrusted: " + "; ".join(untrusted) + ")"
    return CheckResult(name=name, stat=check.stat, scorer=scorer, passed=passed, actual=actual, expected=expected,
                       reason=reason, untrusted=bool(untrusted))
