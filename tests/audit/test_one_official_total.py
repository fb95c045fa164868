"""Issue 40, item 2: one official total, read by every surface. A store where a reviewer of a card review task adds
a missed fatal item, two reviewers differ and the lead adjudicates, and an agent's appeal against one deduction is
accepted; then every surface's total of every conversation is compared — report data, the workbook's rows, trend
rows and the trend figure, the gate figure, the API's frame, the agent's page, the reviewer's page and the lead's
appeal page (each through its own code path). Before this, the agent's page read the appeal decisions only (78
after a fatal item was added) and the lead's page the score when the appeal was made. SQLite and PostgreSQL."""
from __future__ import annotations

import asyncio
import statistics
from types import SimpleNamespace

from rubriceval.audit.appeals import Appeals
from rubriceval.audit.official_api import official_scores
from rubriceval.audit.scored_rows import official_view, run_rows
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_cards import adjudicate_card_item, card_disagreements, open_card_item, save_card_review
from rubriceval.data.sample import Sample
from rubriceval.i18n import t
from rubriceval.report.gate_scorecard import scorecard_figure
from rubriceval.report.scorecard_summary import run_scorecard_summaries
from rubriceval.report.scorecards import ScorecardReport
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.db import Database
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.store.team_models import TaskSpec
from rubriceval.trend.series import compute_trend
from rubriceval.ui.common.scorecard_view_actions import ScorecardDesk
from rubriceval.ui.team.actions import TeamSession
from rubriceval.ui.team.appeals_views import inbox_frame, my_verdicts_frame, verdict_html
from rubriceval.ui.team.appeals_wiring import AppealHandlers

CARD = {
    "id": "qa", "name": "橙子质检", "pass_total": 90,
    "dimensions": [{"id": "服务"}, {"id": "合规"}],
    "items": [
        {"id": "closing", "name": "未询问其他问题", "dimension": "服务", "points": -5,
         "check": {"type": "final_turn", "phrases": ["还有什么"]}},
        {"id": "refund_time", "name": "未说到账时效", "dimension": "服务", "points": -10,
         "applies_when": {"tags": ["退款"]}, "check": {"type": "max_count", "phrases": ["工作日"], "min": 1, "max": 9}},
        {"id": "leak_other", "name": "泄露他人信息", "dimension": "合规", "fatal": True,
         "check": {"type": "must_not_mention", "phrases": ["尾号"], "turns": "assistant"}},
    ],
}


def chat(sid: str, agent: str, day: str, *turns: str, tags=()) -> Sample:
    roles = ["user", "assistant"] * len(turns)
    return Sample.model_validate({
        "id": sid, "question": "", "tags": list(tags), "metadata": {"agent_id": agent},
        "conversation": {"id": sid, "turns": [{"role": r, "content": c, "timestamp": f"2026-11-{day}T10:00:00Z"}
                                              for r, c in zip(roles, turns)]}})


SAMPLES = [
    chat("c1", "agent_wang", "16", "在吗", "在的，还有什么可以帮您？"),                          # 100
    chat("c2", "agent_wang", "17", "退款", "已退款。", tags=["退款"]),                          # 85: −5 −10
    chat("c3", "agent_li", "16", "查订单", "另一位客户的订单也在路上。"),                          # 95: −5
    chat("c4", "agent_li", "18", "退款", "3 个工作日到账，还有什么可以帮您？", tags=["退款"]),     # 100
]
ALL_CLEAR = {"closing": "clear", "refund_time": "not_applicable", "leak_other": "clear"}


def build(store_path) -> dict:
    """The run, a card review task (two reviewers, blind), a missed fatal added, a disagreement adjudicated, and an
    accepted appeal. Returns what the test reads back."""
    runs = RunStore(store_path)
    card = Scorecard.model_validate(CARD)
    run_id = runs.create_run(RunConfig(), SAMPLES, [], name="W46")
    ScorecardStore(runs).register(run_id, [card])
    ScorecardStore(runs).save(run_id, [asyncio.run(score_scorecard(card, s, None, run_id=run_id)) for s in SAMPLES])
    with TeamStore(store_path) as team:
        info = team.create_task(TaskSpec(run=run_id, scorecards=["qa"], overlap=2, experts=["qa_zhang", "qa_zhao"],
                                         plan={"per": ["agent_id"], "share": 1.0, "at_least": 2}), created_by="lead")
        items = {r[1]: r[0] for r in team.query("SELECT item_no, sample_id FROM team_task_items WHERE task_id = :t",
                                                {"t": info.task_id})}
        said = {
            "c1": ALL_CLEAR, "c2": {"closing": "hit", "refund_time": "hit", "leak_other": "clear"},
            "c3": {"closing": "hit", "refund_time": "not_applicable", "leak_other": "hit"},     # the missed fatal
            "c4": {"closing": "clear", "refund_time": "clear", "leak_other": "clear"}}
        for expert in ("qa_zhang", "qa_zhao"):
            for sample_id, statuses in said.items():
                opened = open_card_item(team, info.task_id, items[sample_id], expert)
                mine = dict(statuses)
                if expert == "qa_zhao" and sample_id == "c4":
                    mine["closing"] = "hit"                  # the reviewers differ: the lead adjudicates
                assert save_card_review(team, info.task_id, items[sample_id], expert, mine,
                                        expected_version=opened.version).ok
        [split] = card_disagreements(team, info.task_id)
        assert (split.sample_id, split.item, split.item_name) == ("c4", "closing", "未询问其他问题")
        adjudicate_card_item(team, info.task_id, items["c4"], "closing", "clear", lead="lead", reason="问过了")
        appeals = Appeals(team)
        appeal = appeals.submit(run_id, "c2", "qa", agent="agent_wang", role="agent", reason="说了三个工作日",
                                item="refund_time")
        decided = appeals.decide(appeal.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted",
                                 reason="属实", expected_version=appeal.version)
        assert appeals.finalize(appeal.appeal_id, lead="lead", role="lead", outcome="accepted", reason="维持",
                                expected_version=decided.appeal.version).ok
    runs.close()
    return {"run": run_id, "appeal": appeal.appeal_id, "task": info.task_id}


