"""must_mention / must_not_mention: required and forbidden phrases."""
from __future__ import annotations

from rubriceval.checks.base import field_text, find_any, quote
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import MustMention, MustNotMention
from rubriceval.verdict import Evidence


def must_mention(item: MustMention, sample: Sample) -> Evidence:
    text = field_text(sample, item.field)
    found, missing = [], []
    for phrase in item.phrases:
        hit = find_any(text, phrase, item.case_sensitive)
        (found if hit else missing).append((phrase, hit))
    passed = not missing if item.mode == "all" else bool(found)
    first = min((h for _, h in found), default=None)
    return Evidence(
        item=item.id, passed=passed,
        detail=(f"mentions {len(found)}/{len(item.phrases)} required phrase(s) ({item.mode})"
                + (f"; missing: {', '.join(p for p, _ in missing)}" if missing else "")),
        span=quote(text, first[0], len(first[1])) if first else None,
        start=first[0] if first else None,
        missing=[p for p, _ in missing] if not passed or item.mode == "all" else [],
    )


def must_not_mention(item: MustNotMention, sample: Sample) -> Evidence:
    text = field_text(sample, item.field)
    hits = [(phrase, find_any(text, phrase, item.case_sensitive)) for phrase in item.phrases]
    hits = [(p, h) for p, h in hits if h]
    if not hits:
        return Evidence(item=item.id, passed=True, detail="no forbidden phrase")
    pos, alt = min(h for _, h in hits)
    return Evidence(item=item.id, passed=False, span=quote(text, pos, len(alt)), start=pos,
                    detail=f"forbidden phrase(s) present: {', '.join(p for p, _ in hits)}")
