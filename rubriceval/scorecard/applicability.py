"""Which items apply to a sample, decided without the judge: tags, intents, a pattern on the turns, metadata.
(`applies_when.question` is asked afterwards, only for the items these leave in.)"""
from __future__ import annotations

import re
from collections.abc import Sequence

from rubriceval.data.sample import Sample
from rubriceval.scorecard.schema import AppliesWhen, Scorecard


def card_applies(card: Scorecard, sample: Sample) -> bool:
    """A conversation scorecard judges conversations; a single-turn one single-turn samples."""
    return (sample.conversation is not None) == (card.scope == "conversation")


def _texts(sample: Sample, roles: Sequence[str]) -> list[str]:
    if sample.conversation is not None:
        return [t.content for _, t in sample.conversation.numbered() if t.role in roles]
    return [text for role, text in (("user", sample.question), ("assistant", sample.answer)) if role in roles]


def _metadata(sample: Sample) -> dict:
    found = dict(sample.metadata)
    if sample.conversation is not None:
        found.update(sample.conversation.metadata)
    return found


def _has_contexts(sample: Sample) -> bool:
    if sample.conversation is not None:
        return any(t.contexts for t in sample.conversation.turns)
    return bool(sample.contexts)


def why_not_applicable(when: AppliesWhen | None, sample: Sample, knowledge: bool = False) -> str | None:
    """None when every deterministic condition holds; else the first that does not, in words. `knowledge`: the card
    names a knowledge file, which is read as the context a chat export lacks (so `has_contexts` holds)."""
    if when is None:
        return None
    if when.tags and not set(when.tags) & set(sample.tags):
        return f"applies_when.tags {when.tags} (the sample's tags: {sample.tags or 'none'})"
    if when.intents and sample.intent not in when.intents:
        return f"applies_when.intents {when.intents} (the sample's intent: {sample.intent or 'none'})"
    if when.pattern and not any(re.search(when.pattern, text) for text in _texts(sample, when.roles)):
        return f"applies_when.pattern /{when.pattern}/ is found in no {'/'.join(when.roles)} turn"
    if when.has_contexts is not None and (knowledge or _has_contexts(sample)) != when.has_contexts:
        has = "the card's knowledge file" if knowledge else "some" if not when.has_contexts else "none"
        return f"applies_when.has_contexts is {str(when.has_contexts).lower()} and the sample has {has}"
    metadata = _metadata(sample)
    for key, wanted in when.metadata.items():
        value = metadata.get(key)
        ok = value in wanted if isinstance(wanted, list) else value == wanted
        if not ok:
            return f"applies_when.metadata.{key} is {wanted!r} (the sample's: {value!r})"
    return None
