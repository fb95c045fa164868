"""The review queue's SQL: rubric verdicts of a run with their audits, filtered and ordered by a QueueFilter.

One text for SQLite and PostgreSQL (JSON through the store's Dialect). The order is total and the same on both:
NULLs placed explicitly (SQLite sorts them first, PostgreSQL last), ties broken by dataset position then scorer id
compared byte-wise (PostgreSQL's collation could otherwise order text differently from SQLite's).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, overload

from rubriceval.scoring.consensus import CONSENSUS_KEYS
from rubriceval.scoring.score_probs import TIE_KEY
from rubriceval.store.audit_models import QueueFilter, QueueRow
from rubriceval.store.db import Dialect

_STATUS_SQL = {
    "all": None,
    "unscored": "v.score IS NULL",
    "unaudited": "a.n_audits IS NULL",
    "unaudited_by_me": "a.my_score IS NULL",
    "disagreement": "a.hmin IS NOT NULL AND v.score IS NOT NULL AND (a.hmin != v.score OR a.hmax != v.score)",
    # issue 44: verdicts waiting for review under their rubric's auto_accept target (core/pending_review.py), not
    # audited yet: an audit settles them
    "pending_review": "instr(v.details_json, '\"pending_review\"') > 0 AND a.n_audits IS NULL",
}
_ORDER_SQL = {
    # Unscored verdicts have no score to sort by; they go last here and have their own filter.
    "judge_asc": "score IS NULL, score, position, {scorer}",
    "judge_desc": "score IS NULL, score DESC, position, {scorer}",
    "dataset": "position, {scorer}",
    "gap_desc": "gap IS NULL, gap DESC, score IS NULL, score, position, {scorer}",
    # The judges' own doubt: first the rows their judgements disagree on (spread ≥ 2 or a pass/fail split), then by
    # spread (max − min of the n judgements: self-consistency's samples or the panel's judges). Judged-once last.
    "uncertain_first": "disputed DESC, spread IS NULL, spread DESC, score IS NULL, score, position, {scorer}",
}
# Several judgements of one row (rubriceval/scoring/consensus.py) are stored under one of these details keys; a
# temperature-0 tie (rubriceval/scoring/score_probs.py: the two likeliest levels nearly equally likely) is the one
# judgement's own doubt, said with the same fields.
_CONSENSUS_KEYS = (*CONSENSUS_KEYS, TIE_KEY)


class QueueSQL(NamedTuple):
    rows: str                    # every matching row, in queue order (add LIMIT/OFFSET for a page)
    counted: str                 # the same with the number of matching rows in column `total` (the first page)
    params: dict[str, Any]


def _consensus(dialect: Dialect, name: str, number: bool) -> str:
    read = dialect.json_number if number else dialect.json_text
    return "COALESCE(" + ", ".join(read("v.details_json", f"$.{key}.{name}") for key in _CONSENSUS_KEYS) + ")"


def queue_query(dialect: Dialect, run_id: str, flt: QueueFilter, only: tuple[str, str] | None = None) -> QueueSQL:
    """The queue's SQL with named parameters; only=(sample id, scorer) selects just that row, ignoring the filter."""
    where = ["v.run_id = :run", "v.kind = 'rubric'"]
    params: dict[str, Any] = {"run": run_id, "me": flt.expert}
    if only is not None:
        where += ["v.sample_id = :only_sample", "v.scorer = :only_scorer"]
        params.update(only_sample=only[0], only_scorer=only[1])
        flt = QueueFilter(expert=flt.expert)
    if flt.scorer:
        where.append("v.scorer = :scorer")
        params["scorer"] = flt.scorer
    if flt.intent:
        where.append(f"{dialect.json_text('s.sample_json', '$.intent')} = :intent")
        params["intent"] = flt.intent
    if flt.tag:
        where.append(f"EXISTS (SELECT 1 FROM {dialect.json_items('s.sample_json', 't', '$.tags')} "
                     "WHERE t.value = :tag)")
        params["tag"] = flt.tag
    if flt.score_min is not None:
        where.append("v.score >= :smin")
        params["smin"] = flt.score_min
    if flt.score_max is not None:
        where.append("v.score <= :smax")
        params["smax"] = flt.score_max
    if status_sql := _STATUS_SQL[flt.status]:
        where.append(status_sql)
    audits = ("WITH a AS (SELECT sample_id, scorer, COUNT(*) AS n_audits, "
              "  MAX(CASE WHEN expert = :me THEN score END) AS my_score, MIN(score) AS hmin, MAX(score) AS hmax "
              "  FROM audit_responses WHERE run_id = :run GROUP BY sample_id, scorer) ")
    source = ("FROM verdicts v JOIN run_samples s ON s.run_id = v.run_id AND s.sample_id = v.sample_id "
              "LEFT JOIN a ON a.sample_id = v.sample_id AND a.scorer = v.scorer "
              f"WHERE {' AND '.join(where)}")
    # The sample's text is not read here (parsing every JSON row is the slow part): `with_text` adds it per page,
    # and the experts' scores ("alice=4, bob=3") are added per page too, in a fixed order on both engines.
    disputed = f"CAST({_consensus(dialect, 'disagreement', False)} AS TEXT)"
    columns = ("v.sample_id, v.scorer, v.score, v.unscored_kind, s.position, "
               f"{_consensus(dialect, 'spread', True)} AS spread, "
               f"CASE WHEN {disputed} IN ('true', '1') THEN 1 ELSE 0 END AS disputed, "
               "COALESCE(a.n_audits, 0) AS n_audits, a.my_score, "
               "CASE WHEN v.score IS NULL OR a.hmin IS NULL THEN NULL "
               "     WHEN ABS(a.hmin - v.score) >= ABS(a.hmax - v.score) THEN ABS(a.hmin - v.score) "
               "     ELSE ABS(a.hmax - v.score) END AS gap")
    order = _ORDER_SQL[flt.order].format(scorer=dialect.byte_order("scorer"))
    # The first page and the count in one pass (a window count): a separate COUNT(*) joined every row a second
    # time (100,000 rows: 30-45 % of opening the queue on PostgreSQL, up to 40 % on SQLite).
    return QueueSQL(rows=f"{audits}SELECT * FROM (SELECT {columns} {source}) q ORDER BY {order}",
                    counted=f"{audits}SELECT * FROM (SELECT {columns}, COUNT(*) OVER () AS total {source}) q "
                            f"ORDER BY {order}", params=params)


