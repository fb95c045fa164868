"""Issue 40, item 1: review tasks over scorecards. `audit-task create RUN --scorecards ID --plan …` samples the card
verdicts per agent per week (strata, weights, risk-first fatal), blind and one reviewer per item by default; a
reviewer must decide every item before the machine's decisions are shown; `audit-task estimate` gives each agent's
Hájek official mean total and per-item agreement."""
from __future__ import annotations

import asyncio

import pytest

from rubriceval.audit.plan_estimate import card_plan_estimates
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_cards import open_card_item, save_card_review
from rubriceval.cli import main
from rubriceval.report.scorecard_summary import run_scorecard_summaries
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.store.team_models import TeamError
from tests.audit.test_one_official_total import CARD, chat

# agent_wang: 6 conversations in ISO week 47 (one leaks another customer's data: fatal), agent_li 4 in week 48
SAMPLES = ([chat(f"w{i}", "agent_wang", "16", "在吗", "在的，还有什么可以帮您？") for i in range(5)]
           + [chat("w-leak", "agent_wang", "17", "查订单", "尾号 1234 的客户也买了")]
           + [chat(f"l{i}", "agent_li", "24", "在吗", "在。") for i in range(4)])


def make(path) -> str:
    runs = RunStore(path)
    card = Scorecard.model_validate(CARD)
    run_id = runs.create_run(RunConfig(), SAMPLES, [], name="W46-47")
    ScorecardStore(runs).register(run_id, [card])
    ScorecardStore(runs).save(run_id, [asyncio.run(score_scorecard(card, s, None, run_id=run_id)) for s in SAMPLES])
    runs.close()
    return run_id


