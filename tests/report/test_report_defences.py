"""Reports count suspected manipulation per defence (issue 31): patterns, perplexity, llm_screen — the same from the
SQL summary (report/source.py) as from the in-memory one, and said in the scorer's note."""
from __future__ import annotations

from rubriceval.report.aggregate import summarize
from rubriceval.report.source import RunSource
from rubriceval.store.runs import RunStore
from tests.report.test_report import PROCESS, add_run, build_verdicts


def _flag(*defences: str) -> dict:
    findings = [{"kind": "odd_tokens" if d == "perplexity" else "score_request", "span": "x", "start": 0, "end": 1,
                 "defence": d} for d in defences]
    return {"suspected_manipulation": {"action": "cap", "findings": findings, "judge_score": 5}}


def test_flagged_rows_are_counted_per_defence(store_target):
    store = RunStore(store_target)
    verdicts = build_verdicts()
    process = [i for i, v in enumerate(verdicts) if v.scorer == PROCESS.id]
    for index, defences in zip(process, [("patterns",), ("llm_screen",), ("perplexity", "patterns")]):
        verdicts[index] = verdicts[index].model_copy(update={"details": _flag(*defences)})
    # A verdict stored before findings named their defence counts as the patterns'
    legacy = _flag("patterns")
    del legacy["suspected_manipulation"]["findings"][0]["defence"]
    verdicts[process[3]] = verdicts[process[3]].model_copy(update={"details": legacy})
    add_run(store, "flagged", verdicts)
    expected = summarize(store.verdicts("flagged"), store.scorers("flagged"), samples=store.samples("flagged"))
    got = RunSource(store, "flagged").summary()
    assert got == expected
    scorer = got.get(PROCESS.id)
    assert scorer.n_suspected_manipulation == 4
    assert scorer.suspected_by_defence == {"llm_screen": 1, "patterns": 3, "perplexity": 1}
    assert any("found by llm_screen 1, patterns 3, perplexity 1" in note for note in scorer.notes)
