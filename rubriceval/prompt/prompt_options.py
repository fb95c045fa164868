"""Prompt options for small judges: which few-shot examples a holistic prompt shows, and in what order the five
level descriptions are listed.

* `few_shot: per_level` — one example per score level (the first of each level in `examples`, lowest level first),
  so the judge sees the whole scale once instead of whatever levels happen to be written down; `none` — zero-shot.
* `shuffle_levels: true` — the level descriptions in a seeded order per rubric and sample (the same prompt every
  time for one sample, so the judge cache and reruns are stable), to counter a small judge's pull towards the
  first or last level listed.
"""
from __future__ import annotations

import hashlib
import random

from rubriceval.rubric.schema import Example, Rubric


def shown_examples(rubric: Rubric) -> list[Example]:
    if rubric.few_shot == "none":
        return []
    if rubric.few_shot == "per_level":
        first: dict[int, Example] = {}
        for example in rubric.examples:
            first.setdefault(example.score, example)
        return [first[level] for level in sorted(first)]
    return list(rubric.examples)


def level_order(rubric: Rubric, sample_id: str, levels: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The (level, description) pairs in the order the prompt lists them."""
    if not rubric.shuffle_levels:
        return levels
    seed = int(hashlib.sha256(f"{rubric.id}\x00{sample_id}".encode()).hexdigest()[:16], 16)
    shuffled = list(levels)
    random.Random(seed).shuffle(shuffled)
    return shuffled
