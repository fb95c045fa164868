"""Conversations in reports: per-conversation rows, the first failing turn (per-turn judge scores and checks), where
in conversations rules fail (HTML chart, Excel sheets, Markdown), transcripts in examples, and compare / gate on
conversation rubrics over two runs of the demo conversations with different per-turn scores."""
from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import pytest

from rubriceval import (
    Conversation,
    Evidence,
    RunConfig,
    RunStore,
    Verdict,
    compare_runs,
    evaluate_gate,
    markdown_summary,
    write_excel_report,
)
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.report.compare import format_comparison, render_compare_html
from rubriceval.report.conversations import conversation_report, feedback_turns, first_failing_turn, position_bucket
from rubriceval.report.html import render_html_report
from rubriceval.report.run_data import load_run
from tests.helpers.conversation_run import conversation_run

SOOTHING = "emotional_soothing_multiturn"


def late_turns_poor(conversation_id: str, turn: int) -> int:
    """The candidate bot: fine at the start, poor from turn 4 on."""
    return 2 if turn >= 4 else 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, str, str]:
    path = tmp_path_factory.mktemp("report") / "runs.sqlite"
    good = conversation_run(path, turn_score=lambda cid, turn: 4, name="baseline")
    worse = conversation_run(path, turn_score=late_turns_poor, name="candidate")
    store = RunStore(path)
    yield store, good, worse
    store.close()


@pytest.mark.parametrize("text, n_turns, expected", [
    ("第3轮透露了订单号", 8, [3]),
    ("第 2、4 轮都在道歉，第6轮才转人工", 8, [2, 4, 6]),
    ("第2至4轮没有推进", 8, [2, 3, 4]),
    ("Turn 5 asks for the password; turns 2 and 7 are fine", 8, [5, 2, 7]),
    ("[3] is rude, [12] does not exist", 8, [3]),
    ("call 400-800-1234 or see turn 0", 8, []),
])
def test_turn_numbers_cited_in_feedback(text: str, n_turns: int, expected: list[int]) -> None:
    assert feedback_turns(text, n_turns) == expected


