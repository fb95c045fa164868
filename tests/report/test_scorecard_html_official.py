"""The HTML report's scorecard conversation view marks a human decision as the other report parts do (issue 27): a
"human-decided" badge naming the source, who and the judge's own total — for an accepted appeal (source appeal) and
for a reviewer's item decision (source review), in English and Chinese; a conversation nobody decided has none,
and --machine-only shows no badge. SQLite and PostgreSQL."""
from __future__ import annotations

import re

from rubriceval.report.scorecards import ScorecardReport
from tests.report.test_official_segments_trend import card_runs  # noqa: F401  (the fixture: an appeal and a review)


def _summaries(html: str) -> dict[str, str]:
    """Conversation id → its <summary> line in the deductions view."""
    return {m.group(1): m.group(0) for m in re.finditer(r"<summary>([\w-]+) · .*?</summary>", html)}


def test_the_scorecard_view_badges_human_decided_conversations_with_source_who_and_machine_total(card_runs):
    store, baseline, run_id = card_runs
    shown = _summaries(ScorecardReport(store, run_id, "en").html())
    # refund-slow: the appeal took its −10 away (85 → 95); still listed, with the appeal, its reviewer, the judge's 85
    refund = shown["refund-slow"]
    assert "Total 95" in refund
    assert "human-decided · accepted appeal · qa_zhang · machine total 85" in refund
    # secret: a reviewer rejected the fatal password hit (0 → 100): no deduction is left, the conversation is
    # listed because a person decided it
    secret = shown["secret"]
    assert "Total 100" in secret and "reviewers&#39; item decisions · qa_zhao · machine total 0" in secret
    assert "fatal" not in secret
    assert set(shown) == {"refund-slow", "secret"}           # "good" has neither a deduction nor a decision


def test_the_badge_is_said_in_chinese_on_a_chinese_report(card_runs):
    store, baseline, run_id = card_runs
    shown = _summaries(ScorecardReport(store, run_id, "zh").html())
    assert "人工裁定 · 申诉通过 · qa_zhang · 机器总分 85" in shown["refund-slow"]
    assert "人工裁定 · 质检复核 · qa_zhao · 机器总分 0" in shown["secret"]


def test_no_badge_without_a_decision_nor_in_the_machine_only_view(card_runs):
    store, baseline, run_id = card_runs
    assert "human-decided" not in ScorecardReport(store, baseline, "en").html()
    judge = ScorecardReport(store, run_id, "en", machine_only=True).html()
    assert "human-decided" not in judge
    shown = _summaries(judge)
    assert "Total 85" in shown["refund-slow"] and "Total 0" in shown["secret"]