def human_text(scores: list[tuple[str, int]]) -> str:
    """The experts' scores of one row as the queue shows them: "alice=4, bob=3" (by expert name, byte-wise)."""
    return ", ".join(f"{expert}={score}" for expert, score in sorted(scores, key=lambda p: p[0].encode()))


def queue_row(r: Any, human: str = "") -> QueueRow:
    return QueueRow(sample_id=r["sample_id"], scorer=r["scorer"], position=r["position"], judge_score=r["score"],
                    unscored_kind=r["unscored_kind"], question="", intent="", n_audits=r["n_audits"],
                    human_scores=human, my_score=r["my_score"], gap=r["gap"], spread=r["spread"],
                    disputed=bool(r["disputed"]))


class QueueRows(Sequence[QueueRow]):
    """The review queue as a sequence read from the store a page at a time: its length comes with the first page
    (a window count), rows come by LIMIT/OFFSET in the queue's (total) order, the last pages read are kept, and a row
    replaced after a save stays
    replaced. Opening the queue of a million-row run reads one page, not every row."""

    PAGE_SIZE = 500

    def __init__(self, fetch: Callable[[int, int], list[QueueRow]], count: int, page_size: int = PAGE_SIZE,
                 pages_kept: int = 8, *, first_page: list[QueueRow] | None = None):
        self._fetch, self._count, self._page_size, self._pages_kept = fetch, count, page_size, pages_kept
        self._pages: dict[int, list[QueueRow]] = {}
        self._replaced: dict[int, QueueRow] = {}
        if first_page is not None:
            self._pages[0] = first_page            # read with the count, in one query
        elif count:
            self._page(0)      # read now: a queue of one page is complete even after its store is closed

    def __len__(self) -> int:
        return self._count

    def _page(self, number: int) -> list[QueueRow]:
        if number not in self._pages:
            if len(self._pages) >= self._pages_kept:
                self._pages.pop(next(iter(self._pages)))
            self._pages[number] = self._fetch(number * self._page_size, self._page_size)
        return self._pages[number]

    def _row(self, index: int) -> QueueRow:
        if index in self._replaced:
            return self._replaced[index]
        return self._page(index // self._page_size)[index % self._page_size]

    @overload
    def __getitem__(self, index: int) -> QueueRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[QueueRow]: ...

    def __getitem__(self, index: int | slice) -> QueueRow | list[QueueRow]:
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("queue index out of range")
        return self._row(index)

    def __setitem__(self, index: int, row: QueueRow) -> None:
        self[index]                                  # range check
        self._replaced[index % self._count] = row

    def __iter__(self) -> Iterator[QueueRow]:
        for index in range(self._count):
            yield self._row(index)
