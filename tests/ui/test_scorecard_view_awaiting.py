"""The review pages' scorecard view (ui/common/scorecard_view.py, audit and team apps) shows a verdict awaiting review
as such (issues 39, 44): the total as "awaiting review (80–100)", never "unscored"; the waiting items listed open,
undecided or "hit (pending review)", not folded among the other items; and a reviewer may decide an undecided item
clear."""
from __future__ import annotations

from rubriceval.i18n import t
from rubriceval.ui.common.scorecard_view import decision_choices, verdict_html, verdicts_frame
from tests.audit.test_one_official_total import chat
from tests.report.test_awaiting_review_report import verdict


def test_a_waiting_verdict_reads_awaiting_review_with_its_items_listed_open():
    sample = chat("u1", "agent_li", "16", "在吗", "在的。")
    page = verdict_html(verdict("r", "u1"), sample, [], "en", names={"promise": "承诺超出政策"})
    assert "<b class='scr-total'>awaiting review (80–100)</b>" in page
    waiting = page.split("class='scr-awaiting'>", 1)[1].split("</ul>", 1)[0]
    assert "承诺超出政策" in waiting and t("scr_status_undecided", "en") in waiting
    pending = verdict_html(verdict("r", "p1"), sample, [], "zh")
    assert "命中（待确认）" in pending.split("class='scr-awaiting'>", 1)[1]
    assert "class='scr-hits'" not in pending                     # the pending hit is no deduction yet
    frame = verdicts_frame([verdict("r", "u1"), verdict("r", "d2")], [], "en")
    assert list(frame[t("scr_total", "en")]) == ["awaiting review (80–100)", "75/100"]
    assert "clear" in [value for _, value in decision_choices("zh")]
