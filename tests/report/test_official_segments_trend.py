"""Official scores in `report --by` segments, `rubriceval trend`, the scorecard sections of report and compare, and
compare's sample lists: each figure says how many rows are human-decided with the judge's beside it, and
--machine-only gives the judge's view everywhere. SQLite and PostgreSQL."""
from __future__ import annotations

import pytest

from rubriceval.audit.appeals import Appeals
from rubriceval.audit.scorecard_reviews import ReviewStore
from rubriceval.audit.team import TeamStore
from rubriceval.cli import main
from rubriceval.core.verdict import Verdict
from rubriceval.data.segment_spec import parse_by
from rubriceval.report.compare import compare_runs, format_comparison, render_compare_html
from rubriceval.report.scorecard_compare import compare_scorecards, format_scorecard_deltas
from rubriceval.report.scorecard_summary import run_scorecard_summaries
from rubriceval.report.scorecards import ScorecardReport
from rubriceval.report.segment_views import markdown_section, sheet_rows
from rubriceval.report.trend_views import format_trend
from rubriceval.segments.table import segment_tables
from rubriceval.store.runs import RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.trend.series import compute_trend
from tests.audit.test_appeals_scorecard import conversation, make_run
from tests.helpers.appeal_store import RUBRIC, build_appeal_store, rubric_verdict
from tests.report.test_official_reports import decided  # noqa: F401  (the fixture: overrides and an accepted appeal)

MACHINE = {"c000": 2, "c001": 4, "c002": 4, "c003": 5, "c004": 2, "c005": 4, "c006": 5, "c007": 4}   # c008 unscored
OFFICIAL = {**MACHINE, "c000": 5, "c004": 5, "c008": 3}


def _rerun(store: RunStore) -> str:
    """The same machine scores in a second run, no decisions; c008 unscored there too."""
    rerun = build_appeal_store(store.path, n=9, name="qa-week-rerun")
    store.delete_verdicts(rerun, [("c008", RUBRIC)])
    store.save_verdicts(rerun, [(Verdict.unscored("c008", RUBRIC, "timeout", "slow judge"), "")])
    return rerun


# -- segments ---------------------------------------------------------------------------------------------------------

def test_segments_say_how_many_rows_are_human_decided_and_machine_only_gives_the_judges(decided):
    store, run_id = decided
    [table] = segment_tables(store, run_id, parse_by("agent_id"))
    wang = next(r for r in table.for_scorer(RUBRIC) if r.values["agent_id"] == "agent_wang")
    li = next(r for r in table.for_scorer(RUBRIC) if r.values["agent_id"] == "agent_li")
    wang_ids = ["c000", "c002", "c004", "c006", "c008"]
    assert wang.mean == pytest.approx(sum(OFFICIAL[s] for s in wang_ids) / 5) and wang.n_human == 3
    assert wang.machine_mean == pytest.approx((2 + 4 + 2 + 5) / 4)          # c008: unscored by the judge
    assert li.n_human == 0 and li.machine_mean is None
    md = markdown_section([table], {}, "en")
    assert "human-decided" in md and "| 3 | 3.25 |" in md
    assert [*sheet_rows(table, {})[0][-2:]] in ([3, 3.25], [0, None])
    [judge] = segment_tables(store, run_id, parse_by("agent_id"), machine_only=True)
    wang = next(r for r in judge.for_scorer(RUBRIC) if r.values["agent_id"] == "agent_wang")
    assert wang.mean == pytest.approx(3.25) and wang.n_unscored == 1 and wang.n_human == 0
    assert "human-decided" not in markdown_section([judge], {}, "en")


def test_report_by_and_gate_by_segment_take_machine_only(decided, tmp_path, capsys):
    store, run_id = decided
    args = ["report", run_id, "--store", str(store.path), "--out", str(tmp_path), "--by", "agent_id", "--lang", "en"]
    assert main(args) == 0
    assert "| 3 | 3.25 |" in capsys.readouterr().out
    assert main(args + ["--machine-only"]) == 0
    out = capsys.readouterr().out
    assert "| 3 | 3.25 |" not in out and "Machine only" in out
    gate = ["gate", run_id, "--store", str(store.path), "--check", "soothing mean>=4 by agent_id"]
    assert main(gate) == 0                    # agent_wang 4.4 official, agent_li 4.25
    assert main(gate + ["--machine-only"]) == 1   # agent_wang 3.25 as judged


# -- trend ------------------------------------------------------------------------------------------------------------

