"""What a stored run's judge tokens cost online and through the provider's Batch API, side by side, per scorer and
for the whole run: the figures the Markdown summary, the HTML report, the Excel workbook and the end-of-run line of
`rubriceval run` show (issue 19: "reports and dry-run show online vs batch cost side by side").

The pricing itself is `rubriceval/judge/pricing.py` (the dry run uses it too); this module says whose prices each
stored token is priced at:

- metrics, and rubrics judged by one judge: the run's judge (`RunConfig.judge`);
- rubrics judged by a panel: each panel judge's tokens (its votes' usage, `PanelVote.usage`, summed per judge in
  `PanelAgreement.judges`) at that judge's own prices (`RunConfig.panel`). A run stored before votes kept their
  usage cannot be split by judge: its panel rubrics and its total are "not available" (`None`) rather than a figure
  at the wrong prices.

The cost the run recorded (`Usage.cost_usd`, each reply priced at its own judge's price when it was stored) stays
beside these figures. When no judge of the run has a known online price (the embedded judge, unpriced models) there
is nothing to put side by side: `run_cost` is None and the reports show what they showed before.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from rubriceval.core.verdict import Usage
from rubriceval.judge.pricing import JudgePrices, SideBySide, side_by_side
from rubriceval.report.summary_models import ScorerSummary, Summary
from rubriceval.scoring.panel_votes import RUN_JUDGE

UNPRICED = JudgePrices(online=(0.0, 0.0), batch=(0.0, 0.0))


class RunCost(BaseModel):
    """A run's tokens priced online and through the Batch API; None where it is not available (a panel rubric
    whose stored votes do not say what each judge spent, and then the total)."""

    scorers: dict[str, SideBySide | None]
    total: SideBySide | None

    @property
    def complete(self) -> bool:
        return self.total is not None


def _prices(judge: Mapping[str, Any] | None) -> JudgePrices:
    """The prices of stored judge settings (a run's `judge`, or a panel judge's `config`)."""
    from rubriceval.judge.config import JudgeConfig

    try:
        config = JudgeConfig.model_validate({k: v for k, v in (judge or {}).items() if k in JudgeConfig.model_fields})
    except ValueError:           # settings written by another version: no price to vouch for
        return UNPRICED
    return JudgePrices.of(config)


def run_prices(info: Mapping[str, Any]) -> dict[str, JudgePrices]:
    """Each judge's prices of a stored run (`RunInfo` dumped as JSON, as RunData.info holds it): the run's judge
    under RUN_JUDGE, each panel judge under its name."""
    config = info.get("config") or {}
    prices = {RUN_JUDGE: _prices(config.get("judge"))}
    for judge in (config.get("panel") or {}).get("judges") or []:
        prices[str(judge.get("name"))] = _prices(judge.get("config"))
    return prices


def scorer_tokens(scorer: ScorerSummary) -> dict[str, Usage] | None:
    """Whose tokens a scorer's are: the run's judge's, or each panel judge's; None when a panel rubric's stored
    votes do not account for all of its tokens (votes stored before they kept their usage)."""
    if scorer.panel is None:
        return {RUN_JUDGE: scorer.usage}
    if not (scorer.usage.prompt_tokens or scorer.usage.completion_tokens):
        return {}                               # nothing to price, whoever judged
    by_judge = {}
    for record in scorer.panel.judges:
        if record.usage is None:
            return None
        by_judge[record.judge] = record.usage
    voted = sum(by_judge.values(), Usage())
    if (voted.prompt_tokens, voted.completion_tokens) != (scorer.usage.prompt_tokens, scorer.usage.completion_tokens):
        return None
    return by_judge


def priced_tokens(tokens: Mapping[str, Usage] | None, prices: Mapping[str, JudgePrices]) -> SideBySide | None:
    """Each judge's tokens at its own prices (None: not available, when the tokens or a judge's prices are
    unknown); 0 when the run is priced but these judges are not."""
    if tokens is None or any(judge not in prices for judge in tokens):
        return None
    return side_by_side((prices[judge], usage) for judge, usage in tokens.items()) or SideBySide()


def run_cost(info: Mapping[str, Any], summary: Summary) -> RunCost | None:
    """The side-by-side figures of a stored run, per scorer and in total; None when no judge of the run is priced."""
    prices = run_prices(info)
    if not any(p.known for p in prices.values()):
        return None
    per_scorer = {s.scorer: scorer_tokens(s) for s in summary.scorers}
    total: dict[str, Usage] | None = {}
    for tokens in per_scorer.values():
        if tokens is None or total is None:
            total = None
            continue
        for judge, usage in tokens.items():
            total[judge] = total.get(judge, Usage()) + usage
    return RunCost(scorers={scorer: priced_tokens(tokens, prices) for scorer, tokens in per_scorer.items()},
                   total=priced_tokens(total, prices))
