"""`auto_accept: {agreement, confidence}` (issue 44) on a scorecard, one of its items and a rubric: read from YAML,
refused with file, line and field like every schema error, and left out of the version tag (it changes which
decisions wait for a person, never a decision: reviews keep counting for the version)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric.loader import load_rubric
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.trust.selective import item_target

ROOT = Path(__file__).resolve().parents[2]
CARD = """id: qa
name: 质检
auto_accept: {agreement: 0.9, confidence: 0.95}
dimensions: [{id: d}]
items:
  - id: resolve
    dimension: d
    points: -5
    question: 客服是否解决了问题？
    auto_accept: {agreement: 0.8}
  - id: closing
    dimension: d
    points: -2
    check: {type: final_turn, phrases: ["还有什么"]}
"""


def test_a_card_and_its_item_state_targets(tmp_path):
    path = tmp_path / "qa.yaml"
    path.write_text(CARD, encoding="utf-8")
    card = load_scorecard(path)
    resolve, closing = card.items
    assert (item_target(card, resolve).agreement, item_target(card, resolve).confidence) == (0.8, 0.95)
    assert item_target(card, closing) == card.auto_accept and card.auto_accept.agreement == 0.9
    plain = tmp_path / "plain.yaml"
    plain.write_text(CARD.replace("auto_accept: {agreement: 0.9, confidence: 0.95}\n", "")
                     .replace("    auto_accept: {agreement: 0.8}\n", ""), encoding="utf-8")
    assert load_scorecard(plain).version_tag == card.version_tag        # the target is not hashed


@pytest.mark.parametrize("old,new,line,field", [
    ("auto_accept: {agreement: 0.9, confidence: 0.95}", "auto_accept: {agreement: 1.2}", 3, "auto_accept.agreement"),
    ("auto_accept: {agreement: 0.9, confidence: 0.95}", "auto_accept: {agreement: 0.9, confidence: 1}", 3,
     "auto_accept.confidence"),
    ("auto_accept: {agreement: 0.9, confidence: 0.95}", "auto_accept: {agreement: 0.9, level: 0.95}", 3,
     "auto_accept.level"),
    ("    auto_accept: {agreement: 0.8}", "    auto_accept: {agreement: 0.4}", 10, "auto_accept.agreement"),
])
def test_a_wrong_target_names_file_line_and_field(tmp_path, old, new, line, field):
    path = tmp_path / "qa.yaml"
    path.write_text(CARD.replace(old, new), encoding="utf-8")
    with pytest.raises(RubricEvalError) as caught:
        load_scorecard(path)
    said = str(caught.value)
    assert f"{path}:{line}" in said and field in said


def test_a_rubric_states_a_target_outside_its_version(tmp_path):
    source = (ROOT / "rubrics" / "closing.yaml").read_text(encoding="utf-8")
    path = tmp_path / "closing.yaml"
    path.write_text(source + "\nauto_accept: {agreement: 0.85, confidence: 0.9}\n", encoding="utf-8")
    rubric, shipped = load_rubric(path), load_rubric(ROOT / "rubrics" / "closing.yaml")
    assert (rubric.auto_accept.agreement, rubric.auto_accept.confidence) == (0.85, 0.9)
    assert rubric.version_tag == shipped.version_tag
    path.write_text(source + "\nauto_accept: {agreement: 2}\n", encoding="utf-8")
    with pytest.raises(RubricEvalError) as caught:
        load_rubric(path)
    line = len((source + "\n").splitlines()) + 1              # the line auto_accept: was written on
    assert f"{path}:{line} [auto_accept.agreement]" in str(caught.value)
