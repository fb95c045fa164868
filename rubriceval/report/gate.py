"""A CI quality gate over a stored run: checks like "情绪安抚 mean>=4.0" or "faithfulness>=0.8", a JUnit XML report
with one testcase per check, and exit codes CI understands (0 passed, 1 gate failed, 2 usage error).

Check syntax (one string each; full-width ≥ ≤ ： are accepted):
    <scorer> >= 0.8                 mean of a rubric/metric (scorer = id or display name)
    <scorer> <stat> >= 4.0          stat: mean, median, min, max, std, pass_rate, unscored_rate, n_scored
    <stat>:<scorer> >= 0.9          same, prefix form ("pass_rate:流程合规>=0.9")
    business_score >= 3.5           the weighted business score (1–5)
    max_unscored_rate <= 0.1        share of unscored rows in the whole run ("max_unscored_rate:<scorer>" per scorer)
    regression >= -0.2              every shared scorer's paired mean delta vs the baseline run ("regression:<scorer>")
Values may be percentages ("90%").

A rubric may declare a trust bar (min_kappa, min_items). With `refuse_untrusted`, any check that relies on a rubric
whose judge–expert agreement (passed in as `agreement`) misses that bar fails, saying why.
"""
from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubriceval.errors import RubricEvalError
from rubriceval.report.aggregate import RunData, ScorerSummary, load_run
from rubriceval.report.compare import compare_data
from rubriceval.report.i18n import Lang, detect_language, t

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
Op = Literal[">=", "<=", ">", "<"]
SCORER_STATS = ("mean", "median", "min", "max", "std", "pass_rate", "unscored_rate", "n_scored")
RUN_STATS = ("business_score", "unscored_rate", "regression")
ALIASES = {"max_unscored_rate": "unscored_rate", "unscored": "unscored_rate", "passrate": "pass_rate",
           "avg": "mean", "average": "mean"}
_CHECK_RE = re.compile(r"^(?P<lhs>.*?)\s*(?P<op>>=|<=|>|<)\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+))\s*(?P<pct>%)?\s*$")
_DECIMALS = 9   # compare at this precision, so a mean of 3.2000000000000006 meets ">= 3.2"


class GateUsageError(RubricEvalError):
    """The gate itself is wrong (bad syntax, unknown scorer, regression without baseline): exit code 2."""


class GateCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stat: str
    scorer: str | None = None        # None: a run-level check (business_score, unscored_rate, regression over all)
    op: Op
    value: float
    name: str = ""                   # how the check is shown; defaults to its text

    def label(self) -> str:
        if self.name:
            return self.name
        lhs = self.stat if self.scorer is None else f"{self.stat}:{self.scorer}"
        return f"{lhs}{self.op}{self.value:g}"


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checks: list[GateCheck] = Field(default_factory=list)
    baseline: str | None = None
    refuse_untrusted: bool = False
    metric_thresholds: dict[str, float] = Field(default_factory=dict)
    n_boot: int = Field(default=2000, ge=0)
    seed: int = 0


class CheckResult(BaseModel):
    name: str
    stat: str
    scorer: str | None = None
    passed: bool
    actual: float | None = None
    expected: str
    reason: str
    untrusted: bool = False


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


# -- parsing -----------------------------------------------------------------------------------------------------

def _normalize(text: str) -> str:
    return (text.replace("≥", ">=").replace("≤", "<=").replace("＞", ">").replace("＜", "<")
            .replace("：", ":").replace("＝", "=").strip())


def parse_check(text: str) -> GateCheck:
    """'情绪安抚 mean>=4.0' → GateCheck(stat='mean', scorer='情绪安抚', op='>=', value=4.0)."""
    normalized = _normalize(text)
    match = _CHECK_RE.match(normalized)
    if not match or not match["lhs"]:
        raise GateUsageError(f"cannot read gate check {text!r}", field="gate",
                             hint="write e.g. 'faithfulness>=0.8', '情绪安抚 mean>=4.0', 'pass_rate:流程合规>=0.9', "
                                  "'regression>=-0.2' or 'max_unscored_rate<=0.1'")
    lhs = match["lhs"].strip()
    value = float(match["num"]) / (100 if match["pct"] else 1)
    op = match["op"]
    stat, scorer = _split_lhs(lhs, text)
    return GateCheck(stat=stat, scorer=scorer, op=op, value=value, name=text.strip())  # type: ignore[arg-type]


