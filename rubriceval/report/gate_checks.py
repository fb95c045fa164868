"""Gate checks: their syntax, and gate files in YAML.

Check syntax (one string each; full-width ≥ ≤ ： are accepted):
    <scorer> >= 0.8                 mean of a rubric/metric (scorer = id or display name)
    <scorer> <stat> >= 4.0          stat: mean, median, min, max, std, pass_rate, unscored_rate, n_scored
    <stat>:<scorer> >= 0.9          same, prefix form ("pass_rate:流程合规>=0.9")
    business_score >= 3.5           the weighted business score (1–5)
    max_unscored_rate <= 0.1        share of unscored rows in the whole run ("max_unscored_rate:<scorer>" per scorer)
    regression >= -0.1              every shared scorer's paired mean delta vs the baseline run, as a fraction of
                                    its range (1–5 rubric: 4 points, 0–1 metric: 1); "regression:<scorer>>=-0.5" on
                                    that scorer's own scale (gate_regression.py)
    significant_regression >= -0.1  the same, failing only when the paired 95% CI of the drop excludes 0
    pairwise:<rubric> win_rate >= 0.5   a pairwise A/B comparison (`rubriceval pairwise`): the gated version's win
                                    rate against the baseline version; stats: win_rate (default), win_rate_low (its
                                    95% CI lower bound), loss_rate, tie_rate, unscored_rate, n_scored
    scorecard:<id> total mean>=90   a scorecard's totals in the run (stats: mean, median, min, max, std, pass_rate,
                                    fatal_rate, unscored_rate, n_scored, awaiting_review_rate, n_awaiting_review);
                                    the bare "fatal_rate<=0.01" and "awaiting_review_rate<=0.1" over every
                                    scorecard of the run; per segment: "<id> total mean>=90 by agent_id"
    auto_accept:<id> coverage>=0.6  a scorecard's automatic acceptance (`auto_accept:` target, issue 44): coverage
                                    (share of decisions accepted automatically) or agreement (the agreement
                                    guaranteed, the lowest among its items); the bare "min_auto_coverage>=0.6" and
                                    "min_auto_agreement>=0.9" over every scorecard with a target
    <check> by <fields>             the check in every segment (`report --by` syntax: "qa mean>=4 by agent_id"):
                                    fails naming the segments that fail (rubriceval/report/gate_segments.py)
    trend:<scorer> [mean|pass_rate] drop<=0.3   the latest period's fall against the previous period (runs in
                                    period order, or time buckets with "by week"): rubriceval/trend/
Values may be percentages ("90%"). Which sources there are — their prefixes, statistics, `… by`, labels, parsers
and evaluators — is the gate-source registry's (gate_sources.py); everything here is derived from it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubriceval.common.errors import RubricEvalError
from rubriceval.report.gate_sources import DEFAULT_SOURCE, GATE_SOURCES, SOURCE_NAMES, resolve, source_of

Op = Literal[">=", "<=", ">", "<"]
SCORER_STATS = ("mean", "median", "min", "max", "std", "pass_rate", "unscored_rate", "n_scored")
RUN_STATS = ("business_score", "unscored_rate", "regression", "significant_regression")
PAIRWISE_STATS = GATE_SOURCES["pairwise"].stats
PAIRWISE_PREFIX = GATE_SOURCES["pairwise"].prefixes[0]
TREND_PREFIX = GATE_SOURCES["trend"].prefixes[0]
TREND_STATS = GATE_SOURCES["trend"].stats
_BY_RE = re.compile(r"^(?P<check>.*?[<>]=?\s*[-+]?(?:\d+\.?\d*|\.\d+)\s*%?)\s+by\s+(?P<by>\S.*)$")
ALIASES = {"max_unscored_rate": "unscored_rate", "unscored": "unscored_rate", "passrate": "pass_rate",
           "avg": "mean", "average": "mean"}
# Operators people type that the gate does not read, with what they probably meant.
_BAD_OPERATORS = {"=>": ">=", "=<": "<=", "==": None, "!=": None, "=": None}
_BAD_OPERATOR_RE = re.compile(r"=>|=<|==|!=|(?<![<>=!])=(?![<>=])")
_CHECK_RE = re.compile(r"^(?P<lhs>.*?)\s*(?P<op>>=|<=|>|<)\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+))\s*(?P<pct>%)?\s*$")


class GateUsageError(RubricEvalError):
    """The gate itself is wrong (bad syntax, unknown scorer, regression without baseline): exit code 2."""


class GateCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stat: str
    scorer: str | None = None        # None: a run-level check (business_score, unscored_rate, regression over all)
    op: Op
    value: float
    name: str = ""                   # how the check is shown; defaults to its text
    # Where the figure is read (gate_sources.py): the run, a stored pairwise comparison, periods (trend), a run's
    # scorecard totals (scorecard).
    source: Literal[SOURCE_NAMES] = DEFAULT_SOURCE  # type: ignore[valid-type]
    by: str | None = None            # checked in every segment of these groupings (`--by` syntax)

    def label(self) -> str:
        if self.name:
            return self.name
        return GATE_SOURCES[self.source].label_of(self.stat, self.scorer, self.op, self.value, self.by)


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checks: list[GateCheck] = Field(default_factory=list)
    baseline: str | None = None
    pairwise: str | None = None      # the comparison pairwise checks read (default: the newest with the gated run)
    refuse_untrusted: bool = False
    metric_thresholds: dict[str, float] = Field(default_factory=dict)
    n_boot: int = Field(default=2000, ge=0)
    seed: int = 0
    tz: str = "UTC"                  # zone of day/week/month segments ("… by week"); see rubriceval/segments/
    naive_tz: str = "UTC"            # zone of timestamps written without an offset
    trend_runs: list[str] = Field(default_factory=list)   # the runs a trend check reads (default: the store's)


def _normalize(text: str) -> str:
    return (text.replace("≥", ">=").replace("≤", "<=").replace("＞", ">").replace("＜", "<")
            .replace("：", ":").replace("＝", "=").strip())


def _reject_bad_operator(text: str, normalized: str) -> None:
    """'x mean=>4' must say the operator is wrong, not that there is no scorer called 'x mean='."""
    bad = _BAD_OPERATOR_RE.search(normalized)
    if bad is None:
        return
    meant = _BAD_OPERATORS[bad.group(0)]
    fixed = normalized[:bad.start()] + meant + normalized[bad.end():] if meant else None
    raise GateUsageError(f"'{bad.group(0)}' at column {bad.start() + 1} of gate check {text!r} is not an operator; "
                         "use >=, <=, > or <", field="gate",
                         hint=f"did you mean {fixed!r}?" if fixed else "e.g. 'faithfulness>=0.8'")


def parse_check(text: str) -> GateCheck:
    """'情绪安抚 mean>=4.0' → GateCheck(stat='mean', scorer='情绪安抚', op='>=', value=4.0)."""
    normalized = _normalize(text)
    by_match = _BY_RE.match(normalized)
    if by_match:                     # "… by agent_id": the same check in every segment
        check = parse_check(by_match["check"])
        if GATE_SOURCES[check.source].by is None:
            raise GateUsageError(f"gate check {text!r}: a {check.source} check has no segments", field="gate",
                                 hint=GATE_SOURCES[check.source].syntax)
        return check.model_copy(update={"by": by_match["by"].strip(), "name": text.strip()})
    _reject_bad_operator(text, normalized)
    match = _CHECK_RE.match(normalized)
    if not match or not match["lhs"]:
        raise GateUsageError(f"cannot read gate check {text!r}", field="gate",
                             hint="write e.g. 'faithfulness>=0.8', '情绪安抚 mean>=4.0', 'pass_rate:流程合规>=0.9', "
                                  "'regression>=-0.2' or 'max_unscored_rate<=0.1'")
    lhs = match["lhs"].strip()
    value = float(match["num"]) / (100 if match["pct"] else 1)
    op = cast(Op, match["op"])
    source = source_of(lhs)
    stat, scorer = resolve(source.parse)(lhs, text)
    return GateCheck(stat=stat, scorer=scorer, op=op, value=value, name=text.strip(), source=source.name)


def parse_pairwise(lhs: str, text: str) -> tuple[str, str]:
    """The pairwise source's left-hand side: 'pairwise:<rubric> [stat]'."""
    return _split_pairwise(lhs[len(PAIRWISE_PREFIX):].strip(), text)


