"""What a run's judge tokens cost online and through the provider's Batch API, side by side: the one computation the
Markdown summary, the HTML report and the Excel workbook all show (issue 19: "reports and dry-run show online vs
batch cost side by side").

The figures price the stored token counts at the run's judge prices (`JudgeConfig.prices()` and `batch_prices()`),
whichever way the run was judged; the cost the run recorded (`Usage.cost_usd`) stays beside them. When no online
price is known (the embedded judge, an unpriced model), there is nothing to put side by side: `None`.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from rubriceval.verdict import Usage


class PricedCost(BaseModel):
    """Tokens priced two ways, in USD."""

    online_usd: float
    batch_usd: float


class JudgePrices(BaseModel):
    """USD per 1M tokens (input, output), online and through the Batch API."""

    online: tuple[float, float]
    batch: tuple[float, float]

    def price(self, usage: Usage) -> PricedCost:
        return PricedCost(online_usd=_priced(usage, self.online), batch_usd=_priced(usage, self.batch))


def _priced(usage: Usage, prices: tuple[float, float]) -> float:
    return (usage.prompt_tokens * prices[0] + usage.completion_tokens * prices[1]) / 1e6


def judge_prices(judge: Mapping[str, Any] | None) -> JudgePrices | None:
    """The prices of a run's stored judge settings (`RunConfig.judge`), or None when no online price is known."""
    if not judge:
        return None
    from rubriceval.judge.config import JudgeConfig

    try:
        config = JudgeConfig.model_validate({k: v for k, v in judge.items() if k in JudgeConfig.model_fields})
    except ValueError:           # settings written by another version: no price to vouch for
        return None
    online = config.prices()
    if not (online[0] or online[1]):
        return None
    return JudgePrices(online=online, batch=config.batch_prices())


def run_prices(info: Mapping[str, Any]) -> JudgePrices | None:
    """The prices of a stored run (`RunInfo` dumped as JSON, as RunData.info holds it)."""
    return judge_prices((info.get("config") or {}).get("judge"))
