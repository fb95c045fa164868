"""must_mention / must_not_mention: required and forbidden phrases. Evidence quotes the words the answer used (the
synonym found), and names a missing phrase with its synonyms.

`match` (rubriceval/rubric/predicate.py) adds what the answer must (not) show besides the phrases: an entity, a
regex, or — per turn (`turns: assistant`), where each_turn passes the turn as `at` — a yes/no question about it."""
from __future__ import annotations

from rubriceval.checks.base import field_text, find_any, quoted, reworded, span_at, synonym_group, worded
from rubriceval.checks.predicates import TurnMatch, question_match, said, settled_no, text_match
from rubriceval.core.verdict import Evidence
from rubriceval.data.conversation import Conversation
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.schema import MustMention, MustNotMention


def _hits(text: str, phrases: list[str], case_sensitive: bool) -> list[tuple[str, tuple[int, str] | None]]:
    return [(phrase, find_any(text, phrase, case_sensitive)) for phrase in phrases]


def shown(item, text: str, at: tuple[Conversation, int] | None) -> TurnMatch | None:
    """The item's `match` in `text`, else (per turn) the judge's yes to its question about that turn."""
    hit = text_match(item.match, text, at[1] if at else 0, item.case_sensitive)
    if hit is None and item.match.ask and at is not None and not settled_no(item.match, text, item.case_sensitive):
        yes, answered = question_match(item.match, at[1])
        hit = answered if yes else None
    return hit


def _with_match(item, evidence: Evidence, hit: TurnMatch | None, sample: Sample, *, required: bool) -> Evidence:
    """The phrase evidence combined with the match: required (must_mention) or forbidden (must_not_mention)."""
    what = item.match.describe()
    part = msg("ev_match_shown", what=what, said=said(hit)) if hit else msg("ev_match_missing", what=what)
    passed = (bool(hit) if required else not hit) and (evidence.passed or not item.phrases)
    message = msg("ev_match_and", check=evidence.message, match=part) if item.phrases else part
    update: dict = {"passed": passed, **reworded(sample, message)}
    if hit is not None and (required is False or evidence.span is None):
        update.update(span=hit.span, start=hit.start)
    if hit is not None and hit.question:
        update.update(question=hit.question, p_yes=hit.p_yes)
    if required and not hit:
        update["missing"] = [*evidence.missing, what]
    return evidence.model_copy(update=update)


def must_mention(item: MustMention, sample: Sample, at: tuple[Conversation, int] | None = None) -> Evidence:
    evidence = _must_mention(item, sample) if item.phrases else Evidence(item=item.id, passed=True)
    if item.match is None:
        return evidence
    return _with_match(item, evidence, shown(item, field_text(sample, item.field), at), sample, required=True)


def must_not_mention(item: MustNotMention, sample: Sample, at: tuple[Conversation, int] | None = None) -> Evidence:
    evidence = _must_not_mention(item, sample) if item.phrases else Evidence(item=item.id, passed=True)
    if item.match is None or evidence.passed is False:
        return evidence
    return _with_match(item, evidence, shown(item, field_text(sample, item.field), at), sample, required=False)


def _must_mention(item: MustMention, sample: Sample) -> Evidence:
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


def _must_not_mention(item: MustNotMention, sample: Sample) -> Evidence:
    text = field_text(sample, item.field)
    found = sorted(hit for _, hit in _hits(text, item.phrases, item.case_sensitive) if hit)
    if not found:
        return Evidence(item=item.id, passed=True, **worded(sample, "ev_forbidden_none"))
    pos, alt = found[0]
    return Evidence(item=item.id, passed=False, span=span_at(text, pos, len(alt)), start=pos,
                    **worded(sample, "ev_forbidden_found", found=[quoted(span_at(text, p, len(a))) for p, a in found]))