def _stat_name(word: str) -> str | None:
    word = ALIASES.get(word.lower(), word.lower())
    return word if word in SCORER_STATS or word in RUN_STATS else None


def _split_lhs(lhs: str, text: str) -> tuple[str, str | None]:
    if ":" in lhs:
        left, right = (part.strip() for part in lhs.split(":", 1))
        if _stat_name(left) and right:
            return _stat_name(left), right  # type: ignore[return-value]
        if _stat_name(right) and left:
            return _stat_name(right), left  # type: ignore[return-value]
        raise GateUsageError(f"gate check {text!r}: neither {left!r} nor {right!r} is a statistic", field="gate",
                             hint=f"statistics: {', '.join(SCORER_STATS)}")
    words = lhs.rsplit(None, 1)
    if len(words) == 2 and _stat_name(words[1]):
        return _stat_name(words[1]), words[0]  # type: ignore[return-value]
    stat = _stat_name(lhs)
    if stat in RUN_STATS:
        return stat, None  # type: ignore[return-value]
    if stat in SCORER_STATS:
        raise GateUsageError(f"gate check {text!r}: '{lhs}' needs a scorer", field="gate",
                             hint=f"write '{lhs}:<rubric or metric>' or '<rubric or metric> {lhs}'")
    return "mean", lhs


def _check_from_yaml(item: Any, where: str) -> GateCheck:
    if isinstance(item, str):
        return parse_check(item)
    if isinstance(item, Mapping):
        if set(item) <= {"check", "name"} and "check" in item:
            check = parse_check(str(item["check"]))
            return check.model_copy(update={"name": str(item.get("name") or check.name)})
        data = dict(item)
        if "stat" in data:
            data["stat"] = _stat_name(str(data["stat"])) or data["stat"]
        try:
            check = GateCheck.model_validate(data)
        except ValidationError as exc:
            raise GateUsageError(f"invalid gate check: {exc.errors()[0]['msg']}", file=where,
                                 field=".".join(str(p) for p in exc.errors()[0]["loc"])) from None
        if check.stat not in SCORER_STATS and check.stat not in RUN_STATS:
            raise GateUsageError(f"unknown statistic {check.stat!r}", file=where, field="stat",
                                 hint=f"use one of {', '.join(SCORER_STATS + RUN_STATS)}")
        return check
    raise GateUsageError(f"a gate check must be a string or a mapping, got {type(item).__name__}", file=where)


def load_gate_config(path: str | Path) -> GateConfig:
    """A YAML gate: a list of check strings, or {checks: [...], baseline, refuse_untrusted, metric_thresholds}."""
    where = str(path)
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GateUsageError("gate file not found", file=where) from None
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise GateUsageError(f"not valid YAML: {exc}", file=where, line=None if line is None else line + 1) from None
    if isinstance(raw, list):
        raw = {"checks": raw}
    if not isinstance(raw, Mapping):
        raise GateUsageError("a gate file holds a list of checks or a mapping with 'checks'", file=where)
    data = dict(raw)
    checks = [_check_from_yaml(item, where) for item in data.pop("checks", None) or []]
    try:
        config = GateConfig.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise GateUsageError(error["msg"], file=where, field=".".join(str(p) for p in error["loc"])) from None
    config.checks = checks
    if not checks:
        raise GateUsageError("the gate has no checks", file=where, field="checks")
    return config


