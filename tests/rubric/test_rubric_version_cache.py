"""Rubric.version_tag is cached per rubric object (a run asks for it with every verdict) and still follows edits:
an assignment on the rubric or any nested item, a changed manipulation policy, a copy with changes."""
from __future__ import annotations

import pickle

from rubriceval.rubric import schema
from rubriceval.rubric.schema import Rubric

LEVELS = {1: "很差", 2: "较差", 3: "一般", 4: "较好", 5: "很好"}


def _rubric() -> Rubric:
    return Rubric.model_validate({
        "id": "greets", "name": "问候", "criterion": "先问候", "score_descriptions": LEVELS,
        "items": [{"id": "hello", "type": "must_mention", "phrases": ["您好"]},
                  {"id": "short", "type": "max_length", "max_chars": 300}],
        "combine": {"rule": "weighted_mean"}})


def _fresh_tag(rubric: Rubric) -> str:
    """The tag computed from scratch, from the rubric's data (a new object: no cache)."""
    return Rubric.model_validate(rubric.model_dump()).version_tag


def test_cached_tag_is_computed_once(monkeypatch):
    rubric = _rubric()
    calls = []
    real = schema._content_hash
    monkeypatch.setattr(schema, "_content_hash", lambda r: calls.append(1) or real(r))
    tags = {rubric.version_tag for _ in range(50)}
    assert len(tags) == 1 and len(calls) == 1


def test_assignment_on_the_rubric_changes_the_tag():
    rubric = _rubric()
    before = rubric.version_tag
    rubric.criterion = "先问候，再致歉"
    assert rubric.version_tag != before
    assert rubric.version_tag == _fresh_tag(rubric)


def test_assignment_on_a_nested_item_changes_the_tag():
    rubric = _rubric()
    before = rubric.version_tag
    rubric.items[1].max_chars = 200
    assert rubric.version_tag != before
    assert rubric.version_tag == _fresh_tag(rubric)
    rubric.combine.cap_score = 3
    assert rubric.version_tag == _fresh_tag(rubric)


def test_manipulation_policy_edits_change_the_tag():
    rubric = _rubric()
    before = rubric.version_tag
    rubric.manipulation.action = "audit"              # not a rubric model: read into the cache key
    audit = rubric.version_tag
    assert audit != before and audit == _fresh_tag(rubric)
    rubric.manipulation.fields.append("contexts")     # an in-place list edit of the policy is seen too
    assert rubric.version_tag not in (before, audit)
    assert rubric.version_tag == _fresh_tag(rubric)


def test_copies_compute_their_own_tag():
    rubric = _rubric()
    before = rubric.version_tag
    changed = rubric.model_copy(update={"threshold": 3})
    assert changed.version_tag != before and changed.version_tag == _fresh_tag(changed)
    assert rubric.version_tag == before
    deep = rubric.model_copy(deep=True)
    deep.items = deep.items[:1]
    assert deep.version_tag == _fresh_tag(deep) != before
    restored = pickle.loads(pickle.dumps(rubric))
    assert restored.version_tag == before


def test_tag_equals_the_uncached_hash_of_the_shipped_form():
    """The cache changes nothing about the tag itself: the same as hashing the dumped fields."""
    rubric = _rubric()
    assert rubric.version_tag == f"v1@{schema._content_hash(rubric)}"
    assert rubric.content_hash() == schema._content_hash(rubric)


def test_item_classes_importable_from_the_schema_module():
    from rubriceval.rubric import items
    for name in ("JudgeItem", "ChecklistItem", "MustMention", "MaxLength", "Item", "CheckItem", "LEVELS",
                 "CONVERSATION_CHECKS", "PER_TURN_CHECKS", "SampleField", "TurnRole"):
        assert getattr(schema, name) is getattr(items, name)
