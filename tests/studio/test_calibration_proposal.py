"""A reviewed fit proposed as the card's next version (issue 44.1, studio/calibration_proposal.py): the calibration
for the fitted judge written on the file's own lines with `version:` raised, an entry for another judge kept, saved
only when accepted — as the studio saves a version, refused when the file changed since the proposal."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric.calibration import ItemCalibration
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict, Totals
from rubriceval.studio.calibration_proposal import (
    accept_proposal,
    fit_rows,
    propose_calibration,
    yaml_with_calibrations,
)
from rubriceval.studio.versions import FolderShelf
from rubriceval.trust.fit_reviews import fit_card
from tests.trust.test_fit_reviews import CARD_YAML, JUDGE

ROOT = Path(__file__).parents[2] / "scorecards"


def under_confident_fit(card, judge: str = JUDGE):
    """20 reviewed decisions: promises at p(yes) 0.30–0.48, clean ones at 0.02–0.20 (0.5 misses every promise)."""
    verdicts, decided = [], {}
    for i in range(20):
        promise = i % 2 == 0
        p = 0.30 + i / 100 if promise else 0.02 + i / 100
        verdicts.append(ScorecardVerdict(sample_id=f"s{i}", scorecard=card.id, version=card.version_tag,
                                         totals=Totals(base=100),
                                         outcomes=[CardItemOutcome(item="promise", status="clear", p_yes=p)]))
        decided[(f"s{i}", "promise")] = "hit" if promise else "clear"
    return fit_card(card, judge, verdicts, decided, fitted_at="2026-12-07T07:00:00+00:00")


def test_the_shipped_card_keeps_every_other_line():
    text = (ROOT / "ecommerce_qa_zh.yaml").read_text(encoding="utf-8")
    version = load_scorecard(ROOT / "ecommerce_qa_zh.yaml").version
    fitted = ItemCalibration(judge=JUDGE, cutoff=0.31, method="reviews", n=40, undecided=(0.2, 0.25))
    new = yaml_with_calibrations(text, {"promise": fitted, "leak_other": fitted}, int(version) + 1)
    added = [line for line in new.splitlines() if line not in text.splitlines()]
    removed = [line for line in text.splitlines() if line not in new.splitlines()]
    assert len(removed) == 1 and removed[0].startswith(f"version: {version}")
    assert added[0].startswith(f"version: {int(version) + 1}")
    assert all(line.strip() in ("calibration:", "") or "{judge: small-judge" in line for line in added[1:])
    assert sum("{judge: small-judge, cutoff: 0.31, undecided: [0.2, 0.25], method: reviews, n: 40}" in a
               for a in added) == 2


def test_propose_then_accept_saves_the_next_version_and_keeps_the_old(tmp_path):
    (tmp_path / "qa.yaml").write_text(CARD_YAML, encoding="utf-8")
    card = load_scorecard(tmp_path / "qa.yaml")
    fit = under_confident_fit(card)
    proposal = propose_calibration(tmp_path, fit)
    assert proposal is not None and (proposal.from_version, proposal.version, proposal.items) == (1, 2, ["promise"])
    assert "+version: 2" in proposal.diff and "+    calibration:" in proposal.diff
    assert (tmp_path / "qa.yaml").read_text(encoding="utf-8") == CARD_YAML        # a proposal writes nothing
    rows = fit_rows(fit, "zh")
    assert rows[0][0] == "promise" and rows[0][1] == "0.5 (默认)" and rows[0][3] == "1.00 / 0.50"
    assert rows[0][6].startswith("提议")
    saved = accept_proposal(tmp_path, proposal, saved_by="组长")
    assert saved.version == 2 and FolderShelf(tmp_path).versions("qa") == [1, 2]
    new = load_scorecard(tmp_path / "qa.yaml")
    assert new.items[0].calibration_for(JUDGE).cutoff == fit.items[0].calibration.cutoff
    with pytest.raises(RubricEvalError, match="changed since this draft was opened"):
        accept_proposal(tmp_path, proposal)                                     # the same proposal twice: refused


def test_a_calibration_for_another_judge_is_kept_and_a_reworded_question_skipped(tmp_path):
    other = "  - id: promise\n    name: 越权承诺\n    dimension: d\n    points: -10\n    question: 客服是否承诺了政策以外的补偿？\n"
    text = CARD_YAML.replace(other, other + "    calibration:\n      - {judge: big-judge, cutoff: 0.6, method: "
                                            "label_free, n: 8}\n")
    (tmp_path / "qa.yaml").write_text(text, encoding="utf-8")
    card = load_scorecard(tmp_path / "qa.yaml")
    proposal = propose_calibration(tmp_path, under_confident_fit(card))
    (tmp_path / "new.yaml").write_text(proposal.text, encoding="utf-8")
    promise = load_scorecard(tmp_path / "new.yaml").items[0]
    assert [c.judge for c in promise.calibration] == ["big-judge", JUDGE]
    assert promise.calibration_for("big-judge").cutoff == 0.6
    (tmp_path / "qa.yaml").write_text(text.replace("政策以外的补偿", "政策以外的补偿或时效"), encoding="utf-8")
    assert propose_calibration(tmp_path, under_confident_fit(card)) is None     # fitted for the old wording


def test_nothing_proposed_when_no_item_beats_its_cutoff(tmp_path):
    (tmp_path / "qa.yaml").write_text(CARD_YAML, encoding="utf-8")
    card = load_scorecard(tmp_path / "qa.yaml")
    fit = under_confident_fit(card)
    refit = fit_card(card, JUDGE, [], {})
    assert fit.proposed
    assert propose_calibration(tmp_path, refit) is None and fit_rows(refit, "en")[0][6].startswith("refused: no")
