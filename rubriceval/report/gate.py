"""A CI quality gate over a stored run: checks like "情绪安抚 mean>=4.0" or "faithfulness>=0.8" (syntax:
gate_checks.py), a JUnit XML report with one testcase per check, and exit codes CI understands (0 passed, 1 gate
failed, 2 usage error).

A rubric may declare a trust bar (min_kappa, min_items). With `refuse_untrusted`, any check that relies on a rubric
whose judge–expert agreement misses that bar fails, saying why (gate_trust.py). Checks on a pairwise A/B
comparison ("pairwise:<rubric> win_rate>=0.5") read the comparison stored beside the runs (gate_pairwise.py).
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Lang, t
from rubriceval.report.compare import compare_data
from rubriceval.report.gate_checks import RUN_STATS, GateConfig, GateUsageError, gate_config
from rubriceval.report.gate_regression import REGRESSION_STATS, regression_note, scaled, significance
from rubriceval.report.gate_result import CheckResult, check_result, format_figure
from rubriceval.report.gate_sources import DEFAULT_SOURCE, GATE_SOURCES, GateTarget, SourceResults, resolve
from rubriceval.report.gate_trust import AgreementSource, trust_from_store, untrusted_reason
from rubriceval.report.run_data import RunData, load_run
from rubriceval.report.summary_models import ScorerSummary

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class GateResult(BaseModel):
    run: str
    run_id: str
    baseline: str | None = None
    checks: list[CheckResult]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def exit_code(self) -> int:
        return EXIT_PASSED if self.passed else EXIT_FAILED

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]


# -- evaluation ---------------------------------------------------------------------------------------------------


def _resolve(data: RunData, scorer: str) -> ScorerSummary:
    try:
        return data.summary.get(scorer)
    except KeyError:
        available = ", ".join(f"{s.scorer} ({s.name})" if s.name != s.scorer else s.scorer
                              for s in data.summary.scorers)
        raise GateUsageError(f"run '{data.run_name}' has no rubric or metric '{scorer}' (or the name is ambiguous)",
                             field="gate", hint=f"available: {available}") from None


def _scorer_value(s: ScorerSummary, stat: str) -> tuple[float | None, str | None]:
    if stat == "unscored_rate":
        return s.unscored_rate, None if s.n_total else "no rows"
    if stat == "n_scored":
        return float(s.n_scored), None
    value = getattr(s, stat)
    if value is None:
        return None, "; ".join(s.notes) or f"{stat} is undefined"
    return value, None


def _untrusted(summaries: Sequence[ScorerSummary], agreement: AgreementSource) -> list[str]:
    return [r for r in (untrusted_reason(s, agreement) for s in summaries) if r]


def evaluate_data(data: RunData, config: GateConfig, *, baseline: RunData | None = None,
                  agreement: AgreementSource = None) -> GateResult:
    """Evaluate a gate on a loaded run (and a loaded baseline, for regression checks)."""
    results: list[CheckResult] = []
    comparison = None
    for check in config.checks:
        if check.stat in REGRESSION_STATS:       # each scorer on its own scale: report/gate_regression.py
            if baseline is None:
                raise GateUsageError(f"gate check '{check.label()}' needs a baseline run", field="baseline",
                                     hint="pass --baseline <run> or set 'baseline:' in the gate file")
            if comparison is None:
                comparison = compare_data(baseline, data, n_boot=config.n_boot, seed=config.seed)
            deltas = comparison.deltas
            per_scorer = check.scorer is not None
            if check.scorer is not None:
                target = _resolve(data, check.scorer)
                deltas = [d for d in deltas if d.scorer == target.scorer]
                if not deltas:
                    raise GateUsageError(f"baseline '{baseline.run_name}' has no '{check.scorer}' to compare with",
                                         field="gate")
            for d in deltas:
                summary = data.summary.get(d.scorer)
                ci = regression_note(d, per_scorer)
                if d.version_changed:
                    ci += f" (scorer changed: {d.version_a} → {d.version_b})"
                name = check.name if per_scorer and check.name else f"{check.stat}:{d.scorer}{check.op}{check.value:g}"
                result = check_result(check, name, scaled(d.delta, d, per_scorer), d.note or "no paired samples",
                                      _untrusted([summary], agreement), config.refuse_untrusted, d.scorer, ci)
                refused = result.untrusted and config.refuse_untrusted
                if check.stat == "significant_regression" and not result.passed and not refused \
                        and result.actual is not None:
                    significant, why = significance(d)
                    result = result.model_copy(update={"passed": not significant, "reason": f"{result.reason}; {why}"})
                results.append(result)
        elif check.scorer is None and check.stat == "business_score":
            rubrics = [data.summary.get(r) for r in data.summary.business_rubrics]
            results.append(check_result(check, check.label(), data.summary.business_score,
                                        data.summary.business_score_note, _untrusted(rubrics, agreement),
                                        config.refuse_untrusted))
        elif check.scorer is None and check.stat == "unscored_rate":
            results.append(check_result(check, check.label(), data.summary.unscored_rate, "the run has no verdicts", [],
                                        config.refuse_untrusted,
                                        extra=f" ({data.summary.n_unscored}/{data.summary.n_verdicts} rows)"))
        else:
            target = _resolve(data, check.scorer or "")
            if check.stat in RUN_STATS and check.stat != "unscored_rate":
                raise GateUsageError(f"'{check.stat}' is a run-level check and takes no scorer", field="gate")
            actual, why_missing = _scorer_value(target, check.stat)
            extra = ""
            if check.stat == "pass_rate" and target.threshold is not None:
                extra = f" (threshold {target.threshold:g}, {target.n_passed}/{target.n_scored} passed)"
            elif check.stat == "unscored_rate":
                extra = f" ({target.n_unscored}/{target.n_total} rows)"
            if target.n_pending:          # issue 44: verdicts pending review are in no figure the gate reads
                extra += f" ({target.n_pending} pending review, not counted)"
                why_missing = why_missing and f"{why_missing} ({target.n_pending} pending review, not counted)"
            results.append(check_result(check, check.label(), actual, why_missing, _untrusted([target], agreement),
                                        config.refuse_untrusted, target.scorer, extra))
    return GateResult(run=data.run_name, run_id=data.run_id, baseline=baseline.run_name if baseline else None,
                      checks=results)


def evaluate_gate(store: Any, run: str, config: GateConfig | Sequence[str], *, baseline: str | None = None,
                  agreement: AgreementSource = None, machine_only: bool = False) -> GateResult:
    """Evaluate a gate (a GateConfig, or check strings) on a stored run, on official scores (machine_only: the
    judge's). Raises GateUsageError on a bad gate."""
    if not isinstance(config, GateConfig):
        config = gate_config(config)
    # The run's own checks here (with the baseline and trust bars); the rest by their source (gate_sources.py):
    # pairwise, scorecard totals, "… by <fields>" segments, trend periods, in registration order.
    run_checks = [c for c in config.checks if c.source == DEFAULT_SOURCE and not c.by]
    others = [c for c in config.checks if not (c.source == DEFAULT_SOURCE and not c.by)]
    result = None
    if run_checks or not others:
        thresholds = config.metric_thresholds or None
        data = load_run(store, run, thresholds, breakdown=False, machine_only=machine_only)
        baseline_name = baseline or config.baseline
        base = load_run(store, baseline_name, thresholds, breakdown=False,
                        machine_only=machine_only) if baseline_name else None
        result = evaluate_data(data, config.model_copy(update={"checks": run_checks}), baseline=base,
                               agreement=agreement)
    target = GateTarget(store=store, run=run, config=config, machine_only=machine_only)
    for source in GATE_SOURCES.values():
        checks = [c for c in others if c.source == source.name]
        if not checks:
            continue
        found: SourceResults = resolve(source.evaluate or source.segments_evaluate)(target, checks)
        if result is None:
            if found.run and found.run_id:       # a source reported under a name of its own (pairwise: the comparison)
                result = GateResult(run=found.run, run_id=found.run_id, checks=[])
            else:
                info = target.info()
                result = GateResult(run=found.run or info.name, run_id=found.run_id or info.run_id, checks=[])
        result.checks += found.checks
    if result is None:          # cannot be: every check's source is registered, so a gate with checks has a result
        raise GateUsageError("the gate has no check", field="gate")
    return result


# -- output -------------------------------------------------------------------------------------------------------

def junit_xml(result: GateResult) -> str:
    """JUnit XML with one testcase per check, so CI systems list each check as passed or failed."""
    failures = len(result.failures)
    suites = ET.Element("testsuites", name="rubriceval", tests=str(len(result.checks)), failures=str(failures),
                        errors="0")
    suite = ET.SubElement(suites, "testsuite", name=f"rubriceval gate: {result.run}", tests=str(len(result.checks)),
                          failures=str(failures), errors="0", skipped="0", time="0")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="run", value=result.run)
    ET.SubElement(props, "property", name="run_id", value=result.run_id)
    if result.baseline:
        ET.SubElement(props, "property", name="baseline", value=result.baseline)
    for check in result.checks:
        case = ET.SubElement(suite, "testcase", name=check.name, classname=f"rubriceval.gate.{result.run}",
                             time="0")
        if not check.passed:
            kind = "UntrustedRubric" if check.reason.startswith("untrusted") else "GateCheckFailed"
            failure = ET.SubElement(case, "failure", message=check.reason, type=kind)
            failure.text = f"{check.name}: actual {format_figure(check.actual)}, expected {check.expected}\n{check.reason}"
        else:
            ET.SubElement(case, "system-out").text = check.reason
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_junit_xml(result: GateResult, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(junit_xml(result), encoding="utf-8")
    return out


def format_gate_result(result: GateResult, lang: Lang = "en") -> str:
    from rubriceval.common.tables import text_table

    rows = [[("✓ " if c.passed else "✗ ") + c.name, c.reason] for c in result.checks]   # the reason holds the value
    head = f"{t('gate', lang)} · {result.run}" + (f" vs {result.baseline}" if result.baseline else "")
    verdict = t("gate_passed" if result.passed else "gate_failed", lang)
    verdict += f" ({len(result.checks) - len(result.failures)}/{len(result.checks)})"
    table = text_table([t("check", lang), t("reason", lang)], rows)
    return f"{head}\n\n{table}\n\n{verdict}\n"


def _data_language(store: Any, run_id: str) -> Lang:
    """The gated run's language; a pairwise-only gate has no run (its comparison may be of datasets): English."""
    from rubriceval.report.source import RunSource

    try:
        return RunSource(store, run_id).language()      # read in chunks, not every sample at once
    except RubricEvalError:
        return "en"


def run_gate(store: Any, run: str, checks: Sequence[str] = (), *, config_path: str | Path | None = None,
             baseline: str | None = None, junit_path: str | Path | None = None,
             refuse_untrusted: bool | None = None, agreement: AgreementSource = None, lang: str | None = None,
             out: Callable[[str], Any] | None = None, zones: tuple[str, str] | None = None,
             machine_only: bool = False) -> int:
    """What `rubriceval gate` does: evaluate, print, write JUnit XML, and return the exit code (0/1/2).
    zones: (--tz, --naive-tz) of "… by week" checks, when not UTC."""
    write = out or (lambda text: print(text, end=""))
    try:
        config = gate_config(checks, config_path, baseline=baseline, refuse_untrusted=refuse_untrusted)
        if zones and zones != ("UTC", "UTC"):
            config.tz, config.naive_tz = zones
        if config.refuse_untrusted and agreement is None:
            agreement = trust_from_store(store, run)
        result = evaluate_gate(store, run, config, agreement=agreement, machine_only=machine_only)
    except RubricEvalError as exc:
        message = f"gate usage error: {exc.format()}\n"
        if out is None:
            sys.stderr.write(message)
        else:
            write(message)
        return EXIT_USAGE
    report_lang: Lang = "zh" if lang == "zh" else "en" if lang == "en" else _data_language(store, result.run_id)
    write(format_gate_result(result, report_lang))
    if junit_path:
        write_junit_xml(result, junit_path)
    return result.exit_code

