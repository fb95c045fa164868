"""steps_in_order: e.g. soothe first, then status, then ETA — each step found after the previous one."""
from __future__ import annotations

from rubriceval.checks.base import field_text, find_any, quoted, reworded, span_at, synonym_group
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.schema import StepsInOrder


def steps_in_order(item: StepsInOrder, sample: Sample) -> Evidence:
    text = field_text(sample, item.field)
    positions = [(step, find_any(text, step)) for step in item.steps]
    missing = [step for step, hit in positions if hit is None]
    # Each step found, as the words the answer used, at its position.
    present = [(hit[0], quoted(span_at(text, hit[0], len(hit[1])))) for _, hit in positions if hit is not None]
    out_of_order = [(a[1], b[1]) for a, b in zip(present, present[1:]) if b[0] < a[0]]
    passed = not out_of_order and (not missing or not item.require_all)
    parts = [msg("ev_steps_swapped", later=b, earlier=a) for a, b in out_of_order]
    if missing:
        parts.append(msg("ev_steps_missing", missing=[synonym_group(step) for step in missing]))
    if not parts:
        parts.append(msg("ev_steps_ok"))
    if present:
        parts.append(msg("ev_steps_order", order=" → ".join(said for _, said in sorted(present))))
    return Evidence(item=item.id, passed=passed, **reworded(sample, msg("ev_clauses", parts=parts)), missing=missing)
