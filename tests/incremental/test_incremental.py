"""Incremental runs over a growing source: the second increment over the grown source judges only the new
conversations, a re-run judges nothing, an open conversation waits for the next increment, a changed conversation
is judged again, an increment killed while judging is resumed by the next, trends read the increments' periods,
and bad input names file, line and field."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from rubriceval import RunStore
from rubriceval.cli import main
from rubriceval.common.errors import DatasetError, RubricEvalError
from rubriceval.incremental.increment import parse_duration, run_increment
from rubriceval.judge.config import load_judge_config
from rubriceval.trend.series import compute_trend
from tests.qa_week_data import APOLOGY, conversation, write_jsonl

DAY1 = datetime(2026, 11, 16, 1, tzinfo=timezone.utc)


def _day(start: datetime, prefix: str, n: int, good: bool = True) -> list[dict]:
    return [conversation(f"{prefix}-{i}", agent=f"a{i % 2}", group="售后", start=start + timedelta(minutes=10 * i),
                         good=good) for i in range(n)]


def increment(source: Path, store: RunStore, now: datetime, **kw):
    return run_increment(source, [APOLOGY], [], store=store, judge_config=load_judge_config(), now=now, **kw)


def test_a_folder_grows_by_a_day_and_only_the_new_day_is_judged(tmp_path, store_target):
    folder = tmp_path / "exports"
    folder.mkdir()
    write_jsonl(folder / "2026-11-16.jsonl", _day(DAY1, "d1", 10))
    store = RunStore(store_target)
    first = increment(folder, store, DAY1 + timedelta(days=1))
    assert (first.n_new, first.n_unchanged, first.n_waiting) == (10, 0, 0)
    assert store.run_info(first.run_id).n_verdicts == 10
    again = increment(folder, store, DAY1 + timedelta(days=1))            # idempotent: nothing judged
    assert again.run_id is None and again.files_skipped == 1 and again.n_read == 0
    write_jsonl(folder / "2026-11-17.jsonl", _day(DAY1 + timedelta(days=1), "d2", 4, good=False))
    second = increment(folder, store, DAY1 + timedelta(days=2))
    assert (second.n_new, second.n_read, second.files_skipped) == (4, 4, 1)  # the first day's file is not opened
    assert store.run_info(second.run_id).n_samples == 4 and store.run_info(second.run_id).n_verdicts == 4
    assert second.period_start == first.period_end
    trend = compute_trend(store, n_boot=0)                                  # increments are trend periods
    assert trend.periods == [first.period_end[:16] + "Z", second.period_end[:16] + "Z"]
    assert [r.mean for r in trend.rows] == [5.0, 1.0]


def test_an_appended_file_is_read_from_where_it_stopped_and_changes_are_judged_again(tmp_path):
    source = write_jsonl(tmp_path / "live.jsonl", _day(DAY1, "c", 5))
    store = RunStore(tmp_path / "runs.sqlite")
    assert increment(source, store, DAY1 + timedelta(days=1)).n_new == 5
    grown = conversation("c-2", agent="a0", group="售后", start=DAY1 + timedelta(minutes=20), good=False, turns=3)
    write_jsonl(source, [grown, *_day(DAY1 + timedelta(hours=2), "n", 2)], mode="a")
    with source.open("ab") as fh:
        fh.write(b'{"id": "half-written", "messages": [')                 # no newline yet: left for later
    second = increment(source, store, DAY1 + timedelta(days=1))
    assert (second.n_read, second.n_new, second.n_changed) == (3, 2, 1)
    judged = {s.id: s for s in store.samples(second.run_id)}
    assert set(judged) == {"c-2", "n-0", "n-1"} and len(judged["c-2"].conversation.turns) == 6
    assert increment(source, store, DAY1 + timedelta(days=1)).run_id is None


def test_an_open_conversation_waits_for_the_next_increment(tmp_path):
    now = DAY1 + timedelta(hours=3)
    records = _day(DAY1, "closed", 3) + [conversation("open", agent="a1", group="售后", start=now - timedelta(minutes=12),
                                                      good=True)]
    source = write_jsonl(tmp_path / "live.jsonl", records)
    store = RunStore(tmp_path / "runs.sqlite")
    first = increment(source, store, now, idle_timeout="30m")
    assert (first.n_new, first.n_waiting) == (3, 1)
    assert "open" not in {s.id for s in store.samples(first.run_id)}
    still = increment(source, store, now + timedelta(minutes=5), idle_timeout="30m")
    assert still.run_id is None and still.n_waiting == 1
    later = increment(source, store, now + timedelta(hours=1), idle_timeout="30m")
    assert later.n_new == 1 and [s.id for s in store.samples(later.run_id)] == ["open"]


def test_an_increment_killed_while_judging_is_resumed_by_the_next(tmp_path, monkeypatch):
    import rubriceval.run.evaluate as evaluate_module

    source = write_jsonl(tmp_path / "live.jsonl", _day(DAY1, "c", 6))
    store = RunStore(tmp_path / "runs.sqlite")
    real = evaluate_module.execute

    async def killed(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(evaluate_module, "execute", killed)
    with pytest.raises(KeyboardInterrupt):
        increment(source, store, DAY1 + timedelta(days=1))
    [run] = store.list_runs()
    assert run.status == "interrupted" and run.n_verdicts == 0
    monkeypatch.setattr(evaluate_module, "execute", real)
    nxt = increment(source, store, DAY1 + timedelta(days=1))
    assert nxt.resumed == [run.name] and nxt.run_id is None and nxt.files_skipped == 1   # not selected twice
    assert store.run_info(run.run_id).n_verdicts == 6 and store.run_info(run.run_id).status == "complete"


def test_bad_input_names_file_line_and_field(tmp_path):
    source = tmp_path / "live.jsonl"
    record = _day(DAY1, "c", 1)[0]
    del record["id"]
    write_jsonl(source, _day(DAY1, "ok", 1) + [record])
    with pytest.raises(DatasetError, match=r"live.jsonl:2 \[id\]: a growing source needs an id"):
        increment(source, RunStore(tmp_path / "runs.sqlite"), DAY1 + timedelta(days=1))
    bad_time = _day(DAY1, "t", 1)[0]
    bad_time["metadata"]["ended_at"] = "yesterday-ish"
    write_jsonl(source, [bad_time])
    with pytest.raises(RubricEvalError, match=r"\[sample t-0: metadata.ended_at\].*not a date-time"):
        increment(source, RunStore(tmp_path / "other.sqlite"), DAY1 + timedelta(days=1))
    with pytest.raises(RubricEvalError, match=r"\[idle-timeout\]"):
        parse_duration("soon")
    assert parse_duration("2h") == 7200 and parse_duration(30) == 1800


def test_increment_command(tmp_path, capsys):
    rubric = tmp_path / "apology.yaml"
    rubric.write_text(yaml.safe_dump(APOLOGY.model_dump(mode="json", exclude_defaults=True), allow_unicode=True),
                      encoding="utf-8")
    source = write_jsonl(tmp_path / "live.jsonl", _day(DAY1, "c", 3))
    args = ["increment", str(source), "--rubrics", str(rubric), "--store", str(tmp_path / "r.sqlite"), "--now",
            "2026-11-17T00:00:00Z", "--quiet"]
    assert main(args) == 0
    assert "3 new, 0 changed judged" in capsys.readouterr().out
    assert main(args) == 0
    assert "nothing new to judge" in capsys.readouterr().out
