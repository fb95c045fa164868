"""The studio's 复核校准 section (issue 44.1, ui/studio/card_fit.py) without a browser: pick a reviewed week, see each
question item's fit with its held-out figures and the proposed version as a diff, accept it → the card's next version
is saved and shown in the editor; nothing is saved before Accept, and a second Accept of the same proposal is refused."""
from __future__ import annotations

import pytest

from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.config import JudgeConfig
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.studio.calibration_proposal import FIT_COLUMNS
from rubriceval.studio.versions import fingerprint
from rubriceval.ui.common.wording import headers
from rubriceval.ui.studio.actions import Studio
from rubriceval.ui.studio.card_fit import accept_fit, propose_fit
from tests.trust.test_fit_reviews import CARD_YAML, JUDGE, reviewed  # noqa: F401  (the fixture)


def test_review_a_week_see_the_proposal_accept_it(reviewed):  # noqa: F811
    tmp_path, folder, _, _ = reviewed
    studio = Studio(tmp_path, tmp_path / "runs.sqlite", JudgeConfig(model="stub"), folder)
    table, status, diff, proposal = propose_fit(studio, "qa", ["week1"], "zh")
    assert list(table.columns) == headers(FIT_COLUMNS, "zh")
    row = table.iloc[0].tolist()
    assert row[0] == "promise" and row[3] == "1.00 / 0.50" and row[5] == "10 / 10 / 0" and row[6].startswith("提议")
    assert "版本 1 → 2" in status and JUDGE in status and "+version: 2" in diff and proposal
    assert (folder / "qa.yaml").read_text(encoding="utf-8") == CARD_YAML         # shown, not saved

    said, text, based_on, left = accept_fit(studio, proposal, "zh", saved_by="组长")
    assert "版本 2" in said and left == "" and based_on == fingerprint(text)
    assert text == (folder / "qa.yaml").read_text(encoding="utf-8") and "method: reviews" in text
    assert load_scorecard(folder / "qa.yaml").items[0].calibration_for(JUDGE) is not None
    with pytest.raises(RubricEvalError, match="changed since"):
        accept_fit(studio, proposal, "zh")

    table, status, diff, proposal = propose_fit(studio, "qa", ["week1"], "en")  # the same reviews: nothing better
    assert proposal == "" and diff == "" and status.startswith("No cut-off proposed")
    assert table.iloc[0].tolist()[6].startswith("refused: does not beat the current cut-off")
    with pytest.raises(RubricEvalError):
        accept_fit(studio, "", "en")
    with pytest.raises(RubricEvalError):
        propose_fit(studio, "qa", [], "en")
