"""A scorecard deduction appealed and accepted: the conversation's official total is recomputed by the scorecard's
own arithmetic with that item clear (the stored verdict untouched), and the scorecard's summary, hit rates and
compare read the official totals. SQLite and PostgreSQL."""
from __future__ import annotations

import asyncio

import pytest

from rubriceval.audit.appeal_stats import appeal_stats
from rubriceval.audit.appeals import Appeals
from rubriceval.audit.scorecard_reviews import ReviewStore
from rubriceval.audit.team import TeamStore
from rubriceval.data.sample import Sample
from rubriceval.report.scorecard_compare import compare_scorecards
from rubriceval.report.scorecard_summary import run_scorecard_summaries
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.appeal_models import AppealError
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore
from tests.scorecard.test_scorecard_report import CARD


def conversation(sid: str, *turns: str, tags=(), agent: str = "agent_wang") -> Sample:
    roles = ["user", "assistant"] * len(turns)
    return Sample.model_validate({"id": sid, "question": "", "tags": list(tags), "metadata": {"agent_id": agent},
                                  "conversation": {"id": sid, "turns": [{"role": r, "content": c}
                                                                        for r, c in zip(roles, turns)]}})


SAMPLES = [conversation("good", "在吗", "在的，还有什么可以帮您？"),
           conversation("refund-slow", "退款", "已退款。", tags=["退款"])]              # −5 closing, −10 refund_time


def make_run(store: RunStore, name: str, samples: list[Sample] = SAMPLES) -> str:
    """A run of `samples` scored by CARD (no judge: its items are rules)."""
    card = Scorecard.model_validate(CARD)
    run_id = store.create_run(RunConfig(), samples, [], name=name)
    cards = ScorecardStore(store)
    cards.register(run_id, [card])
    cards.save(run_id, [asyncio.run(score_scorecard(card, s, None, run_id=run_id)) for s in samples])
    return run_id


def test_an_accepted_deduction_appeal_recomputes_the_scorecard_total(store_target):
    store = RunStore(store_target)
    run_id, baseline = make_run(store, "week"), make_run(store, "week-before")
    with TeamStore(store_target) as team:
        appeals = Appeals(team)
        mine = {(v.sample_id, v.scorer): v for v in appeals.agent_verdicts(run_id, "agent_wang")}
        assert set(mine) == {("good", "qa"), ("refund-slow", "qa")}
        assert sorted(mine[("refund-slow", "qa")].deductions) == ["closing", "refund_time"]
        a = appeals.submit(run_id, "refund-slow", "qa", agent="agent_wang", role="agent", reason="说了三个工作日",
                           item="refund_time")
        assert (a.machine_score, a.proposed_score) == (85, 95)
        with pytest.raises(AppealError, match="from 0 to 100"):
            appeals.decide(a.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted", reason="x",
                           score=101, expected_version=a.version)
        assert appeals.decide(a.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted", reason="属实",
                              expected_version=a.version).ok
    [summary] = run_scorecard_summaries(store, run_id)
    assert summary.totals == [100, 95]
    with TeamStore(store_target) as team:
        stats = {r.item: r for r in appeal_stats(team.conn, run_id) if r.scorer == "qa"}
    assert (stats["refund_time"].n_hits, stats["refund_time"].n_accepted, stats["refund_time"].precision) == (1, 1, 0)
    assert stats["closing"].n_hits == 1 and stats[""].n_verdicts == 2 and stats[""].n_hits == 1   # pass_total 90
    refund = next(i for i in summary.items if i.item == "refund_time")
    assert refund.n_hit == 0                          # the removed deduction is clear in the official verdict
    assert [v.totals.total for v in ScorecardStore(store).verdicts(run_id)] == [100, 85]   # stored as judged
    [delta] = compare_scorecards(store, baseline, run_id, n_boot=50)
    assert delta.mean_b - delta.mean_a == pytest.approx(5.0)
    # A reviewer then rejects the other deduction (a false hit): both corrections count, the total is 100.
    stored = next(v for v in ScorecardStore(store).verdicts(run_id) if v.sample_id == "refund-slow")
    ReviewStore(store).add(run_id, stored, "closing", "reject", reviewer="qa_zhao", note="问过了")
    [summary] = run_scorecard_summaries(store, run_id)
    assert summary.totals == [100, 100]
    store.close()


def test_a_scorecard_item_agents_keep_winning_on_is_flagged_in_reports_and_trust(store_target, capsys):
    from rubriceval.cli import main
    from rubriceval.report.markdown import render_markdown
    from rubriceval.report.run_data import load_run

    store = RunStore(store_target)
    card = Scorecard.model_validate(CARD)
    samples = [*SAMPLES, conversation("refund-slow-2", "退款", "退了。", tags=["退款"]),
               conversation("refund-slow-3", "退款", "已退。", tags=["退款"])]
    run_id = store.create_run(RunConfig(), samples, [], name="week")
    ScorecardStore(store).register(run_id, [card])
    ScorecardStore(store).save(run_id, [asyncio.run(score_scorecard(card, s, None, run_id=run_id)) for s in samples])
    with TeamStore(store_target) as team:
        appeals = Appeals(team)
        for sample, outcome in (("refund-slow", "accepted"), ("refund-slow-2", "accepted"),
                                ("refund-slow-3", "rejected")):
            a = appeals.submit(run_id, sample, "qa", agent="agent_wang", role="agent", reason="说了时效",
                               item="refund_time")
            assert appeals.decide(a.appeal_id, reviewer="qa_zhang", role="expert", outcome=outcome, reason="复核",
                                  expected_version=a.version).ok
    assert "> ⚑ Appeals flag qa · refund_time: agents won 2 of 3 decided appeals; precision 0.33" in \
        render_markdown(load_run(store, run_id), lang="en", findings=[])
    assert main(["trust", run_id, "--store", str(store_target)]) == 0
    out = capsys.readouterr().out
    assert "qa (scorecard): ⚑ appeals: refund_time: agents won 2 of 3" in out and "1 item(s) flagged by appeals" in out
    store.close()
