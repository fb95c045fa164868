"""Issue 40, item 3: appeals on scorecard items. An agent appeals a fatal item or a bonus the card marked N/A; the
decision changes that item and the total is recomputed by the card's arithmetic (never a 1–5 score); every list
names items as the card does (the id only as a hint); an agent sees and appeals only their own conversations."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from rubriceval.audit.appeals import Appeals
from rubriceval.audit.sessions import Member
from rubriceval.audit.team import TeamStore
from rubriceval.report.scorecard_summary import run_scorecard_summaries
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.appeal_models import AppealError
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.ui.team.actions import TeamSession
from rubriceval.ui.team.appeals_views import inbox_frame, item_choices, my_verdicts_frame
from rubriceval.ui.team.appeals_wiring import AppealHandlers
from tests.audit.test_one_official_total import chat

CARD = {
    "id": "qa", "name": "橙子质检",
    "dimensions": [{"id": "服务"}, {"id": "合规"}],
    "items": [
        {"id": "closing", "name": "未询问其他问题", "dimension": "服务", "points": -5,
         "check": {"type": "final_turn", "phrases": ["还有什么"]}},
        {"id": "apology", "name": "主动致歉", "dimension": "服务", "points": 3, "applies_when": {"tags": ["投诉"]},
         "check": {"type": "must_mention", "phrases": ["抱歉"]}},
        {"id": "leak_other", "name": "泄露他人信息", "dimension": "合规", "fatal": True,
         "check": {"type": "must_not_mention", "phrases": ["尾号"], "turns": "assistant"}},
    ],
}
SAMPLES = [chat("leak", "agent_wang", "16", "查订单", "尾号 1234 是您的订单吗？"),          # fatal (and −5): 0
           chat("plain", "agent_wang", "16", "在吗", "在。"),                              # −5, apology N/A: 95
           chat("li-1", "agent_li", "16", "在吗", "在。")]


@pytest.fixture
def run(tmp_path):
    path = tmp_path / "runs.sqlite"
    runs = RunStore(path)
    card = Scorecard.model_validate(CARD)
    run_id = runs.create_run(RunConfig(), SAMPLES, [], name="W47")
    ScorecardStore(runs).register(run_id, [card])
    ScorecardStore(runs).save(run_id, [asyncio.run(score_scorecard(card, s, None, run_id=run_id)) for s in SAMPLES])
    runs.close()
    return path, run_id


def test_a_fatal_and_an_na_bonus_appealed_change_their_items_and_the_card_recomputes(run):
    path, run_id = run
    with TeamStore(path) as team:
        appeals = Appeals(team)
        mine = {v.sample_id: v for v in appeals.agent_verdicts(run_id, "agent_wang")}
        assert set(mine) == {"leak", "plain"}                      # nobody else's conversation
        assert (mine["leak"].official_score, mine["plain"].official_score) == (0, 95)
        assert "leak_other" in mine["leak"].deductions                # a fatal may be appealed
        assert mine["plain"].deductions == ["closing", "apology"]     # a deduction, and a bonus marked N/A
        labels = [label for label, _ in item_choices(mine["plain"], "zh")]
        assert labels[1:] == ["未询问其他问题 (closing)", "主动致歉 (apology)"]
        frame = my_verdicts_frame(list(mine.values()), "zh")
        assert "橙子质检 (qa)" in set(frame.iloc[:, 1]) and "泄露他人信息 (leak_other)" in " ".join(frame.iloc[:, 4])
        fatal = appeals.submit(run_id, "leak", "qa", agent="agent_wang", role="agent", reason="是本人的订单",
                               item="leak_other")
        bonus = appeals.submit(run_id, "plain", "qa", agent="agent_wang", role="agent", reason="客户投诉，我道歉了",
                               item="apology")
        assert (fatal.official_before, fatal.proposed_score) == (0, 95)            # closing −5 stays
        assert (bonus.official_before, bonus.proposed_score) == (95, 98)
        with pytest.raises(AppealError, match="not one of your conversations"):
            appeals.submit(run_id, "li-1", "qa", agent="agent_wang", role="agent", reason="x", item="closing")
        with pytest.raises(AppealError, match="recomputed by the card"):        # 改判 is the item, never 1–5
            appeals.decide(fatal.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted", reason="属实",
                           score=3, expected_version=fatal.version)
        inbox = inbox_frame(appeals.list(), "zh", {(run_id, "qa"): appeals.item_names(run_id, "qa")})
        assert list(inbox.iloc[:, 3])[:2] == ["泄露他人信息 (leak_other)", "主动致歉 (apology)"]
        # the lead's 改判 control: no number for an item appeal, points for a whole card total, 1–5 nowhere
        handlers = AppealHandlers(SimpleNamespace(team=team, auth=SimpleNamespace(clock=appeals.clock),
                                                  member=lambda request: Member(name="lead", role="lead")))
        item_control = handlers.do_score_choices(fatal.appeal_id, TeamSession(lang="zh"), None)
        assert item_control["choices"] == [] and "95" in item_control["label"]
        whole = appeals.submit(run_id, "plain", "qa", agent="agent_wang", role="agent", reason="整体偏低")
        points = handlers.do_score_choices(whole.appeal_id, TeamSession(lang="zh"), None)
        assert [c[0] if isinstance(c, tuple) else c for c in points["choices"]][-1] == "100"
        assert "0–100" in points["label"]
        for a in (fatal, bonus):
            assert appeals.decide(a.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted", reason="属实",
                                  expected_version=a.version).ok
        after = {v.sample_id: v for v in appeals.agent_verdicts(run_id, "agent_wang")}
        assert (after["leak"].official_score, after["plain"].official_score) == (95, 98)
        assert appeals.official_now(run_id, "plain", "qa") == 98
        assert [v.sample_id for v in appeals.agent_verdicts(run_id, "agent_li")] == ["li-1"]
    [summary] = run_scorecard_summaries(RunStore(path), run_id)
    assert summary.totals == [95, 98, 95] and not summary.fatal                 # the report reads the same
