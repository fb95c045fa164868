"""`rubriceval trust RUN` says, for each rubric with an auto_accept target, what the run accepted automatically, what
waits for review and why (issue 44), as `scorecard trust` does for cards."""
from __future__ import annotations

from rubriceval.cli import main
from rubriceval.store.runs import RunStore
from tests.trust.test_rubric_selective import N, week


def test_trust_prints_a_rubrics_acceptance(tmp_path, capsys):
    runs = RunStore(tmp_path / "runs.sqlite")
    try:
        week(runs, "w1")
    finally:
        runs.close()
    capsys.readouterr()
    assert main(["trust", "w1", "--store", str(tmp_path / "runs.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "Rubric 语气: target agreement ≥ 90% at 95% confidence, judge small-judge" in out
    assert "cannot accept anything yet: 0 reviews (at least 29, all agreeing, are needed)" in out
    row = next(line for line in out.splitlines() if line.startswith("语气 (tone)"))
    assert row.split()[2:8] == ["none", "0.0%", "—", "0", str(N), "0"]
