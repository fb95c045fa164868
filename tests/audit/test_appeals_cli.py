"""What appeals teach (appeal rate, acceptance rate, precision with accepted appeals as false hits, the flag) and the
CLI: `appeals list --state submitted`, `appeals decide`, `appeals stats`, `trust`. SQLite and PostgreSQL."""
from __future__ import annotations

import pytest

from rubriceval.audit.appeal_stats import appeal_stats
from rubriceval.audit.appeals import Appeals
from rubriceval.audit.team import TeamStore
from rubriceval.cli import main
from tests.helpers.appeal_store import CHECK, RUBRIC, build_appeal_store


@pytest.fixture()
def appealed(store_target):
    """16 conversations; the check deducted on c000, c004, c008, c012 (4 hits, all agent_wang's). Three are
    appealed: two accepted, one rejected; a fourth appeal is left submitted."""
    run_id = build_appeal_store(store_target, n=16)
    with TeamStore(store_target) as team:
        appeals = Appeals(team)
        made = [appeals.submit(run_id, s, RUBRIC, agent="agent_wang", role="agent", reason="没有承诺包邮", item=CHECK)
                for s in ("c000", "c004", "c008")]
        for appeal, outcome in zip(made, ("accepted", "accepted", "rejected")):
            assert appeals.decide(appeal.appeal_id, reviewer="qa_zhang", role="expert", outcome=outcome,
                                  reason="复核", expected_version=appeal.version).ok
        waiting = appeals.submit(run_id, "c012", RUBRIC, agent="agent_wang", role="agent", reason="同上", item=CHECK)
    return store_target, run_id, waiting.appeal_id


def test_appeal_rates_and_precision_flag_the_item(appealed):
    target, run_id, _ = appealed
    with TeamStore(target) as team:
        rows = {r.item: r for r in appeal_stats(team.conn, run_id) if r.scorer == RUBRIC}
    check = rows[CHECK]
    assert (check.n_hits, check.n_appealed, check.n_decided, check.n_accepted) == (4, 4, 3, 2)
    assert check.appeal_rate == 1.0 and check.acceptance_rate == pytest.approx(2 / 3)
    assert check.precision == pytest.approx(2 / 4)          # two of the four deductions were false hits
    assert check.flagged and "won 2 of 3" in check.why
    whole = rows[""]
    assert whole.n_verdicts == 16 and whole.n_appealed == 0 and not whole.flagged


def test_cli_inbox_decide_stats_and_trust(appealed, capsys):
    target, run_id, waiting = appealed
    store = ["--store", str(target)]
    assert main(["appeals", "list", "--state", "submitted", *store]) == 0
    out = capsys.readouterr().out
    assert waiting in out and "1 appeal(s) submitted" in out
    assert main(["appeals", "decide", waiting, "--accept", "--reason", "属实", "--by", "lead_chen", *store]) == 0
    assert "accepted, official score 5" in capsys.readouterr().out
    # A second decision on the same appeal is refused: it is no longer open.
    assert main(["appeals", "decide", waiting, "--reject", "--reason", "x", "--by", "lead_liu", *store]) == 1
    assert "changed since you opened it (accepted by lead_chen" in capsys.readouterr().out
    assert main(["appeals", "show", waiting, *store]) == 0
    shown = capsys.readouterr().out
    assert "agent_wang (agent) submit" in shown and "lead_chen (lead) decide: submitted → accepted" in shown
    assert main(["appeals", "stats", run_id, *store]) == 0
    assert "won 3 of 4" in capsys.readouterr().out
    assert main(["trust", run_id, *store]) == 0
    out = capsys.readouterr().out
    assert f"⚑ appeals: {CHECK}: agents won 3 of 4" in out and "1 item(s) flagged by appeals" in out


def test_reports_flag_the_item_agents_keep_winning_on(appealed):
    from rubriceval.report.html import render_html_report
    from rubriceval.report.markdown import render_markdown
    from rubriceval.report.run_data import load_run
    from rubriceval.store.runs import RunStore

    target, run_id, _ = appealed
    store = RunStore(target)
    data = load_run(store, run_id)
    assert f"> ⚑ Appeals flag {RUBRIC} · {CHECK}: agents won 2 of 3 decided appeals; precision 0.50" in \
        render_markdown(data, lang="en", findings=[])
    assert f"申诉提示：{RUBRIC} · {CHECK}：坐席在 3 次已裁定申诉中胜 2 次，按误判计精确率 0.50" in \
        render_markdown(data, lang="zh", findings=[])
    assert 'class="sub fail appeal-flag">⚑ Appeals flag' in render_html_report(data, lang="en", findings=[])
    store.close()