def test_position_buckets_split_a_conversation_into_equal_parts() -> None:
    assert [position_bucket(turn, 8) for turn in range(1, 9)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [position_bucket(turn, 6) for turn in range(1, 7)] == [0, 0, 1, 2, 3, 3]
    assert [position_bucket(turn, 3) for turn in range(1, 4)] == [0, 2, 3]
    assert position_bucket(1, 1) == 0


def test_first_failing_turn_comes_from_turn_scores_and_checks() -> None:
    verdict = Verdict(sample_id="c", scorer="r", score=2, evidence=[
        Evidence(item="judge", score=2, passed=False, detail="whole conversation"),      # no turn: not a position
        Evidence(item="judge", turn=6, score=2, passed=False),
        Evidence(item="closing", turn=8, passed=False),
        Evidence(item="apologise_once", turn=4, passed=True),                            # passed: not a failure
        Evidence(item="judge", turn=2, score=5, passed=True)])
    assert first_failing_turn(verdict) == 6
    assert first_failing_turn(verdict.model_copy(update={"evidence": verdict.evidence[:1]})) is None


def test_rows_and_failure_positions_on_the_demo_conversations(runs) -> None:
    store, good, worse = runs
    data = load_run(store, worse)
    report = conversation_report(data.samples, data.verdicts)
    rows = {r.conversation_id: r for r in report.rows}
    assert len(rows) == 14 and all(r.n_turns == len(s.conversation.turns) for s in data.samples
                                   for r in [rows[s.id]])
    # Revealed the order (turn 2) before verifying; no closing question at the end (turn 8).
    revealed = rows["refund-revealed-first"]
    assert revealed.first_failing_turn == 2 and revealed.first_failing_rubric == "identity_verification"
    assert revealed.failing_checks == ["closing/closing_question", "identity_verification/verify_before_details"]
    assert revealed.rubrics["closing"].first_failing_turn == 8 and revealed.rubrics["identity_verification"].score == 2
    # Per-turn judge scores: turns 4, 6, 8 score 2 (< threshold 4); apologising again also fails at turn 4.
    apology = rows["refund-apology-every-turn"]
    assert apology.rubrics[SOOTHING].first_failing_turn == 4 and apology.rubrics[SOOTHING].score == 2
    assert apology.rubrics[SOOTHING].failing_checks == ["apologise_once"]     # judge scores are not checks
    assert rows["refund-verified"].first_failing_turn is None and rows["refund-verified"].failing_checks == []
    # Where rules fail, counted by hand from the rows: every (conversation, rubric, turn) once.
    expected: dict[str, list[int]] = {}
    for sample in data.samples:
        verdicts = [v for v in data.verdicts if v.sample_id == sample.id]
        for v in verdicts:
            turns = {e.turn for e in v.evidence if e.turn is not None and e.passed is False}
            bins = expected.setdefault(v.scorer, [0, 0, 0, 0])
            for turn in turns:
                bins[position_bucket(turn, len(sample.conversation.turns))] += 1
    positions = {p.scorer: p for p in report.positions}
    assert {s: p.by_bucket for s, p in positions.items()} == expected
    # 5 soothing conversations fail at 4, 6 (and 8 when the dialogue has 8 turns): never in the first quarter.
    assert positions[SOOTHING].by_bucket[0] == 0 and positions[SOOTHING].n_conversations_failing == 5
    assert positions[SOOTHING].by_turn[4] == 5
    # The baseline's turns all score 4: only the checks fail, so the soothing chart holds only apologise_once.
    base = conversation_report(*(lambda d: (d.samples, d.verdicts))(load_run(store, good)))
    assert sum({p.scorer: p for p in base.positions}[SOOTHING].by_bucket) == 2


def test_html_report_has_the_conversation_section_chart_and_transcripts(runs) -> None:
    store, _, worse = runs
    html = render_html_report(load_run(store, worse), lang="en")
    section = html[html.index('id="conversations"'):html.index('id="metrics"') if 'id="metrics"' in html else None]
    assert "Where in conversations rules fail" in section
    chart = section[section.index(f'data-rubric="{SOOTHING}"'):]
    # The bars carry the counts per position bucket (title "bucket: count").
    titles = re.findall(r"<title>([^<]+)</title>", chart[:chart.index("</svg>")])
    assert titles == ["0–25%: 0", "25–50%: 3", "50–75%: 4", "75–100%: 5"]
    row = section[section.index('data-conversation="refund-revealed-first"'):]
    row = row[:row.index("</tr>")]
    assert "identity_verification/verify_before_details" in row and "@2" in row
    # An example of a conversation rubric shows every turn, not only the first question and last answer.
    example = html[html.index('id="rubric-identity_verification"'):]
    assert '<ol class="transcript">' in example and "[3] User" in example
    assert "请提供您完整的银行卡号" in example                       # a middle turn (4) of card-number-ask


def test_report_escapes_conversation_text(tmp_path: Path) -> None:
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    sample = conversation_sample(Conversation(id="evil", turns=[
        {"role": "user", "content": hostile},
        {"role": "assistant", "content": "抱歉 " + hostile,
         "tool_calls": [{"name": "lookup<b>", "arguments": {"q": hostile}}]}]))
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.create_run(RunConfig(), [sample],
                           [("closing", "rubric", "v1", {"name": "结束语", "threshold": 4})])
    store.save_verdict(run, Verdict(sample_id="evil", scorer="closing", score=1, feedback=hostile, evidence=[
        Evidence(item="closing_question", turn=2, passed=False, detail=hostile)]))
    html = render_html_report(load_run(store, run), lang="zh")
    assert "<script>alert" not in html and "<img src=x" not in html and "lookup<b>" not in html
    assert "&lt;script&gt;alert" in html


def test_excel_and_markdown_have_the_conversation_tables(runs, tmp_path: Path) -> None:
    store, _, worse = runs
    book = openpyxl.load_workbook(write_excel_report(store, worse, tmp_path / "r.xlsx", lang="en"))
    assert book.sheetnames[-2:] == ["conversations", "where_rules_fail"]
    sheet = [list(r) for r in book["conversations"].iter_rows(values_only=True)]
    header, rows = sheet[0], {r[0]: dict(zip(sheet[0], r)) for r in sheet[1:]}
    assert len(rows) == 14 and "First failing turn" in header and header[-1] == "Transcript"
    revealed = rows["refund-revealed-first"]
    assert revealed["First failing turn"] == 2 and revealed["Turns"] == 8
    assert "[2] Agent: 好的，您的订单 E20240510088" in revealed["Transcript"]
    where = {r[0]: r for r in book["where_rules_fail"].iter_rows(values_only=True)}
    assert list(where["情绪安抚（多轮）"][1:5]) == [0, 3, 4, 5]
    text = markdown_summary(store, worse, lang="en")
    assert "**Conversations** — Where in conversations rules fail" in text
    assert "| 情绪安抚（多轮） | 0 | 3 | 4 | 5 | 12 | 5 |" in text
    assert "| refund-revealed-first | 8 |" in text


def test_compare_and_gate_on_conversation_rubrics(runs) -> None:
    store, good, worse = runs
    comparison = compare_runs(store, good, worse, n_boot=500)
    delta = comparison.get(SOOTHING)
    # 5 conversations; the share of turns ≥ 4 falls from 100% (score 5) to 25–33% (score 2), or 50% (3) for the
    # 4-turn human-requested.
    assert delta.n_paired == 5 and delta.mean_a == 5 and delta.mean_b == pytest.approx(2.2)
    assert delta.delta == pytest.approx(-2.8)
    assert delta.direction == "worse" and delta.n_worse == 5
    assert {c.sample_id for c in comparison.worse[SOOTHING]} == {
        "refund-apology-every-turn", "delay-escalated", "delay-no-handover", "delay-soothed-once", "human-requested"}
    assert comparison.get("closing").delta == 0                       # checks and a fixed judge score: unchanged
    # Each worse conversation says where it now fails first, and shows that turn instead of the last reply.
    soothed = next(c for c in comparison.worse[SOOTHING] if c.sample_id == "delay-soothed-once")
    assert (soothed.first_failing_turn_a, soothed.first_failing_turn_b) == (None, 4)
    assert soothed.answer_b.startswith("[4] 如果明天仍未送达") and "请问还有什么可以帮您" in soothed.answer_a
    assert "delay-soothed-once: 5 → 2  [First failing turn – → 4]" in format_comparison(comparison, "en")
    assert '2<span class="note"> @4</span>' in render_compare_html(comparison, "en")
    check = f"{SOOTHING} mean>=4"
    assert evaluate_gate(store, good, [check]).passed
    failed = evaluate_gate(store, worse, [check, "closing mean>=3"])
    assert not failed.passed and [c.passed for c in failed.checks] == [False, True]
    assert failed.checks[0].actual == pytest.approx(2.2)
    regression = evaluate_gate(store, worse, [f"{SOOTHING} regression>=-0.5"], baseline=good)
    assert not regression.passed and regression.checks[0].actual == pytest.approx(-2.8)