def parse_trend(lhs: str, text: str) -> tuple[str, str]:
    """The trend source's left-hand side: 'trend:<scorer> [mean|pass_rate] drop'."""
    return _split_trend(lhs[len(TREND_PREFIX):].strip(), text)


def parse_run(lhs: str, text: str) -> tuple[str, str | None]:
    """The run source's left-hand side: '<scorer> [stat]', '<stat>:<scorer>' or a run-level statistic."""
    return _split_lhs(lhs, text)


def _split_pairwise(rest: str, text: str) -> tuple[str, str]:
    """'emotional_soothing win_rate' → ('win_rate', 'emotional_soothing'); the stat defaults to win_rate."""
    words = rest.rsplit(None, 1)
    stat, scorer = (words[1].lower(), words[0]) if len(words) == 2 and words[1].lower() in PAIRWISE_STATS \
        else ("win_rate", rest)
    if not scorer or scorer.lower() in PAIRWISE_STATS:
        raise GateUsageError(f"gate check {text!r} names no rubric", field="gate",
                             hint="write e.g. 'pairwise:emotional_soothing win_rate>=0.5'")
    return stat, scorer


def _split_trend(rest: str, text: str) -> tuple[str, str]:
    """'qa total mean drop' → ('mean', 'qa total'); the statistic defaults to mean, 'drop' is required."""
    words = rest.split()
    if not words or words[-1].lower() != "drop":
        raise GateUsageError(f"gate check {text!r}: a trend check gates a drop", field="gate",
                             hint="write e.g. 'trend:emotional_soothing mean drop<=0.3'")
    words = words[:-1]
    stat = "mean"
    if words and ALIASES.get(words[-1].lower(), words[-1].lower()) in TREND_STATS:
        stat = ALIASES.get(words[-1].lower(), words[-1].lower())
        words = words[:-1]
    if not words:
        raise GateUsageError(f"gate check {text!r} names no rubric or metric", field="gate",
                             hint="write e.g. 'trend:emotional_soothing mean drop<=0.3'")
    return stat, " ".join(words)


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
        return stat, None
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
        allowed = GATE_SOURCES[check.source].stats
        if check.stat not in allowed:
            raise GateUsageError(f"unknown statistic {check.stat!r}", file=where, field="stat",
                                 hint=f"use one of {', '.join(allowed)}")
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
