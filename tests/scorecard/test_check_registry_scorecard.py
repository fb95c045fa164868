"""The scorecard predicate-kind registry (issue 38.3, rubriceval/scorecard/predicate_kinds.py): the schema, the
rule-sheet import, scoring, trust bars, the studio's predicate choice and wording, and docs/scorecards.md agree with
it."""
from __future__ import annotations

import asyncio
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.i18n import LANGS, MESSAGES
from rubriceval.scorecard import sheet
from rubriceval.scorecard.predicate_kinds import PREDICATE_KINDS, PREDICATE_NAMES, PredicateName
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.scorecard.score import score_scorecard
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply

ROOT = Path(__file__).resolve().parents[2]


def _card(**trust) -> Scorecard:
    return Scorecard.model_validate({"id": "q", "name": "q", "dimensions": [{"id": "d"}], **trust, "items": [
        {"id": f"i_{name}", "dimension": "d", "points": -1, **kind.example} for name, kind in PREDICATE_KINDS.items()]})


def test_the_typed_names_and_the_item_fields_are_the_registry():
    assert typing.get_args(PredicateName) == PREDICATE_NAMES
    assert set(PREDICATE_NAMES) <= set(ScorecardItem.model_fields)
    assert set(PREDICATE_NAMES) <= set(sheet.PREDICATE_KEYS)


def test_every_kind_is_scored_and_known_by_its_kind():
    card = _card()
    assert [item.kind for item in card.items] == list(PREDICATE_NAMES)
    sample = Sample.model_validate({"id": "c", "question": "", "conversation": {"id": "c", "turns": [
        {"role": "user", "content": "在吗"}, {"role": "assistant", "content": "您好"}]}})
    rubric_verdict = Verdict(sample_id="c", scorer="identity_verification", score=2.0)
    verdict = asyncio.run(score_scorecard(card, sample, ScriptedJudge(lambda request: yes_no_reply(0.9)),
                                          {"identity_verification": rubric_verdict}))
    assert [o.status for o in verdict.outcomes] == ["clear", "clear", "hit"]     # every kind reached a status


def test_the_trust_bar_applies_to_the_kinds_the_judge_decides():
    card = _card(trust={"min_precision": 0.9})
    for item in card.items:
        assert (card.trust_bar(item) is not None) == PREDICATE_KINDS[item.kind].judge_decided


def test_messages_name_every_kind():
    with pytest.raises(ValidationError) as none_given:
        Scorecard.model_validate({"id": "q", "name": "q", "dimensions": [{"id": "d"}],
                                  "items": [{"id": "i", "dimension": "d", "points": -1}]})
    assert all(f"{name}: (" in str(none_given.value) for name in PREDICATE_NAMES)
    with pytest.raises(ValueError) as bad_sheet_cell:
        sheet._predicate("{points: 3}", "", "x", "zh")
    assert all(name in str(bad_sheet_cell.value) for name in PREDICATE_NAMES)


def test_the_studio_and_the_docs_name_every_kind():
    from rubriceval.studio.card_form import Predicate

    assert set(typing.get_args(Predicate)) == set(PREDICATE_NAMES)
    assert all(MESSAGES.get(f"studio_choice_pred_{name}", {}).get(lang) for name in PREDICATE_NAMES for lang in LANGS)
    bullet = next(line for line in (ROOT / "docs" / "scorecards.md").read_text(encoding="utf-8").splitlines()
                  if line.startswith("- **Predicate**"))
    paragraph = (ROOT / "docs" / "scorecards.md").read_text(encoding="utf-8").split(bullet)[1].split("\n- **")[0]
    assert all(f"`{name}:`" in bullet + paragraph for name in PREDICATE_NAMES)