def test_a_card_task_samples_per_agent_per_week_blind_with_one_reviewer(tmp_path, capsys):
    path = tmp_path / "runs.sqlite"
    make(path)
    # the way the lead first tried it: told to use --scorecards
    with pytest.raises(TeamError, match="--scorecards qa"):
        with TeamStore(path) as team:
            from rubriceval.store.team_models import TaskSpec

            team.create_task(TaskSpec(run="W46-47", rubrics=["scorecard:qa"], n=2, experts=["qa_zhang"]), "lead")
    assert main(["audit-task", "create", "W46-47", "--scorecards", "qa", "--plan", "20% per agent_id per week, min 2",
                 "--risk", "fatal", "--experts", "qa_zhang,qa_zhao", "--name", "wk", "--seed", "3",
                 "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "overlap 1, blind" in out
    with TeamStore(path) as team:
        info = team.task("wk")
        assert info.scorecards == ["qa"] and info.overlap == 1 and info.blind
        rows = team.query("SELECT i.item_no, i.sample_id, p.selection, p.stratum, p.weight FROM team_task_items i "
                          "JOIN team_task_plan p ON p.task_id = i.task_id AND p.item_no = i.item_no WHERE "
                          "i.task_id = :t ORDER BY i.item_no", {"t": info.task_id})
        random = [r for r in rows if r[2] == "random"]
        strata = {r[3]: r[4] for r in random}
        # 2 of wang's 6 (weight 3), 2 of li's 4 (weight 2); the fatal conversation added first-risk when not drawn
        assert strata == {"agent_wang|2026-W47": 3.0, "agent_li|2026-W48": 2.0}
        assert len(random) == 4
        assert any(r[1] == "w-leak" for r in rows)
        assert all(r[2] == "risk:fatal" for r in rows if r[1] == "w-leak" and r not in random)
        item_no = rows[0][0]
        expert = team.query("SELECT expert FROM team_assignments WHERE task_id = :t AND item_no = :n",
                            {"t": info.task_id, "n": item_no})[0][0]
        assert len(team.query("SELECT 1 FROM team_assignments WHERE task_id = :t AND item_no = :n",
                              {"t": info.task_id, "n": item_no})) == 1            # overlap 1
        opened = open_card_item(team, info.task_id, item_no, expert)
        assert opened.machine is None and opened.machine_total is None          # blind: nothing of the machine
        assert [name for _, name in opened.items] == ["未询问其他问题", "未说到账时效", "泄露他人信息"]
        with pytest.raises(TeamError, match="decide every item"):
            save_card_review(team, info.task_id, item_no, expert, {"closing": "clear"},
                             expected_version=opened.version)
        with pytest.raises(TeamError):
            open_card_item(team, info.task_id, item_no, "qa_nobody")            # not their share
        statuses = {"closing": "hit", "refund_time": "not_applicable", "leak_other": "clear"}
        assert save_card_review(team, info.task_id, item_no, expert, statuses, expected_version=opened.version).ok
        stale = save_card_review(team, info.task_id, item_no, expert, statuses, expected_version=opened.version)
        assert not stale.ok                                                      # a second tab's old version
        reopened = open_card_item(team, info.task_id, item_no, expert)
        assert reopened.machine is not None and reopened.mine == statuses and reopened.my_total == 95
        machine_closing = reopened.machine["closing"]
        # every random item reviewed as the machine said, but closing always a hit
        for no, *_ in rows:
            if no == item_no:
                continue
            who = team.query("SELECT expert FROM team_assignments WHERE task_id = :t AND item_no = :n",
                             {"t": info.task_id, "n": no})[0][0]
            seen = open_card_item(team, info.task_id, no, who)
            assert save_card_review(team, info.task_id, no, who, statuses, expected_version=seen.version).ok
        estimate = card_plan_estimates(team, info.task_id)
    assert estimate.n_random == 4 and estimate.n_random_reviewed == 4
    means = {a.segment: a.official_mean for a in estimate.agents}
    assert means == {"agent_li": 95.0, "agent_wang": 95.0}       # official totals after the reviewers' decisions
    closing = next(i for i in estimate.items if i.item == "closing")
    assert closing.name == "未询问其他问题"
    # wang's two are clear by the machine (asked "还有什么"), li's two hit: weighted 2·2 / (3·2 + 2·2) agree
    assert closing.agreement.weighted == pytest.approx(4 / 10)
    assert machine_closing in ("hit", "clear")
    # the reviews are what the reports read: li's conversations hit, wang's reviewed ones now hit too
    [summary] = run_scorecard_summaries(RunStore(path), "W46-47")
    assert summary.totals.count(95) >= 4
    assert main(["audit-task", "estimate", "wk", "--store", str(path)]) == 0
    said = capsys.readouterr().out
    assert "agent_wang" in said and "未询问其他问题 (closing)" in said and "Hájek" in said


def test_the_team_apps_tab_keeps_the_machine_hidden_until_every_item_is_decided(tmp_path):
    """The 评分表复核 tab's handlers (ui/team/scorecard_review_wiring.py), called as the server calls them."""
    from types import SimpleNamespace

    from rubriceval.audit.sessions import Member
    from rubriceval.common.errors import RubricEvalError
    from rubriceval.ui.team.actions import TeamSession
    from rubriceval.ui.team.scorecard_review_wiring import ScorecardReviewHandlers

    path = tmp_path / "runs.sqlite"
    make(path)
    with TeamStore(path) as team:
        from rubriceval.store.team_models import TaskSpec

        team.create_task(TaskSpec(run="W46-47", scorecards=["qa"], n=2, experts=["qa_zhang"], name="wk"), "lead")
        handlers = ScorecardReviewHandlers(SimpleNamespace(
            team=team, member=lambda request: Member(name="qa_zhang", role="expert")))
        zh = TeamSession(lang="zh")
        tasks = handlers.do_tasks(zh, None)
        task = tasks["value"]
        items = handlers.do_task_items(task, zh, None)
        html, hits, _, _, version, _ = handlers.do_card_open(task, items["value"], zh, None)
        assert "盲审" in html and "class='official-score'" not in html and "scr-total" not in html
        assert "机器:" not in html                                   # no machine status beside any item
        assert [label for label, _ in hits["choices"]] == ["未询问其他问题 (closing)", "未说到账时效 (refund_time)",
                                                           "泄露他人信息 (leak_other)"]
        with pytest.raises(RubricEvalError, match="逐项判定"):
            handlers.do_card_save(task, items["value"], ["closing"], ["refund_time"], False, "", version, zh, None)
        html, hits, nas, decided, _, status = handlers.do_card_save(task, items["value"], ["closing"], ["refund_time"],
                                                                    True, "没问", version, zh, None)
        assert "95" in status and "class='official-score'>95<" in html and "机器: 命中" in html
        assert hits["value"] == ["closing"] and nas["value"] == ["refund_time"] and decided["value"] is True


def test_the_lead_settles_reviewers_who_differ_from_the_command_line(tmp_path, capsys):
    from rubriceval.store.team_models import TaskSpec

    path = tmp_path / "runs.sqlite"
    make(path)
    with TeamStore(path) as team:
        info = team.create_task(TaskSpec(run="W46-47", scorecards=["qa"], n=1, overlap=2, seed=1,
                                         experts=["qa_zhang", "qa_zhao"], name="pair"), "lead")
        assert info.overlap == 2
        for expert, closing in (("qa_zhang", "hit"), ("qa_zhao", "clear")):
            opened = open_card_item(team, "pair", 1, expert)
            save_card_review(team, "pair", 1, expert, {"closing": closing, "refund_time": "not_applicable",
                                                       "leak_other": "clear"}, expected_version=opened.version)
        sample_id = opened.sample_id
    assert main(["audit-task", "card-disagreements", "pair", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "未询问其他问题 (closing)" in out and "qa_zhang=hit, qa_zhao=clear" in out
    assert main(["audit-task", "card-adjudicate", "pair", "1", "closing", "hit", "--reason", "没问",
                 "--by", "王组长", "--store", str(path)]) == 0
    capsys.readouterr()
    assert main(["audit-task", "card-disagreements", "pair", "--store", str(path)]) == 0
    assert capsys.readouterr().out.rstrip().split()[-1] == "hit"                 # the lead's column
    from rubriceval.audit.scorecard_official import official_totals

    totals = {sample: total for (sample, _), total in official_totals(RunStore(path), "W46-47").items()}
    assert totals[sample_id] == 95                                              # the lead's hit is official
