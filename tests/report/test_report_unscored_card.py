"""A scorer's card in the HTML report names its samples even when none was scored (issue 32.10): the lowest
scored rows when there are some, else the unscored rows' sample ids beside their reasons."""
from __future__ import annotations

from rubriceval import Sample
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.report.html import render_html_report
from rubriceval.report.run_data import load_run
from rubriceval.store.runs import RunConfig, RunStore


def test_an_all_unscored_metric_card_lists_its_samples(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    samples = [Sample(id=f"q{i}", question=f"问题{i}", answer=f"回答{i}", contexts=["c"]) for i in range(7)]
    run_id = store.create_run(RunConfig(metrics=["faithfulness"]), samples,
                              [("faithfulness", "metric", "1", {"name": "faithfulness"})], name="r")
    for s in samples:
        store.save_verdict(run_id, Verdict(sample_id=s.id, scorer="faithfulness", kind="metric", scorer_version="1",
                                           unscored_kind="no_statements", unscored_reason="没有可核查的事实陈述",
                                           usage=Usage()), s.input_hash())
    html = render_html_report(load_run(store, run_id), lang="zh")
    assert "no_statements × 7" in html and "q0, q1, q2, q3, q4 …" in html
    store.close()
