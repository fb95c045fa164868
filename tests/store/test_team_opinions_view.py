"""The lead's "opinions side by side" table (ui/team_views.opinions_html): each score marked pass or below the
rubric's threshold — so a pass/fail split is visible in the table — and the judge's verdict as the last row."""
from __future__ import annotations

import re

from rubriceval import Verdict
from rubriceval.store.team_models import Opinion
from rubriceval.ui.team.views import opinions_html

SPLIT = [Opinion(expert="张专家", state="scored", score=4, note="有道歉", blind=True),
         Opinion(expert="李专家", state="scored", score=3, tags=["未先安抚"], note="道歉太晚", blind=True),
         Opinion(expert="王专家", state="unsure", score=None, note="不确定<政策>", blind=True)]


def rows(html: str) -> list[str]:
    return [re.sub(r"(\s*<[^>]+>\s*)+", "|", row) for row in re.findall(r"<tr class=.*?</tr>", html)]


def test_each_score_says_pass_or_below_the_threshold_and_the_judge_is_the_last_row() -> None:
    judge = Verdict(sample_id="s1", scorer="soothing", scorer_version="soothing@1", kind="rubric", score=1.0,
                    passed=False, feedback="先讲物流才道歉")
    zhang, li, wang, last = rows(opinions_html(SPLIT, "en", threshold=4, judge=judge))
    assert "|4|✓ pass|" in zhang and "|3|✗ below threshold|" in li
    assert "pass" not in wang and "below" not in wang and "不确定&lt;政策&gt;" in wang    # no score, note escaped
    assert last.startswith("|Judge|") and "|1|✗ below threshold|" in last and "先讲物流才道歉" in last
    zh = opinions_html(SPLIT, "zh", threshold=4, judge=judge)
    assert "✓ 通过" in zh and "✗ 低于通过线" in zh and "未先安抚" in zh


def test_without_a_threshold_or_judge_only_the_experts_are_shown() -> None:
    html = opinions_html(SPLIT, "en")
    assert len(rows(html)) == 3 and "pass" not in html and "Judge" not in html


def test_an_unscored_judge_shows_its_reason_not_a_score() -> None:
    judge = Verdict(sample_id="s1", scorer="soothing", scorer_version="soothing@1", kind="rubric",
                    unscored_kind="parse_error", unscored_reason="no score in the reply")
    last = rows(opinions_html(SPLIT, "en", threshold=4, judge=judge))[-1]
    assert "|—|" in last and "no score in the reply" in last and "pass" not in last


def test_the_lead_list_and_refusals_speak_the_page_language():
    import pytest

    from rubriceval.store.team_models import Opinion, TeamError, TeamSaveResult
    from rubriceval.ui.team.actions import _opinions_text, saved_version

    opinions = [Opinion(expert="李专家", state="scored", score=2), Opinion(expert="张专家", state="unsure", score=None)]
    assert _opinions_text(opinions, "zh") == "李专家=2, 张专家=不确定"
    assert _opinions_text(opinions, "en") == "李专家=2, 张专家=unsure"
    conflict = TeamSaveResult(ok=False, version=3, message="another lead settled this item since you opened it")
    with pytest.raises(TeamError, match="已被他人"):
        saved_version(conflict, "zh")
    assert saved_version(TeamSaveResult(ok=True, version=4), "zh") == 4