def gate_config(checks: Iterable[str | GateCheck] = (), config_path: str | Path | None = None, *,
                baseline: str | None = None, refuse_untrusted: bool | None = None) -> GateConfig:
    """Merge a YAML gate file with command-line checks and options (command line wins)."""
    config = load_gate_config(config_path) if config_path else GateConfig()
    config.checks = config.checks + [c if isinstance(c, GateCheck) else parse_check(c) for c in checks]
    if baseline is not None:
        config.baseline = baseline
    if refuse_untrusted is not None:
        config.refuse_untrusted = refuse_untrusted
    if not config.checks:
        raise GateUsageError("no gate checks given", field="gate",
                             hint="pass checks like 'faithfulness>=0.8' or a gate YAML file")
    return config


# -- trust --------------------------------------------------------------------------------------------------------

class TrustEvidence(BaseModel):
    """Judge–expert agreement for one rubric: quadratic-weighted kappa and the number of audited items."""

    kappa: float | None = None
    n_items: int | None = None


AgreementSource = Mapping[str, Any] | Callable[[str], Any] | None


def as_trust_evidence(value: Any) -> TrustEvidence | None:
    """Accepts a TrustEvidence, an AgreementReport (kappa_quadratic, n), a dict {kappa, n_items|n}, a (kappa, n)
    pair, or a bare kappa (item count unknown). (A release-gate TrustStatus is handled by `untrusted_reason`.)"""
    if value is None or isinstance(value, TrustEvidence):
        return value
    if hasattr(value, "kappa_quadratic") and hasattr(value, "n"):
        return TrustEvidence(kappa=value.kappa_quadratic.value, n_items=value.n)
    if isinstance(value, Mapping):
        return TrustEvidence(kappa=value.get("kappa"), n_items=value.get("n_items", value.get("n")))
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return TrustEvidence(kappa=value[0], n_items=value[1])
    if isinstance(value, (int, float)):
        return TrustEvidence(kappa=float(value))
    raise GateUsageError(f"cannot read agreement value {value!r}", field="agreement",
                         hint="pass an AgreementReport, {'kappa': 0.7, 'n_items': 120} or (0.7, 120)")


def _lookup(agreement: AgreementSource, rubric: ScorerSummary) -> Any:
    if agreement is None:
        return None
    for key in (rubric.scorer, rubric.name):
        value = agreement(key) if callable(agreement) else agreement.get(key)
        if value is not None:
            return value
    return None


def untrusted_reason(rubric: ScorerSummary, agreement: AgreementSource) -> str | None:
    """Why a rubric's scores cannot be trusted for gating, or None when it has no trust bar or meets it."""
    bar = rubric.trust
    if rubric.kind != "rubric" or not bar:
        return None
    min_kappa, min_items = bar.get("min_kappa"), bar.get("min_items", 50)
    raw = _lookup(agreement, rubric)
    if hasattr(raw, "trusted") and hasattr(raw, "reason"):
        # A release-gate TrustStatus already judged this exact rubric version against its bar.
        return None if raw.trusted is True else f"rubric '{rubric.name}': {raw.reason}"
    evidence = as_trust_evidence(raw)
    need = f"needs κ ≥ {min_kappa} on ≥ {min_items} audited items"
    if evidence is None:
        return f"rubric '{rubric.name}' has no judge–expert agreement measured ({need})"
    if evidence.kappa is None:
        return f"rubric '{rubric.name}': κ is undefined ({need})"
    if evidence.n_items is None:
        return f"rubric '{rubric.name}': κ = {evidence.kappa:.2f} but the number of audited items is unknown ({need})"
    if evidence.n_items < min_items:
        return f"rubric '{rubric.name}': only {evidence.n_items} audited items ({need}; κ = {evidence.kappa:.2f})"
    if min_kappa is not None and evidence.kappa < min_kappa:
        return f"rubric '{rubric.name}': κ = {evidence.kappa:.2f} < {min_kappa} on {evidence.n_items} items ({need})"
    return None