EXPECTED = {"c1": 100, "c2": 95, "c3": 0, "c4": 100}


def _cell(frame, column: str, key_column: str) -> dict[str, int]:
    return {row[key_column]: int(str(row[column]).split()[0]) for _, row in frame.iterrows()}


def test_every_surface_shows_the_same_official_total(store_target):
    path = store_target                  # a SQLite file, then a PostgreSQL database
    built = build(path)
    run_id = built["run"]
    runs = RunStore(path)
    surfaces: dict[str, dict[str, int | None]] = {}
    report = ScorecardReport(runs, run_id, "zh")
    surfaces["report"] = {v.sample_id: v.totals.total for v in report.verdicts}
    [summary] = run_scorecard_summaries(runs, run_id)
    surfaces["summary"] = dict(zip([s.id for s in SAMPLES], summary.totals))
    # the workbook's rows (export): the conversation rows of the card's sheet
    [(_, rows)] = list(report.sheets(set()))
    rows = list(rows)
    first = next(i for i, r in enumerate(rows) if r and r[0] in EXPECTED)
    at = rows[first - 1].index(t("sc_col_total", "zh"))          # the header row above the conversations
    surfaces["workbook"] = {r[0]: r[at] for r in rows if r and r[0] in EXPECTED}
    # trend: the rows it reads (audit/scored_rows.py) and its figure
    db = Database(runs.path, read_only=True)
    trend_rows = {keys.sample_id: next(r.score for r in scored if r.scorer == "qa")
                  for chunk in run_rows(db, run_id, view=official_view(runs, run_id)) for keys, scored in chunk}
    db.close()
    surfaces["trend rows"] = {k: int(v) for k, v in trend_rows.items()}
    [point] = [p for p in compute_trend(runs, [run_id], n_boot=50).rows if p.scorer == "qa"]
    assert point.mean == statistics.mean(EXPECTED.values())
    # gate
    mean, _, _ = scorecard_figure(run_scorecard_summaries(runs, run_id), "qa", "mean")
    fatal_rate, _, _ = scorecard_figure(run_scorecard_summaries(runs, run_id), None, "fatal_rate")
    assert (mean, fatal_rate) == (statistics.mean(EXPECTED.values()), 0.25)
    # the weekly report (周报): each agent's official mean and the fatal count
    from rubriceval.report.weekly import weekly_report

    weekly = weekly_report(runs, [run_id], scorecard="qa", period="2026-W47", n_boot=50)
    by_agent = {r.key: r.mean for r in weekly.rows if r.kind == "agent"}
    assert by_agent == {"agent_wang": 97.5, "agent_li": 50.0}
    assert [r.fatal for r in weekly.rows if r.kind == "all"] == [1]
    # the API
    frame = official_scores(runs, run_id)
    surfaces["api"] = {r["sample_id"]: int(r["official_score"]) for _, r in frame.iterrows() if r["scorer"] == "qa"}
    # the reviewer's page (the 评分表复核 tab's listing and opened verdict)
    desk = ScorecardDesk(runs)
    listing = desk.listing(run_id, "zh")
    surfaces["reviewer list"] = _cell(listing.frame, t("appeal_ui_official", "zh"), t("ui_col_sample", "zh"))
    surfaces["reviewer page"] = {}
    for sample_id in EXPECTED:
        html = desk.open(run_id, desk.verdict(run_id, f"{sample_id}|qa", "zh"), "zh").html
        surfaces["reviewer page"][sample_id] = int(html.split("class='official-score'>")[1].split("<")[0])
    # the agents' pages and the lead's appeal page
    with TeamStore(path) as team:
        appeals = Appeals(team)
        mine = [v for agent in ("agent_wang", "agent_li") for v in appeals.agent_verdicts(run_id, agent)]
        surfaces["agent list"] = _cell(my_verdicts_frame(mine, "zh"), t("appeal_ui_official", "zh"),
                                       t("ui_col_sample", "zh"))
        surfaces["agent page"] = {
            v.sample_id: int(verdict_html(v, SAMPLES[0], "zh").split("class='official-score'>")[1].split("<")[0])
            for v in mine}
        handlers = AppealHandlers(SimpleNamespace(team=team, auth=SimpleNamespace(clock=appeals.clock)))
        html, _, _ = handlers._view(built["appeal"], TeamSession(lang="zh"))
        lead_page = int(html.split("class='official-score'>")[1].split("<")[0])
        inbox = inbox_frame(appeals.list(), "zh", official={a.appeal_id: appeals.official_now(a.run_id, a.sample_id,
                                                                                              a.scorer)
                                                            for a in appeals.list()})
        inbox_total = int(inbox.iloc[0][t("appeal_ui_official", "zh")])
    runs.close()
    for name, totals in surfaces.items():
        assert totals == EXPECTED, name
    assert lead_page == inbox_total == EXPECTED["c2"]
    assert "未说到账时效" in html                                       # the item by its card name on the lead's page
