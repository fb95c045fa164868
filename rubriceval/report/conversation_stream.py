"""The report's conversation sections over a stored run, streamed: a first pass counts where each rubric fails
(PositionTally: counters only) a span of conversations at a time, then every reader of the rows (the HTML table,
the workbook sheet, the Markdown list's top rows) walks them again a span at a time. At most one span of
conversations (report/source.py SPAN dataset positions) is in memory, whatever the size of the run."""
from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.report.conversations import ConversationRow, PositionCounts, PositionTally, conversation_rows

Chunks = Callable[[], Iterable[tuple[list[Sample], list[Verdict]]]]


class ConversationSections:
    """What ConversationReport holds (rubrics, positions, empty; rows as a fresh iterator each time), read from
    `chunks()` — a callable that walks the run's conversations again on every call."""

    def __init__(self, chunks: Chunks, rubric_order: Sequence[str] = ()):
        self._chunks = chunks
        tally = PositionTally()
        for samples, verdicts in chunks():
            tally.add(samples, verdicts)
        self.n_conversations = tally.n_conversations
        self.rubrics: list[str] = tally.rubrics(rubric_order)
        self.positions: list[PositionCounts] = tally.ordered(self.rubrics)

    @property
    def empty(self) -> bool:
        return not self.n_conversations

    def rows_with_samples(self) -> Iterator[tuple[ConversationRow, Sample]]:
        for samples, verdicts in self._chunks():
            yield from conversation_rows(samples, verdicts, self.rubrics)

    @property
    def rows(self) -> Iterator[ConversationRow]:
        return (row for row, _ in self.rows_with_samples())

def fails(row: ConversationRow) -> bool:
    return bool(row.first_failing_turn is not None or row.failing_checks
                or any(c.passed is False or c.score is None for c in row.rubrics.values()))


def top_failing(rows: Iterable[ConversationRow], limit: int) -> tuple[list[ConversationRow], int]:
    """The `limit` failing rows first by (first failing turn, id), and the number of failing rows."""
    n = 0

    def failing() -> Iterator[ConversationRow]:
        nonlocal n
        for row in rows:
            if fails(row):
                n += 1
                yield row
    kept = heapq.nsmallest(limit, failing(), key=lambda r: (r.first_failing_turn or 1 << 30, r.conversation_id))
    return kept, n
