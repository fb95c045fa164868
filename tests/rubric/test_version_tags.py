"""Version tags of the shipped rubrics and scorecards stay what the previous release (f67a6b6) gave them unless the
file itself changed (issue 38: no behaviour change). A tag names a rubric's content; when it moves, its audits,
trust records and cached judge replies are orphaned. A field added to a model must be left out of the hash at its
default (rubric/schema.py: _LATER_ITEM_DEFAULTS, _LATER_POLICY_DEFAULTS), which this test catches."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval.rubric.loader import load_rubric
from rubriceval.scorecard.loader import load_scorecard

ROOT = Path(__file__).resolve().parents[2] if (Path(__file__).resolve().parents[2] / "rubrics").is_dir() \
    else Path(__file__).resolve().parents[2]

# Measured with the previous release's code on the same files (the ecommerce card is v3: its closing item changed
# on purpose, issue 40).
RUBRIC_TAGS = {
    "rubrics/closing.yaml": "v1@6c8e48fc3232",
    "rubrics/emotional_soothing.yaml": "v1@4cb8e4adc36e",
    "rubrics/emotional_soothing_multiturn.yaml": "v3@06177cdbf0b1",
    "rubrics/handover_timing.yaml": "v1@855c1faae655",
    "rubrics/helpfulness_en.yaml": "v1@bd2a9e633a99",
    "rubrics/identity_verification.yaml": "v1@33088da81f44",
    "rubrics/policy_compliance.yaml": "v1@f4caedd81ded",
    "rubrics/process_compliance.yaml": "v1@1d1addddaf8b",
    "rubrics/required_link.yaml": "v1@63b78b5f0de5",
    "rubrics/resolution_completeness.yaml": "v1@a8c27fdee34c",
    "benchmarks/judge/rubrics/halueval_hallucination.yaml": "v2@89424155f8c2",
    "benchmarks/judge/rubrics/robustness_en.yaml": "v1@c8981329dd8e",
    "benchmarks/judge/rubrics/robustness_zh.yaml": "v1@a9bca4671b2c",
    "benchmarks/judge/rubrics/robustness_predicates_en.yaml": "v1@66f84825f44b",
    "benchmarks/judge/rubrics/robustness_predicates_zh.yaml": "v1@5a6589621840",
    "benchmarks/judge/rubrics/summeval_consistency.yaml": "v2@6c7f2bc5d6f8",
}
CARD_TAGS = {
    # v4 (issue 39): judgement items carry examples (示例) and 未安抚情绪 applies by the judge's applies_when question
    "scorecards/ecommerce_qa_zh.yaml": "v4@efa399d851be",
    "scorecards/support_qa_en.yaml": "v1@d863d91a896b",
}


@pytest.mark.parametrize("path", sorted(RUBRIC_TAGS))
def test_rubric_version_tag_is_unchanged(path):
    assert load_rubric(ROOT / path).version_tag == RUBRIC_TAGS[path]


@pytest.mark.parametrize("path", sorted(CARD_TAGS))
def test_scorecard_version_tag_is_unchanged(path):
    assert load_scorecard(ROOT / path).version_tag == CARD_TAGS[path]


def test_every_shipped_rubric_and_card_is_pinned():
    shipped = {str(p.relative_to(ROOT)) for p in (ROOT / "rubrics").glob("*.yaml")}
    cards = {str(p.relative_to(ROOT)) for p in (ROOT / "scorecards").glob("*.yaml")}
    assert shipped <= set(RUBRIC_TAGS) and cards <= set(CARD_TAGS)
