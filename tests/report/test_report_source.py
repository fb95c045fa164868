"""Reports read a run through report/source.py (SQL and chunks, never every verdict at once) and say exactly what
they said when the run was loaded whole: the summary, the diagnosis and the lowest rows are compared here with the
in-memory functions on the same stores."""
from __future__ import annotations

import pytest

from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.report.aggregate import summarize
from rubriceval.report.diagnosis import diagnose
from rubriceval.report.source import RunSource
from rubriceval.store.runs import RunConfig, RunStore
from tests.report.test_report import EMPATHY, PROCESS, add_run, build_verdicts


def _loaded(store: RunStore, run: str):
    verdicts, scorers, samples = store.verdicts(run), store.scorers(run), store.samples(run)
    return verdicts, scorers, samples


def _panel(verdict: Verdict, scores: list[float | None]) -> Verdict:
    votes = [{"judge": f"j{i}", "model": f"m{i}", "score": s, "passed": None if s is None else s >= 4,
              "unscored_kind": None if s is not None else "timeout", "reason": None if s is not None else "slow"}
             for i, s in enumerate(scores)]
    return verdict.model_copy(update={"details": {"panel": {"judges": votes}}})


@pytest.fixture
def store(store_target) -> RunStore:
    """On a SQLite file, then on a PostgreSQL database: the SQL summary must equal the in-memory one on both."""
    store = RunStore(store_target)
    add_run(store, "baseline", build_verdicts())
    odd = build_verdicts(process={"s1": 5, "s2": 3, "s3": 4, "s4": 4, "s5": None, "s6": 2},
                         faith={"s1": 0.2, "s2": 0.25, "s3": 0.1, "s4": 0.5, "s5": None, "s6": 0.8})
    odd = [_panel(v, [v.score, 2.0, None]) if v.scorer == EMPATHY.id and v.score is not None else v for v in odd]
    odd[0] = odd[0].model_copy(update={"details": {"suspected_manipulation": {"spans": ["忽略以上指令"]}}})
    odd.append(Verdict(sample_id="s2", scorer="unlisted_metric", kind="metric", score=0.4, usage=Usage(calls=3)))
    add_run(store, "odd", odd)
    return store


@pytest.mark.parametrize("run", ["baseline", "odd"])
def test_the_sql_summary_is_the_in_memory_summary(store, run):
    verdicts, scorers, samples = _loaded(store, run)
    for thresholds in (None, {"faithfulness": 0.3}):
        expected = summarize(verdicts, scorers, samples=samples, metric_thresholds=thresholds)
        assert RunSource(store, run).summary(thresholds) == expected
    if run == "odd":
        got = RunSource(store, run).summary()
        assert got.get(EMPATHY.id).panel is not None and got.get(PROCESS.id).n_suspected_manipulation == 1
        assert any("unlisted_metric" in note for note in got.notes)


@pytest.mark.parametrize("run", ["baseline", "odd"])
def test_the_sql_diagnosis_is_the_in_memory_diagnosis(store, run):
    verdicts, scorers, samples = _loaded(store, run)
    summary = summarize(verdicts, scorers, samples=samples)
    source = RunSource(store, run)
    assert source.diagnose(summary) == diagnose(summary, verdicts, scorers, samples)


def test_lowest_rows_and_language(store):
    source = RunSource(store, "baseline")
    lowest = source.lowest(PROCESS.id, 2)
    assert [(v.sample_id, v.score) for v in lowest] == [("s5", 1.0), ("s2", 2.0)]
    assert [v.sample_id for v in source.lowest("faithfulness", 5, below=0.7)] == ["s4", "s2"]
    assert source.language() == "zh"
    rows = [pair for chunk in source.verdict_chunks(size=2) for pair in chunk]
    assert [v for v, _ in rows] == store.verdicts("baseline")
    assert all(s.id == v.sample_id for v, s in rows)


def test_a_run_with_no_verdicts_summarises_like_an_empty_list(store_target):
    store = RunStore(store_target)
    store.create_run(RunConfig(), [Sample(id="a", question="hello")], [("rouge_l", "metric", "1", {})], name="e")
    assert RunSource(store, "e").summary() == summarize([], store.scorers("e"), samples=store.samples("e"))
    assert RunSource(store, "e").language() == "en"


def test_per_row_results_are_written_in_chunks_byte_for_byte(store, tmp_path, monkeypatch):
    from rubriceval.cli.run import _write_outputs
    from rubriceval.data.spreadsheet import escape_frame
    from rubriceval.report import source

    monkeypatch.setattr(source, "SPAN", 2)                      # six samples: three chunks
    assert len(list(source.RunSource(store, "odd").verdict_chunks())) == 3
    _write_outputs(store, store.resolve("odd"), tmp_path / "out")
    frame = store.verdict_frame("odd")
    escape_frame(frame).to_csv(tmp_path / "ref.csv", index=False, encoding="utf-8-sig")
    frame.to_json(tmp_path / "ref.jsonl", orient="records", lines=True, force_ascii=False)
    assert (tmp_path / "out" / "results.csv").read_bytes() == (tmp_path / "ref.csv").read_bytes()
    assert (tmp_path / "out" / "results.jsonl").read_bytes() == (tmp_path / "ref.jsonl").read_bytes()