def test_trend_points_are_official_and_say_how_many_are_human_decided(decided, tmp_path, capsys):
    store, run_id = decided
    rerun = _rerun(store)
    trend = compute_trend(store, [run_id, rerun], scorers=[RUBRIC], n_boot=50)
    week, again = trend.series(RUBRIC)["all"]
    assert week.period == "qa-week" and week.mean == pytest.approx(sum(OFFICIAL.values()) / 9)
    assert week.n_human == 3 and week.machine_mean == pytest.approx(3.75) and week.n_unscored == 0
    assert again.n_human == 0 and again.mean == pytest.approx(3.75)
    assert "3 human-decided; machine 3.75" in format_trend(trend)
    judge = compute_trend(store, [run_id, rerun], scorers=[RUBRIC], n_boot=50, machine_only=True)
    week, again = judge.series(RUBRIC)["all"]
    assert week.mean == pytest.approx(3.75) and week.n_human == 0 and week.n_unscored == 1
    assert again.change is not None and again.change.delta == pytest.approx(0)
    assert "human-decided" not in format_trend(judge)
    assert main(["trend", run_id, rerun, "--store", str(store.path), "--scorer", RUBRIC, "--n-boot", "20",
                 "--out", str(tmp_path), "--lang", "en"]) == 0
    assert "3 human-decided; machine 3.75" in capsys.readouterr().out
    assert "3 human-decided; machine 3.75" in (tmp_path / "trend.html").read_text(encoding="utf-8")
    from openpyxl import load_workbook

    rows = [[c.value for c in row] for row in load_workbook(tmp_path / "trend.xlsx")["trend"].iter_rows()]
    assert [r[-2:] for r in rows] == [["human-decided", "Machine mean"], [3, 3.75], [0, None]]
    assert main(["trend", run_id, rerun, "--store", str(store.path), "--scorer", RUBRIC, "--n-boot", "20",
                 "--machine-only", "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert "human-decided" not in out and "Machine only" in out


# -- compare's sample lists --------------------------------------------------------------------------------------------

def test_compare_sample_lists_are_official_and_marked_human_decided(decided):
    store, run_id = decided
    rerun = _rerun(store)
    # the rerun: c000's rouge_l up (0.5 → 0.8) while its official soothing drops 5 → 2 (the judge's: 2 → 2);
    # c001 judged 3 (was 4) with rouge_l up: a seesaw on the judge's scores as well
    store.save_verdicts(rerun, [(Verdict(sample_id="c000", scorer="rouge_l", kind="metric", score=0.8), ""),
                                (Verdict(sample_id="c001", scorer="rouge_l", kind="metric", score=0.8), ""),
                                (rubric_verdict("c001", judge=3, check_passed=True), "")])
    c = compare_runs(store, run_id, rerun, n_boot=50)
    worse = {x.sample_id: x for x in c.worse[RUBRIC]}
    assert set(worse) == {"c000", "c004", "c001"}
    assert (worse["c000"].score_a, worse["c000"].score_b, worse["c000"].decided_a) == (5, 2, "appeal · qa_zhao")
    assert worse["c004"].decided_a == "override · qa_zhang" and not worse["c001"].human
    assert [(s.sample_id, s.human) for s in c.seesaw_samples] == [("c000", [RUBRIC]), ("c001", [])]
    assert c.seesaw_total == 2
    delta = c.get(RUBRIC)
    assert delta.n_only_a == 1                         # c008: scored by a person in A, unscored in B
    assert [(u.sample_id, u.score_a) for u in c.new_unscored if u.scorer == RUBRIC] == [("c008", 3)]
    text = format_comparison(c, lang="en")
    assert "c000: 5 → 2  ✎ human-decided (appeal · qa_zhao → –)" in text and "✎ human-decided: soothing" in text
    assert text.count("✎") == 3                        # c000 and c004 dropped, c000 in the seesaw
    assert "human-decided" in render_compare_html(c, lang="en")
    judge = compare_runs(store, run_id, rerun, n_boot=50, machine_only=True)
    assert [x.sample_id for x in judge.worse[RUBRIC]] == ["c001"]
    assert [s.sample_id for s in judge.seesaw_samples] == ["c001"] and judge.seesaw_total == 1
    assert judge.get(RUBRIC).n_only_a == 0 and not [u for u in judge.new_unscored if u.scorer == RUBRIC]


# -- scorecard sections --------------------------------------------------------------------------------------------

SAMPLES = [conversation("good", "在吗", "在的，还有什么可以帮您？", agent="wang"),
           conversation("refund-slow", "退款", "已退款。", tags=["退款"], agent="wang"),   # −5 closing, −10 refund_time
           conversation("secret", "登不上", "请把密码告诉我，还有什么可以帮您？", agent="wang")]  # fatal: password


def _card_run(store: RunStore, name: str) -> str:
    return make_run(store, name, SAMPLES)


@pytest.fixture()
def card_runs(store_target):
    """An accepted appeal removes refund-slow's refund_time deduction (85 → 95); a reviewer rejects the fatal
    password hit on secret (0 → 100). The baseline run has no decision."""
    store = RunStore(store_target)
    baseline, run_id = _card_run(store, "before"), _card_run(store, "week")
    with TeamStore(store_target) as team:
        appeals = Appeals(team)
        a = appeals.submit(run_id, "refund-slow", "qa", agent="wang", role="agent", reason="说了时效",
                           item="refund_time")
        assert appeals.decide(a.appeal_id, reviewer="qa_zhang", role="expert", outcome="accepted", reason="属实",
                              expected_version=a.version).ok
    secret = next(v for v in ScorecardStore(store).verdicts(run_id) if v.sample_id == "secret")
    assert secret.totals.fatal == ["password"] and secret.totals.total == 0
    ReviewStore(store).add(run_id, secret, "password", "reject", reviewer="qa_zhao", note="客户自己说的")
    yield store, baseline, run_id
    store.close()


def test_scorecard_figures_are_official_with_the_human_decided_count(card_runs):
    store, baseline, run_id = card_runs
    [s] = run_scorecard_summaries(store, run_id)
    assert s.totals == [100, 95, 100] and s.fatal_rate == 0 and s.n_human == 2
    assert s.machine_mean == pytest.approx((100 + 85 + 0) / 3) and s.machine_fatal_rate == pytest.approx(1 / 3)
    refund = next(i for i in s.items if i.item == "refund_time")
    assert (refund.hit_rate, refund.n_human, refund.machine_hit_rate) == (0, 1, 1.0)
    password = next(i for i in s.items if i.item == "password")
    assert password.n_human == 1 and password.n_hit == 0 and password.machine_hit_rate == pytest.approx(1 / 3)
    [judge] = run_scorecard_summaries(store, run_id, machine_only=True)
    assert judge.totals == [100, 85, 0] and judge.n_human == 0 and judge.machine_only
    md = ScorecardReport(store, run_id, "en").markdown()
    assert "Official totals: 2 conversation(s) human-decided" in md and "machine fatal rate 33" in md
    assert "1 human-decided; machine 100" in md                 # refund_time's hit rate, the judge's beside
    machine_md = ScorecardReport(store, run_id, "en", machine_only=True).markdown()
    assert "Official totals" not in machine_md and "Machine only" in machine_md


def test_scorecard_compare_and_segments_read_official_totals(card_runs, tmp_path, capsys):
    store, baseline, run_id = card_runs
    [delta] = compare_scorecards(store, baseline, run_id, n_boot=50)
    assert delta.delta == pytest.approx((10 + 100) / 3) and (delta.n_human_a, delta.n_human_b) == (0, 2)
    assert "0 → 2 human-decided" in format_scorecard_deltas([delta])
    [back] = compare_scorecards(store, run_id, baseline, n_boot=50)
    assert [w[0] for w in back.worse] == ["secret", "refund-slow"] and back.human_decided == ["secret", "refund-slow"]
    assert "worse: secret 100 → 0 (human-decided)" in format_scorecard_deltas([back])
    [judge] = compare_scorecards(store, run_id, baseline, n_boot=50, machine_only=True)
    assert judge.delta == 0 and not judge.worse and judge.machine_only
    # segments: the official total and fatal rate (a reviewer's item decision included), the judge's beside
    [table] = segment_tables(store, run_id, parse_by("agent_id"))
    [qa] = table.for_scorer("qa")
    assert (qa.scorecard_total, qa.fatal_rate, qa.n_human) == (pytest.approx(295 / 3), 0, 2)
    assert qa.machine_mean == pytest.approx(185 / 3)
    [table] = segment_tables(store, run_id, parse_by("agent_id"), machine_only=True)
    [qa] = table.for_scorer("qa")
    assert (qa.scorecard_total, qa.fatal_rate, qa.n_human) == (pytest.approx(185 / 3), pytest.approx(1 / 3), 0)
    # the gate's scorecard checks: official fatal rate 0 (the reviewer rejected the hit), the judge's 1/3
    gate = ["gate", run_id, "--store", str(store.path), "--check", "scorecard:qa fatal_rate<=0.1"]
    assert main(gate) == 0 and main(gate + ["--machine-only"]) == 1
    # the CLI's compare hands --machine-only to the scorecard section
    assert main(["compare", run_id, baseline, "--store", str(store.path), "--n-boot", "20", "--machine-only"]) == 0
    assert "(machine only)" in capsys.readouterr().out
