"""Deterministic checks, one module per kind. `run_check(item, sample)` dispatches on the item's type."""
from __future__ import annotations

from typing import Callable

from rubriceval.checks.length import max_length
from rubriceval.checks.links import required_link
from rubriceval.checks.mention import must_mention, must_not_mention
from rubriceval.checks.order import steps_in_order
from rubriceval.checks.regex import regex
from rubriceval.data.sample import Sample
from rubriceval.verdict import Evidence

CHECKS: dict[str, Callable] = {
    "must_mention": must_mention,
    "must_not_mention": must_not_mention,
    "regex": regex,
    "required_link": required_link,
    "steps_in_order": steps_in_order,
    "max_length": max_length,
}


def run_check(item, sample: Sample) -> Evidence:
    return CHECKS[item.type](item, sample)
