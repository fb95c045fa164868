"""steps_in_order: e.g. soothe first, then status, then ETA — each step found after the previous one."""
from __future__ import annotations

from rubriceval.checks.base import field_text, find_any
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import StepsInOrder
from rubriceval.verdict import Evidence


def steps_in_order(item: StepsInOrder, sample: Sample) -> Evidence:
    text = field_text(sample, item.field)
    positions = [(step, find_any(text, step)) for step in item.steps]
    missing = [step for step, hit in positions if hit is None]
    present = [(step, hit[0]) for step, hit in positions if hit is not None]
    out_of_order = [(a[0], b[0]) for a, b in zip(present, present[1:]) if b[1] < a[1]]
    passed = not out_of_order and (not missing or not item.require_all)
    parts = []
    if out_of_order:
        parts.append("; ".join(f"'{b}' comes before '{a}'" for a, b in out_of_order))
    if missing:
        parts.append(f"missing step(s): {', '.join(missing)}")
    found = " → ".join(f"{s}@{p}" for s, p in present)
    return Evidence(item=item.id, passed=passed, detail=("; ".join(parts) or "all steps in order") +
                    (f" (found: {found})" if found else ""), missing=missing)