def trust_from_store(store: Any, run: str) -> dict[str, Any]:
    """rubric id → TrustStatus of the exact rubric version the run used, from the expert audits and agreement
    results kept beside the runs (rubriceval.trust.release_gate), for the run's judge model."""
    from rubriceval.rubric.schema import Rubric
    from rubriceval.trust.release_gate import trust_status

    judge_model = (store.run_info(run).config.judge or {}).get("model") or None
    out = {}
    for row in store.scorers(run):
        if row["kind"] == "rubric" and (row.get("definition") or {}).get("trust"):
            rubric = Rubric.model_validate(row["definition"])
            out[rubric.id] = trust_status(store.path, rubric, judge_model=judge_model)
    return out


# -- evaluation ---------------------------------------------------------------------------------------------------

def _compare(actual: float, op: str, value: float) -> bool:
    a, v = round(actual, _DECIMALS), round(value, _DECIMALS)
    return {">=": a >= v, "<=": a <= v, ">": a > v, "<": a < v}[op]


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


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


def _result(check: GateCheck, name: str, actual: float | None, why_missing: str | None,
            untrusted: list[str], refuse_untrusted: bool, scorer: str | None = None, extra: str = "") -> CheckResult:
    expected = f"{check.op} {check.value:g}"
    if untrusted and refuse_untrusted:
        return CheckResult(name=name, stat=check.stat, scorer=scorer, passed=False, actual=actual, expected=expected,
                           reason="untrusted: " + "; ".join(untrusted), untrusted=True)
    if actual is None:
        return CheckResult(name=name, stat=check.stat, scorer=scorer, passed=False, actual=None, expected=expected,
                           reason=f"cannot be computed: {why_missing}")
    passed = _compare(actual, check.op, check.value)
    reason = f"{_fmt(actual)} {check.op if passed else 'fails ' + check.op} {check.value:g}" + extra
    if untrusted:
        reason += " (warning, untrusted: " + "; ".join(untrusted) + ")"
    return CheckResult(name=name, stat=check.stat, scorer=scorer, passed=passed, actual=actual, expected=expected,
                       reason=reason, untrusted=bool(untrusted))


def _untrusted(summaries: Sequence[ScorerSummary], agreement: AgreementSource) -> list[str]:
    return [r for r in (untrusted_reason(s, agreement) for s in summaries) if r]


def evaluate_data(data: RunData, config: GateConfig, *, baseline: RunData | None = None,
                  agreement: AgreementSource = None) -> GateResult:
    """Evaluate a gate on a loaded run (and a loaded baseline, for regression checks)."""
    results: list[CheckResult] = []
    comparison = None
    for check in config.checks:
        if check.stat == "regression":
            if baseline is None:
                raise GateUsageError(f"gate check '{check.label()}' needs a baseline run", field="baseline",
                                     hint="pass --baseline <run> or set 'baseline:' in the gate file")
            if comparison is None:
                comparison = compare_data(baseline, data, n_boot=config.n_boot, seed=config.seed)
            deltas = comparison.deltas
            if check.scorer is not None:
                target = _resolve(data, check.scorer)
                deltas = [d for d in deltas if d.scorer == target.scorer]
                if not deltas:
                    raise GateUsageError(f"baseline '{baseline.run_name}' has no '{check.scorer}' to compare with",
                                         field="gate")
            for d in deltas:
                summary = data.summary.get(d.scorer)
                ci = "" if d.ci_low is None else f" (95% CI [{d.ci_low:+.3f}, {d.ci_high:+.3f}], n={d.n_paired})"
                if d.version_changed:
                    ci += f" (scorer changed: {d.version_a} → {d.version_b})"
                name = check.name if check.scorer is not None and check.name else f"regression:{d.scorer}{check.op}" \
                                                                                  f"{check.value:g}"
                results.append(_result(check, name, d.delta, d.note or "no paired samples",
                                       _untrusted([summary], agreement), config.refuse_untrusted, d.scorer, ci))
        elif check.scorer is None and check.stat == "business_score":
            rubrics = [data.summary.get(r) for r in data.summary.business_rubrics]
            results.append(_result(check, check.label(), data.summary.business_score,
                                   data.summary.business_score_note, _untrusted(rubrics, agreement),
                                   config.refuse_untrusted))
        elif check.scorer is None and check.stat == "unscored_rate":
            results.append(_result(check, check.label(), data.summary.unscored_rate, "the run has no verdicts", [],
                                   config.refuse_untrusted,
                                   extra=f" ({data.summary.n_unscored}/{data.summary.n_verdicts} rows)"))
        else:
            target = _resolve(data, check.scorer or "")
            if check.stat in RUN_STATS and check.stat != "unscored_rate":
                raise GateUsageError(f"'{check.stat}' is a run-level check and takes no scorer", field="gate")
            actual, why = _scorer_value(target, check.stat)
            extra = ""
            if check.stat == "pass_rate" and target.threshold is not None:
                extra = f" (threshold {target.threshold:g}, {target.n_passed}/{target.n_scored} passed)"
            elif check.stat == "unscored_rate":
                extra = f" ({target.n_unscored}/{target.n_total} rows)"
            results.append(_result(check, check.label(), actual, why, _untrusted([target], agreement),
                                   config.refuse_untrusted, target.scorer, extra))
    return GateResult(run=data.run_name, run_id=data.run_id, baseline=baseline.run_name if baseline else None,
                      checks=results)


