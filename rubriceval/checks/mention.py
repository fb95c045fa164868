"""must_mention / must_not_mention: required and forbidden phrases. Evidence quotes the words the answer used (the
synonym found), and names a missing phrase with its synonyms."""
from __future__ import annotations

from rubriceval.checks.base import field_text, find_any, quoted, span_at, synonym_group, worded
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import MustMention, MustNotMention
from rubriceval.scoring.verdict import Evidence


def _hits(text: str, phrases: list[str], case_sensitive: bool) -> list[tuple[str, tuple[int, str] | None]]:
    return [(phrase, find_any(text, phrase, case_sensitive)) for phrase in phrases]


def must_mention(item: MustMention, sample: Sample) -> Evidence:
    text = field_text(sample, item.field)
    hits = _hits(text, item.phrases, item.case_sensitive)
    found = sorted((hit, phrase) for phrase, hit in hits if hit)
    missing = [phrase for phrase, hit in hits if not hit]
    passed = not missing if item.mode == "all" else bool(found)
    said = [quoted(span_at(text, pos, len(alt))) for (pos, alt), _ in found]
    total = len(item.phrases)
    if item.mode == "all":
        wording = (worded(sample, "ev_mention_all_ok", total=total, found=said) if passed else
                   worded(sample, "ev_mention_all_missing", n_found=len(found), total=total,
                          missing=[synonym_group(p) for p in missing]))
    else:
        wording = (worded(sample, "ev_mention_any_ok", total=total, found=said) if passed else
                   worded(sample, "ev_mention_any_missing", missing=[synonym_group(p) for p in missing]))
    first = found[0][0] if found else None
    return Evidence(item=item.id, passed=passed, **wording,
                    span=span_at(text, first[0], len(first[1])) if first else None,
                    start=first[0] if first else None,
                    missing=missing if not passed or item.mode == "all" else [])


def must_not_mention(item: MustNotMention, sample: Sample) -> Evidence:
    text = field_text(sample, item.field)
    found = sorted(hit for _, hit in _hits(text, item.phrases, item.case_sensitive) if hit)
    if not found:
        return Evidence(item=item.id, passed=True, **worded(sample, "ev_forbidden_none"))
    pos, alt = found[0]
    return Evidence(item=item.id, passed=False, span=span_at(text, pos, len(alt)), start=pos,
                    **worded(sample, "ev_forbidden_found", found=[quoted(span_at(text, p, len(a))) for p, a in found]))
