"""A rubric's `auto_accept` target is applied to its verdicts (issue 44, trust/rubric_selective.py): before anything
is judged, the run says what the rubric accepts automatically on its judge and why nothing yet; a rubric without a
target says nothing and its verdicts are left as they are."""
from __future__ import annotations

from pathlib import Path

from rubriceval import evaluate
from rubriceval.core.pending_review import PendingReview
from rubriceval.store.runs import RunStore

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path, judge_config, extra: str):
    folder = tmp_path / "rubrics"
    folder.mkdir()
    source = (ROOT / "rubrics" / "closing.yaml").read_text(encoding="utf-8")
    (folder / "closing.yaml").write_text(source + extra, encoding="utf-8")
    return evaluate(ROOT / "datasets" / "demo_conversations_zh.jsonl", rubrics=folder, judge=judge_config,
                    store=tmp_path / "r.sqlite")


def test_a_run_says_why_a_rubric_accepts_nothing_yet(tmp_path, judge_config, capsys):
    result = _run(tmp_path, judge_config, "\nauto_accept: {agreement: 0.9}\n")
    err = capsys.readouterr().err
    assert ("note: rubric closing: auto_accept on judge stub: accepts nothing automatically, every scored verdict "
            "waits for review: cannot accept anything yet: 0 reviews (at least 29, all agreeing, are needed)") in err
    assert "not applied yet" not in err
    runs = RunStore(tmp_path / "r.sqlite")
    try:
        verdicts = runs.verdicts("latest")
        scored = [v for v in verdicts if v.score is not None]
        assert scored and all(PendingReview.read(v.details) is not None for v in scored)
    finally:
        runs.close()
    # the Python API's means leave them out, and count them apart
    assert result.scores["closing"] is None and result.pending_counts == {"closing": len(scored)}


def test_a_rubric_without_a_target_says_nothing(tmp_path, judge_config, capsys):
    result = _run(tmp_path, judge_config, "")
    assert "auto_accept" not in capsys.readouterr().err
    assert result.scores["closing"] is not None and result.pending_counts == {}
    runs = RunStore(tmp_path / "r.sqlite")
    try:
        assert not any(PendingReview.read(v.details) for v in runs.verdicts("latest"))
    finally:
        runs.close()
