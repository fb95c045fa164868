"""Trends across runs of different conversations: a known drop is flagged beyond noise and fails the drop gate, a
week without a drop is not; periods as runs or as week buckets of one store (a conversation counted once); CIs
(bootstrap for the mean, Wilson for the pass rate); HTML line chart and Excel sheet; the statistics themselves."""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import openpyxl
import pytest

from rubriceval import RunStore, evaluate
from rubriceval.cli import main
from rubriceval.common.errors import RubricEvalError
from rubriceval.data.segment_spec import parse_by
from rubriceval.report.gate import evaluate_gate
from rubriceval.stats.unpaired import mean_difference, wilson_interval
from rubriceval.trend.series import compute_trend
from tests.qa_week_data import APOLOGY, conversation, write_jsonl

W46 = datetime(2026, 11, 9, 3, tzinfo=timezone.utc)


def _week(start: datetime, prefix: str, share_good: float, n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [conversation(f"{prefix}-{i}", agent=f"a{i % 2}", group="售后", start=start + timedelta(hours=i),
                         good=rng.random() < share_good) for i in range(n)]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("trend")
    path = folder / "runs.sqlite"
    names = []
    # W46 and W47 alike (90 % apologise), W48 drops to 30 %
    for week, (share, seed) in enumerate([(0.9, 1), (0.9, 2), (0.3, 3)]):
        data = write_jsonl(folder / f"w{46 + week}.jsonl", _week(W46 + timedelta(weeks=week), f"w{46 + week}", share,
                                                                 60, seed))
        names.append(evaluate(str(data), rubrics=[APOLOGY], store=path, progress=False, name=f"w{46 + week}").run_id)
    return path, names


def test_a_known_drop_is_beyond_noise_and_a_steady_week_is_not(store):
    path, runs = store
    trend = compute_trend(RunStore(path), runs, n_boot=500)
    assert trend.periods == ["w46", "w47", "w48"]
    first, steady, dropped = trend.rows
    assert first.change is None
    assert steady.change.beyond_noise() is False and steady.change.p_value > 0.05
    assert dropped.change.beyond_noise() is True and dropped.change.p_value < 0.01
    assert dropped.change.delta == pytest.approx(dropped.mean - steady.mean)
    assert dropped.mean_low < dropped.mean < dropped.mean_high
    assert dropped.pass_low < dropped.pass_rate < dropped.pass_high
    assert steady.change.test.startswith("permutation")


def test_drop_gate_fails_on_the_drop_and_passes_without_it(store):
    path, runs = store
    s = RunStore(path)
    dropped = evaluate_gate(s, runs[2], ["trend:apology mean drop<=0.5"]).checks[0]
    assert not dropped.passed and "w47 → w48" in dropped.reason and "fails <= 0.5" in dropped.reason
    assert "beyond noise" in dropped.reason
    steady = evaluate_gate(s, runs[1], ["trend:apology mean drop<=0.5"]).checks[0]   # periods up to the gated run
    assert steady.passed and "w46 → w47" in steady.reason and "within noise" in steady.reason, steady.reason
    per_agent = evaluate_gate(s, runs[2], ["trend:apology pass_rate drop<=0.2 by agent_id"]).checks[0]
    assert not per_agent.passed and "a0:" in per_agent.reason and "a1:" in per_agent.reason
    assert main(["gate", runs[2], "--store", str(path), "--check", "trend:apology mean drop<=0.3"]) == 1
    assert main(["gate", runs[2], "--store", str(path), "--check", "trend:apology mean drop<=3"]) == 0


def test_week_buckets_of_the_store_count_a_conversation_once(store, tmp_path):
    path, runs = store
    by_week = compute_trend(RunStore(path), period="week", n_boot=0)
    assert by_week.periods == ["2026-W46", "2026-W47", "2026-W48"]
    assert [r.n_samples for r in by_week.rows] == [60, 60, 60]
    by_agent = compute_trend(RunStore(path), period="week", by=parse_by("agent_id")[0], n_boot=0)
    assert {(r.segment["agent_id"], r.period) for r in by_agent.rows} == {
        (a, w) for a in ("a0", "a1") for w in by_week.periods}


def test_trend_cli_writes_html_line_chart_and_excel_sheet(store, capsys):
    path, runs = store
    out = path.parent / "trend-out"
    assert main(["trend", *runs, "--store", str(path), "--by", "agent_id", "--statistic", "pass_rate",
                 "--out", str(out), "--lang", "en"]) == 0      # the data is Chinese: English asked for
    printed = capsys.readouterr().out
    assert "w48" in printed and "Beyond noise" in printed
    html = (out / "trend.html").read_text(encoding="utf-8")
    assert html.count("<polyline") == 2 and "<svg" in html           # one line per agent
    rows = list(openpyxl.load_workbook(out / "trend.xlsx", read_only=True)["trend"].iter_rows(values_only=True))
    assert len(rows) == 1 + 2 * 3 and rows[0][0] == "Scorer"


def test_trend_errors_name_the_field():
    with pytest.raises(RubricEvalError, match=r"\[period\]"):
        compute_trend(RunStore(":memory:"), period="fortnight")


def test_wilson_interval_and_unpaired_test():
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and 0.15 < high < 0.18                 # the Wilson bound, where the normal one would say 0
    assert wilson_interval(0, 0) == (None, None)
    same = mean_difference([4, 5, 4, 5] * 10, [5, 4, 5, 4] * 10)
    assert same.delta == 0 and same.p_value == 1.0
    assert mean_difference([], [1.0]).p_value is None
    big = mean_difference([4.0, 5.0] * 3000, [3.0, 4.0] * 3000)          # over 5,000 rows: Welch
    assert big.test == "Welch t" and big.p_value < 1e-9
