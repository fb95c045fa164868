"""A comparison lists at most compare_source.LISTED rows of each kind (the worst drops first) and counts them all,
so comparing two million-row runs does not hold every changed row."""
from __future__ import annotations

import pytest

from rubriceval import compare_runs
from rubriceval.report import compare_source
from rubriceval.report.compare import format_comparison, render_compare_html
from tests.report.test_compare_gate import build_compare_store, store  # noqa: F401  (the baseline/candidate store fixture)


def test_lists_are_capped_and_counted(store, monkeypatch):     # noqa: F811
    full = compare_runs(store, "baseline", "candidate")
    monkeypatch.setattr(compare_source, "LISTED", 1)
    capped = compare_runs(store, "baseline", "candidate")
    for scorer, changes in full.worse.items():
        assert capped.worse[scorer] == changes[:1]                       # the worst first, as the full list
        assert capped.worse_total[scorer] == len(changes)
    assert capped.seesaw_total == len(full.seesaw_samples) == 3 and len(capped.seesaw_samples) == 1
    assert capped.seesaw_samples[0] == full.seesaw_samples[0]
    assert [d.model_dump() for d in capped.deltas] == [d.model_dump() for d in full.deltas]   # counts, CIs: all rows
    text = format_comparison(capped, lang="en")
    assert f"({len(full.worse['context_recall'])})" in text and "(3)" in text
    assert f"({len(full.worse['context_recall'])})" in render_compare_html(capped, "en")


def test_runs_from_two_stores_are_refused(store, tmp_path):    # noqa: F811
    from rubriceval.report.compare import compare_data
    from rubriceval.report.run_data import load_run
    from rubriceval.store.runs import RunStore
    from tests.report.test_report import add_run, build_verdicts

    other = RunStore(tmp_path / "other.sqlite")
    add_run(other, "elsewhere", build_verdicts())
    with pytest.raises(ValueError, match="one run store"):
        compare_data(load_run(store, "baseline"), load_run(other, "elsewhere"))


def test_postgresql_compares_and_gates_exactly_as_sqlite(store, postgres_url, tmp_path):    # noqa: F811
    """The same two runs in a PostgreSQL store: the comparison (deltas, CIs, capped lists, seesaw) and the gate
    verdict are those of the SQLite store, field for field."""
    from rubriceval.report.gate import evaluate_gate
    from rubriceval.store.runs import RunStore

    server = build_compare_store(RunStore(postgres_url))
    on_sqlite = compare_runs(store, "baseline", "candidate").model_dump()
    on_server = compare_runs(server, "baseline", "candidate").model_dump()
    for run in ("run_a_id", "run_b_id"):                # run ids are random per store
        on_sqlite.pop(run), on_server.pop(run)
    assert on_server == on_sqlite
    checks = ["流程合规 mean>=3.5", "faithfulness unscored_rate<=0.2"]
    gate_sqlite = evaluate_gate(store, "candidate", checks, baseline="baseline").model_dump(exclude={"run_id"})
    gate_server = evaluate_gate(server, "candidate", checks, baseline="baseline").model_dump(exclude={"run_id"})
    assert gate_server == gate_sqlite and gate_server["checks"]