def evaluate_gate(store: Any, run: str, config: GateConfig | Sequence[str], *, baseline: str | None = None,
                  agreement: AgreementSource = None) -> GateResult:
    """Evaluate a gate (a GateConfig, or check strings) on a stored run. Raises GateUsageError on a bad gate."""
    if not isinstance(config, GateConfig):
        config = gate_config(config)
    thresholds = config.metric_thresholds or None
    data = load_run(store, run, thresholds)
    baseline_name = baseline or config.baseline
    base = load_run(store, baseline_name, thresholds) if baseline_name else None
    return evaluate_data(data, config, baseline=base, agreement=agreement)


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
            failure.text = f"{check.name}: actual {_fmt(check.actual)}, expected {check.expected}\n{check.reason}"
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
    from rubriceval.report.markdown import text_table

    rows = [[("✓ " if c.passed else "✗ ") + c.name, c.reason] for c in result.checks]   # the reason holds the value
    head = f"{t('gate', lang)} · {result.run}" + (f" vs {result.baseline}" if result.baseline else "")
    verdict = t("gate_passed" if result.passed else "gate_failed", lang)
    verdict += f" ({len(result.checks) - len(result.failures)}/{len(result.checks)})"
    table = text_table([t("check", lang), t("reason", lang)], rows)
    return f"{head}\n\n{table}\n\n{verdict}\n"


def run_gate(store: Any, run: str, checks: Sequence[str] = (), *, config_path: str | Path | None = None,
             baseline: str | None = None, junit_path: str | Path | None = None,
             refuse_untrusted: bool | None = None, agreement: AgreementSource = None, lang: str | None = None,
             out: Callable[[str], Any] | None = None) -> int:
    """What `rubriceval gate` does: evaluate, print, write JUnit XML, and return the exit code (0/1/2)."""
    write = out or (lambda text: print(text, end=""))
    try:
        config = gate_config(checks, config_path, baseline=baseline, refuse_untrusted=refuse_untrusted)
        if config.refuse_untrusted and agreement is None:
            agreement = trust_from_store(store, run)
        result = evaluate_gate(store, run, config, agreement=agreement)
    except RubricEvalError as exc:
        message = f"gate usage error: {exc.format()}\n"
        if out is None:
            sys.stderr.write(message)
        else:
            write(message)
        return EXIT_USAGE
    report_lang: Lang = lang if lang in ("zh", "en") else detect_language(store.samples(result.run_id))  # type: ignore
    write(format_gate_result(result, report_lang))
    if junit_path:
        write_junit_xml(result, junit_path)
    return result.exit_code

