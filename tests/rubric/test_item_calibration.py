"""ItemCalibration / ItemExample (rubriceval/rubric/calibration.py): the per-item, per-judge decision rule of a
judgement item, and the fields on scorecard items, applies_when and checklist questions."""
import pytest
from pydantic import ValidationError

from rubriceval.rubric.calibration import ItemCalibration, ItemExample, calibration_for
from rubriceval.rubric.items import ChecklistQuestion
from rubriceval.scorecard.schema import ScorecardItem


def test_decide_with_band_and_cutoff():
    cal = ItemCalibration(judge="qwen", cutoff=0.3, undecided=(0.2, 0.4), method="examples", n=4)
    assert cal.decide(0.1) is False
    assert cal.decide(0.25) is None and cal.decide(0.4) is None
    assert cal.decide(0.41) is True
    assert not cal.undecidable
    assert ItemCalibration(judge="q", cutoff=0.5, undecided=(0, 1), method="label_free", n=0).undecidable


def test_bad_band_refused():
    with pytest.raises(ValidationError, match="undecided"):
        ItemCalibration(judge="q", cutoff=0.5, undecided=(0.6, 0.2), method="reviews", n=3)


def test_only_this_judges_calibration():
    cals = [ItemCalibration(judge="a", cutoff=0.2, method="examples", n=2),
            ItemCalibration(judge="b", cutoff=0.7, method="reviews", n=30)]
    assert calibration_for(cals, "b").cutoff == 0.7
    assert calibration_for(cals, "c") is None and calibration_for(cals, None) is None


def test_example_short_forms():
    assert ItemExample.model_validate({True: "给您50元补偿"}).answer == "yes"      # YAML's unquoted yes
    assert ItemExample.model_validate({"no": "物流显示明天派送"}).text == "物流显示明天派送"
    assert ItemExample.model_validate({"text": "x", "answer": False}).answer == "no"


def test_empty_fields_keep_the_dump_and_used_ones_show():
    q = ChecklistQuestion(id="q1", ask="是否承诺？")
    assert "examples" not in q.model_dump() and "calibration" not in q.model_dump()
    q2 = ChecklistQuestion(id="q1", ask="是否承诺？", examples=[{"yes": "补偿您50元"}])
    assert q2.model_dump()["examples"][0]["answer"] == "yes"


def test_examples_belong_to_question_items():
    with pytest.raises(ValidationError, match="belong to question items"):
        ScorecardItem(id="g", dimension="d", points=-3, check={"type": "max_count", "phrases": ["您好"], "min": 1,
                                                                "max": 9}, examples=[{"yes": "您好"}])
    with pytest.raises(ValidationError, match="applies_when's question"):
        ScorecardItem(id="s", dimension="d", points=-3, question="是否安抚？",
                      applies_when={"pattern": "投诉", "examples": [{"yes": "投诉你们"}]})
