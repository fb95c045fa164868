"""The report's conversation sections streamed from a stored run (report/conversation_stream.py): the same
figures, rows and Markdown list as the whole-run computation, with only a span of conversations held at once."""
from __future__ import annotations

import gc

import pytest

from rubriceval import RunStore
from rubriceval.data.sample import Sample
from rubriceval.report.conversation_stream import ConversationSections, top_failing
from rubriceval.report.conversations import conversation_report
from rubriceval.report.run_data import load_run
from tests.helpers.conversation_run import conversation_run

SPAN = 2          # dataset positions per read: several reads even on the demo conversations


def late_turns_poor(conversation_id: str, turn: int) -> int:
    return 2 if turn >= 4 else 4


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("stream") / "runs.sqlite"
    run = conversation_run(path, turn_score=late_turns_poor, conversation_score=lambda cid, rubric: (2, 3))
    store = RunStore(path)
    yield load_run(store, run)
    store.close()


def _whole(data):
    samples, verdicts = data.source.conversation_rows()
    return samples, conversation_report(samples, verdicts, [s.scorer for s in data.summary.rubrics])


def _streamed(data) -> ConversationSections:
    return ConversationSections(lambda: data.source.conversation_chunks(span=SPAN),
                                [s.scorer for s in data.summary.rubrics])


def test_streamed_sections_equal_the_whole_run_computation(data) -> None:
    samples, whole = _whole(data)
    streamed = _streamed(data)
    assert len(samples) > 2 * SPAN                      # more than one read
    assert streamed.n_conversations == len(whole.rows) == len(samples)
    assert streamed.rubrics == whole.rubrics and len(whole.rubrics) >= 2
    assert streamed.positions == whole.positions
    assert sum(sum(p.by_bucket) for p in whole.positions) > 0          # the run fails somewhere
    assert list(streamed.rows) == whole.rows
    assert [s.id for _, s in streamed.rows_with_samples()] == [s.id for s in samples]
    # The Markdown list: the heap's rows are the first rows of the whole sort, and the count is every failing row.
    failing = sorted((r for r in whole.rows if r.first_failing_turn is not None or r.failing_checks
                      or any(c.passed is False or c.score is None for c in r.rubrics.values())),
                     key=lambda r: (r.first_failing_turn or 1 << 30, r.conversation_id))
    assert len(failing) > 3
    assert top_failing(streamed.rows, 3) == (failing[:3], len(failing))
    # The report's own sections (the default span) are the same.
    assert data.conversation_sections.positions == whole.positions
    assert list(data.conversation_sections.rows) == whole.rows


def _conversations_alive() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Sample) and o.conversation is not None)


def test_conversations_held_at_once_are_bounded_by_the_span(data) -> None:
    before = _conversations_alive()
    samples, _ = data.source.conversation_rows()            # the whole-run read holds every conversation
    assert _conversations_alive() - before >= len(samples)
    n = len(samples)
    del samples
    streamed = _streamed(data)
    assert _conversations_alive() - before == 0             # the first pass keeps counters, no conversation
    held = []
    for _ in streamed.rows_with_samples():
        held.append(_conversations_alive() - before)
    assert len(held) == n
    assert 0 < max(held) <= SPAN < n
