"""The gate-check source registry: where a gate check reads its figure. One record per source — its prefix, its
statistics, whether `… by <fields>` applies, how its checks are labelled, parsed and evaluated — the single table
GateCheck.source, parse_check (gate_checks.py), GateCheck.label and evaluate_gate (gate.py) are derived from;
tests/report/test_check_registry_gate.py checks the syntax docs and every source's example against it.

Functions are named by import path ("module:function", resolved when first used), as the check-kind registry does:
a source's module may import the gate's own modules without an import circle.

    parse     (lhs, text) -> (stat, scorer): the check's left-hand side (prefix included) read into its statistic
              and what it names (None: run level); raises GateUsageError
    evaluate  (target, checks) -> SourceResults: the results of this source's checks on a GateTarget (the store, the
              run as the user named it, the gate's config); None for the run source, which gate.py evaluates with
              its baseline and trust bars
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, NamedTuple

By = Literal["segments", "periods"]


@dataclass(frozen=True)
class GateSource:
    name: str                        # GateCheck.source
    prefixes: tuple[str, ...]        # lower-case starts of a check that pick it; the run source has none (default)
    stats: tuple[str, ...]           # the statistics it reads
    parse: str                       # "module:function", see above
    label: str                       # how a check is shown, e.g. "pairwise:{scorer} {stat}{op}{value}"
    example: str                     # a check of this source, as a user writes it
    syntax: str                      # what the gate_checks.py syntax (and docs) say of it
    label_run_level: str | None = None   # the label of a check naming no scorer
    bare: tuple[str, ...] = ()       # left-hand sides that pick it without a prefix ("fatal_rate")
    by: By | None = None             # what "… by X" means for it: segments (--by groupings), periods, or refused
    evaluate: str | None = None      # "module:function", see above; None: the run source (gate.py)
    segments_evaluate: str | None = field(default=None)   # "module:function" for its "… by <fields>" checks

    def picks(self, lhs: str) -> bool:
        lower = lhs.lower()
        return (bool(self.prefixes) and lower.startswith(self.prefixes)) or lower in self.bare

    def label_of(self, stat: str, scorer: str | None, op: str, value: float, by: str | None) -> str:
        template = self.label if scorer is not None or self.label_run_level is None else self.label_run_level
        return template.format(stat=stat, scorer=scorer, op=op, value=f"{value:g}", by=f" by {by}" if by else "")


@dataclass
class GateTarget:
    """What a gate is asked about: the run store, the run as the user named it (or a comparison, for pairwise), the
    gate's config and whether official scores are set aside (machine_only)."""

    store: Any
    run: str
    config: Any                      # GateConfig
    machine_only: bool = False
    _info: Any = field(default=None, repr=False)

    def info(self) -> Any:
        """The gated run's RunInfo (name, run_id), looked up once."""
        if self._info is None:
            self._info = self.store.run_info(self.run)
        return self._info


class SourceResults(NamedTuple):
    checks: list[Any]                # CheckResults, in check order
    run: str | None = None           # the name a gate of this source alone is reported under (pairwise: the
    run_id: str | None = None        # comparison's); None: the run's


# Registration order is the order results are reported in (after the run's own checks).
GATE_SOURCES: dict[str, GateSource] = {source.name: source for source in (
    GateSource(
        "pairwise", prefixes=("pairwise:",), stats=("win_rate", "win_rate_low", "loss_rate", "tie_rate",
                                                    "unscored_rate", "n_scored"),
        parse="rubriceval.report.gate_checks:parse_pairwise", label="pairwise:{scorer} {stat}{op}{value}",
        evaluate="rubriceval.report.gate_pairwise:evaluate_source", example="pairwise:emotional_soothing win_rate>=0.5",
        syntax="a pairwise A/B comparison (`rubriceval pairwise`): the gated version's win rate against the baseline "
               "version"),
    GateSource(
        "scorecard", prefixes=("scorecard:",), bare=("fatal_rate", "awaiting_review_rate"),
        stats=("mean", "median", "min", "max", "std", "pass_rate", "fatal_rate", "unscored_rate", "n_scored",
               "awaiting_review_rate", "n_awaiting_review"),
        parse="rubriceval.report.gate_scorecard:parse_scorecard", label="scorecard:{scorer} {stat}{op}{value}",
        label_run_level="{stat}{op}{value}", evaluate="rubriceval.report.gate_scorecard:evaluate_source",
        example="scorecard:ecommerce_qa_zh total mean>=90",
        syntax="a scorecard's totals (the bare fatal_rate and awaiting_review_rate: every scorecard of the run; "
               "awaiting_review_rate, n_awaiting_review: conversations whose total awaits a reviewer); per segment: "
               "'<scorecard> total mean>=90 by agent_id'"),
    GateSource(
        "auto_accept", prefixes=("auto_accept:",), bare=("min_auto_coverage", "min_auto_agreement"),
        stats=("coverage", "agreement"), parse="rubriceval.report.auto_accept:parse_auto_accept",
        label="auto_accept:{scorer} {stat}{op}{value}", label_run_level="min_auto_{stat}{op}{value}",
        evaluate="rubriceval.report.auto_accept:evaluate_source", example="auto_accept:ecommerce_qa_zh coverage>=0.6",
        syntax="a scorecard's automatic acceptance (issue 44, `auto_accept:` target): coverage (share of decisions "
               "accepted automatically) or agreement (the lowest guaranteed among its items); the bare "
               "min_auto_coverage / min_auto_agreement over every card with a target"),
    GateSource(
        "run", prefixes=(), stats=("mean", "median", "min", "max", "std", "pass_rate", "unscored_rate", "n_scored",
                                   "business_score", "regression", "significant_regression"),
        parse="rubriceval.report.gate_checks:parse_run", label="{stat}:{scorer}{op}{value}{by}",
        label_run_level="{stat}{op}{value}{by}", by="segments",
        segments_evaluate="rubriceval.report.gate_segments:evaluate_source", example="情绪安抚 mean>=4.0",
        syntax="a rubric's or metric's figure in the gated run, or the run's own (business_score, unscored_rate, "
               "regression against the baseline)"),
    GateSource(
        "trend", prefixes=("trend:",), stats=("mean", "pass_rate"), by="periods",
        parse="rubriceval.report.gate_checks:parse_trend", label="trend:{scorer} {stat} drop{op}{value}{by}",
        evaluate="rubriceval.report.gate_trend:evaluate_source", example="trend:emotional_soothing mean drop<=0.3",
        syntax="the latest period's fall against the previous one (runs in period order, or time buckets with "
               "'by week')"),
)}
SOURCE_NAMES: tuple[str, ...] = tuple(GATE_SOURCES)
DEFAULT_SOURCE = "run"


def source_of(lhs: str) -> GateSource:
    """The source a check's left-hand side picks: the first whose prefix (or bare name) it has, else the run."""
    return next((s for s in GATE_SOURCES.values() if s.picks(lhs)), GATE_SOURCES[DEFAULT_SOURCE])


@cache
def resolve(path: str) -> Callable[..., Any]:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)
