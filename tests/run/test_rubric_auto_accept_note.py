"""A rubric's `auto_accept` target is read but not applied to rubric verdicts yet (issue 44 applies targets to
scorecards): a run says so instead of letting the lead believe its verdicts are accepted selectively."""
from __future__ import annotations

from pathlib import Path

from rubriceval import evaluate

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path, judge_config, extra: str) -> None:
    folder = tmp_path / "rubrics"
    folder.mkdir()
    source = (ROOT / "rubrics" / "closing.yaml").read_text(encoding="utf-8")
    (folder / "closing.yaml").write_text(source + extra, encoding="utf-8")
    evaluate(ROOT / "datasets" / "demo_conversations_zh.jsonl", rubrics=folder, judge=judge_config,
             store=tmp_path / "r.sqlite")


def test_a_run_says_a_rubrics_target_is_not_applied(tmp_path, judge_config, capsys):
    _run(tmp_path, judge_config, "\nauto_accept: {agreement: 0.9}\n")
    assert "note: auto_accept on rubric(s) closing is not applied yet (scorecards only)" in capsys.readouterr().err


def test_a_rubric_without_a_target_says_nothing(tmp_path, judge_config, capsys):
    _run(tmp_path, judge_config, "")
    assert "auto_accept" not in capsys.readouterr().err
