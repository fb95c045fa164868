"""What judge tokens cost online and through the provider's Batch API, side by side (issue 19: "reports and dry-run
show online vs batch cost side by side"): the one computation the dry run (`planning.py`), the end-of-run line of
`rubriceval run` and the three reports (`report/cost.py`) all use.

Each judge's tokens are priced at that judge's own prices (`JudgeConfig.prices()` / `batch_prices()`, from the price
tables in `judge/config.py` or the config's explicit prices), so a panel of judges with different models adds up
each judge's share at its own price. When no judge has a known online price (the embedded judge, unpriced models)
there is nothing to put side by side: `None`.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from pydantic import BaseModel

from rubriceval.judge.config import JudgeConfig


class Tokens(Protocol):
    """Anything with token counts: a stored `Usage`, a dry run's `JudgeTokens`."""

    prompt_tokens: int
    completion_tokens: int


class SideBySide(BaseModel):
    """Tokens priced two ways, in USD."""

    online_usd: float = 0.0
    batch_usd: float = 0.0


class JudgePrices(BaseModel):
    """One judge's USD per 1M tokens (input, output), online and through the Batch API."""

    online: tuple[float, float]
    batch: tuple[float, float]

    @classmethod
    def of(cls, config: JudgeConfig) -> JudgePrices:
        return cls(online=config.prices(), batch=config.batch_prices())

    @property
    def known(self) -> bool:
        """An online price is known (unknown models cost 0, and then there is nothing to compare)."""
        return bool(self.online[0] or self.online[1])


def usd(prompt_tokens: int, completion_tokens: int, prices: tuple[float, float]) -> float:
    """Tokens at (input, output) USD per 1M tokens: the one formula — a call's cost online (judge/client.py), a
    batch reply's (batch/collect.py), the side-by-side figures below."""
    return (prompt_tokens * prices[0] + completion_tokens * prices[1]) / 1e6


def _usd(tokens: Tokens, prices: tuple[float, float]) -> float:
    return usd(tokens.prompt_tokens, tokens.completion_tokens, prices)


def side_by_side(tokens_per_judge: Iterable[tuple[JudgePrices, Tokens]]) -> SideBySide | None:
    """The online and Batch API cost of each judge's tokens at that judge's prices, summed; None when no judge has
    a known online price."""
    total, priced = SideBySide(), False
    for prices, tokens in tokens_per_judge:
        priced = priced or prices.known
        total.online_usd += _usd(tokens, prices.online)
        total.batch_usd += _usd(tokens, prices.batch)
    return total if priced else None
