"""A stored run as the reports read it, without loading every verdict: aggregates in SQL or one scorer's scores at a
time, the few rows a report shows picked in SQL, and the per-row sheet streamed in chunks.

`RunSource.summary()` gives the same Summary as `aggregate.summarize` over the loaded run (same values, same order
of reasons and notes): scores come in verdict order (dataset position, then rubrics before metrics), so even the
floating-point sums are the same.
"""
from __future__ import annotations

import json
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from rubriceval.audit.official import OfficialScores, with_decision
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample, text_language
from rubriceval.i18n import Lang
from rubriceval.report.aggregate import (
    assemble_summary,
    breakdown_keys,
    group_stats,
    scorer_summary,
    with_unstored_scorers,
)
from rubriceval.report.official_figures import HumanTally, with_machine_figures
from rubriceval.report.run_sql import FROM_RUN
from rubriceval.report.summary_models import GroupDimension, GroupKey, ScorerSummary, Summary
from rubriceval.safety.manipulation_policy import DETAILS_KEY as MANIPULATION_KEY
from rubriceval.safety.manipulation_policy import count_by_defence
from rubriceval.scoring.panel_votes import DETAILS_KEY as PANEL_KEY
from rubriceval.store.db import Database
from rubriceval.store.runs import RunInfo, row_to_verdict

# instr() first: a sample without a conversation is stored without the key (Sample's serializer drops it), so only
# conversations are parsed as JSON (a run of single-turn rows costs one text scan per sample).
_CONVERSATION = "instr(d.sample_json, '\"conversation\"') > 0 AND {kind} = 'object'"
CHUNK = 2000
SPAN = 400          # dataset positions per ordered read: a few thousand verdicts with their samples in memory
ZERO_USAGE = Usage().model_dump_json()
ORDER = "ORDER BY d.position, v.kind DESC, v.scorer"


# The verdict columns the samples sheet shows, in this order (report/excel.py reads them by position).
SHEET_COLUMNS = ("sample_id", "scorer", "kind", "score", "passed", "unscored_kind", "unscored_reason", "feedback",
                 "evidence_json", "usage_json")


class SampleFields(NamedTuple):
    """The fields of a sample the samples sheet shows (names as in Sample and its stored JSON)."""

    question: str
    answer: str
    ground_truth: str
    tags: list[str]
    intent: str


class _Counts(NamedTuple):
    """What the summary's one pass counted for a scorer: its rows, flagged, unscored, paid and panel-candidate rows."""

    n: int = 0
    flagged: int = 0
    unscored: int = 0
    spent: int = 0
    panel: int = 0


class RunSource:
    """machine_only=False: scores are official (the latest human decision, else the judge's); True: the judge's."""

    def __init__(self, store: Any, run: str, *, machine_only: bool = False):
        self.store = store
        self.info: RunInfo = store.run_info(run)
        self.run_id = self.info.run_id
        self.scorers: list[dict[str, Any]] = store.scorers(self.run_id)
        self.n_samples = self.info.n_samples
        self.dataset: str = store.dataset_id(self.run_id)
        # A read-only connection of its own: a report reads while nothing it holds is written.
        self.conn = Database(store.path, read_only=True)
        self.sql = self.conn.sql
        self.machine_only = machine_only
        self.official = OfficialScores.load(self.conn, self.run_id, machine_only=machine_only)

    def close(self) -> None:
        self.conn.close()

    def run_rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """All rows of a read-only query whose first `?` is this run's id (the report's other modules read through it)."""
        return self.conn.execute(sql, (self.run_id, *params)).fetchall()

    def _stream(self, sql: str, params: Sequence[Any] = (), size: int = CHUNK) -> Iterator[list[Any]]:
        """Rows of a query a chunk at a time."""
        yield from self.conn.stream(sql, (self.run_id, *params), size)

    def _in_order(self, columns: str, where: str = "", params: Sequence[Any] = (), span: int | None = None
                  ) -> Iterator[list[Any]]:
        """Verdicts joined to their samples in verdict order, one range of `span` dataset positions at a time: each
        query walks the position index and sorts only its own rows (one ORDER BY over the whole run would sort
        every row, sample text included, in temporary files)."""
        span, dataset = span or SPAN, self.dataset
        end = self.conn.execute("SELECT MAX(position) FROM dataset_samples WHERE dataset_id = ?",
                                (dataset,)).fetchone()[0]
        for low in range(0, (end if end is not None else -1) + 1, span):
            rows = self.conn.execute(
                f"SELECT {columns} FROM dataset_samples d JOIN verdicts v ON v.run_id = ? AND v.sample_id = d.sample_id "
                f"WHERE d.dataset_id = ? AND d.position >= ? AND d.position < ? {where} {ORDER}",
                (self.run_id, dataset, low, low + span, *params)).fetchall()
            if rows:
                yield rows

    # -- the summary ---------------------------------------------------------------------------------------------
    def summary(self, metric_thresholds: Mapping[str, float] | None = None, *, breakdown: bool = True) -> Summary:
        # One pass over the run for every scorer: where its first verdict sits (for scorers without a stored
        # definition), its rows, unscored rows, flagged rows (instr() first: only rows whose details mention the
        # key are parsed as JSON), rows that spent something and rows that may hold a panel's votes — so the
        # per-scorer queries that would find nothing (most scorers have no unscored, panel or paid rows) are skipped.
        seen = self.conn.execute(
            "SELECT v.scorer, MIN(v.kind) AS kind, MIN(v.scorer_version) AS scorer_version, "
            "MIN(d.position * 2 + CASE WHEN v.kind = 'rubric' THEN 0 ELSE 1 END) AS first, COUNT(*) AS n, "
            "SUM(CASE WHEN v.score IS NULL THEN 1 ELSE 0 END) AS unscored, "
            f"SUM(CASE WHEN instr(v.details_json, '\"{MANIPULATION_KEY}\"') > 0 "
            f"AND {self.sql.json_kind('v.details_json', '$.' + MANIPULATION_KEY)} IS NOT NULL THEN 1 ELSE 0 END) "
            "AS flagged, SUM(CASE WHEN v.usage_json <> ? THEN 1 ELSE 0 END) AS spent, "
            f"SUM(CASE WHEN instr(v.details_json, '\"{PANEL_KEY}\"') > 0 THEN 1 ELSE 0 END) AS panel "
            f"{FROM_RUN} GROUP BY v.scorer ORDER BY first, MIN(v.kind) DESC, v.scorer", (ZERO_USAGE, self.run_id)).fetchall()
        counts = {r["scorer"]: _Counts(r["n"], r["flagged"], r["unscored"], r["spent"], r["panel"]) for r in seen}
        scorer_rows, notes = with_unstored_scorers(self.scorers, ((r[0], r[1], r[2]) for r in seen))
        scores, groups, tallies = self._scores(breakdown)
        summaries = {row["scorer"]: self._scorer(row, metric_thresholds, counts.get(row["scorer"], _Counts()),
                                                 scores.get(row["scorer"], array("d")), tallies.get(row["scorer"]))
                     for row in scorer_rows}
        spent = any(c.spent for c in counts.values())
        rescued = sum(len(t.rescued) for t in tallies.values())       # unscored by the judge, scored by a person
        summary = assemble_summary(summaries, notes, n_samples=self.n_samples, n_verdicts=sum(r["n"] for r in seen),
                                   n_unscored=sum(r["unscored"] for r in seen) - rescued,
                                   usage=self._usage() if spent else Usage())
        with_machine_figures(summary, tallies, machine_only=self.machine_only,
                             corrected=self.official.corrected_counts())
        if breakdown:
            summary.breakdown = group_stats({key: (n, n, values) for key, (n, values) in groups.items()}, summaries)
        else:
            summary.notes.append("no samples given: per tag/intent breakdown left out")
        return summary

    def _scorer(self, row: Mapping[str, Any], metric_thresholds: Mapping[str, float] | None,
                counts: _Counts, scores: array, tally: HumanTally | None = None) -> ScorerSummary:
        name = row["scorer"]
        rescued = tally.rescued if tally is not None else set()
        unscored = [(r[0], r[1], r[2]) for r in self.run_rows(
            f"SELECT v.unscored_kind, v.sample_id, v.unscored_reason {FROM_RUN} AND v.scorer = ? AND v.score IS NULL "
            "ORDER BY d.position", (name,)) if r[1] not in rescued] if counts.unscored else []
        panel_rows = [row_to_verdict(r) for r in self.run_rows(
            f"SELECT v.* {FROM_RUN} AND v.scorer = ? AND instr(v.details_json, ?) > 0 "
            f"AND {self.sql.json_kind('v.details_json', '$.' + PANEL_KEY)} = 'object' ORDER BY d.position",
            (name, f'"{PANEL_KEY}"'))] if counts.panel else []
        # The few flagged rows' findings, for the count per defence (patterns, perplexity, llm_screen)
        flagged_by = count_by_defence(json.loads(r[0]) for r in self.run_rows(
            f"SELECT v.details_json {FROM_RUN} AND v.scorer = ? AND instr(v.details_json, ?) > 0",
            (name, f'"{MANIPULATION_KEY}"'))) if counts.flagged else {}
        return scorer_summary(row, scores=scores, n_total=counts.n, unscored=unscored, n_flagged=counts.flagged,
                              panel_rows=panel_rows, usage=self._usage(name) if counts.spent else Usage(),
                              metric_thresholds=metric_thresholds, flagged_by=flagged_by)

    def _usage(self, scorer: str | None = None) -> Usage:
        """Usage summed in verdict order; rows that spent nothing add nothing, so they are not read."""
        where, params = ("AND v.scorer = ?", (scorer,)) if scorer else ("", ())
        total = Usage()
        for chunk in self._in_order("v.usage_json", f"{where} AND v.usage_json != ?", (*params, ZERO_USAGE)):
            for r in chunk:
                total = total + Usage.model_validate_json(r[0])
        return total

    def _scores(self, breakdown: bool) -> tuple[dict[str, array], dict[GroupKey, list[Any]],
                                                dict[str, HumanTally]]:
        """Every scorer's official scored values in verdict order and, with `breakdown`, each (dimension, value,
        scorer) group's row count and scored values: one ordered pass over the run for both (each scorer's scores
        read by a query of their own, and the groups by another pass, cost twice the time). With human decisions,
        also each scorer's tally of them and the judge's own values (sample ids are read only then)."""
        scores: dict[str, array] = {}
        groups: dict[GroupKey, list[Any]] = {}
        tallies: dict[str, HumanTally] = {}
        official = self.official
        for chunk in self._in_order("d.position, v.scorer, v.score" + (", v.sample_id" if official else "")):
            keys = self._group_keys(chunk[0][0], chunk[-1][0]) if breakdown else {}
            for position, scorer, score, *sample_id in chunk:
                if official:
                    tally = tallies.get(scorer)
                    if tally is None:
                        tally = tallies[scorer] = HumanTally()
                    if score is not None:
                        tally.machine.append(score)
                    decision = official.decision(sample_id[0], scorer)
                    if decision is not None:
                        tally.n_human += 1
                        if score is None:
                            tally.rescued.add(sample_id[0])
                        score = decision.score
                    elif official.is_pending(sample_id[0], scorer):     # issue 44: counted apart, in no figure
                        tally.n_pending += 1
                        score = None
                if score is not None:
                    values = scores.get(scorer)
                    if values is None:
                        values = scores[scorer] = array("d")
                    values.append(score)
                for dimension, value in keys.get(position, ()):
                    group = groups.get((dimension, value, scorer))
                    if group is None:
                        group = groups[(dimension, value, scorer)] = [0, array("d")]
                    group[0] += 1
                    if score is not None:
                        group[1].append(score)
        return scores, groups, tallies

    def _group_keys(self, first: int, last: int) -> dict[int, list[tuple[GroupDimension, str]]]:
        """position → the breakdown groups of the sample there, for the samples at positions first … last (read
        once per sample, not once per verdict)."""
        return {r[0]: breakdown_keys(json.loads(r[1] or "[]"), r[2] or "") for r in self._span_samples(
            f"{self.sql.json_text('sample_json', '$.tags')}, {self.sql.json_text('sample_json', '$.intent')}",
            first, last)}

    def _span_samples(self, columns: str, first: int, last: int) -> list[Any]:
        """(position, columns…) of the dataset's samples at positions first … last."""
        return self.conn.execute(f"SELECT position, {columns} FROM dataset_samples WHERE dataset_id = ? "
                                 "AND position BETWEEN ? AND ?", (self.dataset, first, last)).fetchall()

    # -- what reports show ---------------------------------------------------------------------------------------
    def language(self) -> Lang:
        """detect_language over the samples, read a chunk at a time (question and answer only)."""
        from types import SimpleNamespace

        from rubriceval.i18n import detect_language

        def languages() -> Iterator[SimpleNamespace]:
            for chunk in self._stream(f"SELECT {self.sql.json_text('d.sample_json', '$.question')}, "
                                      f"{self.sql.json_text('d.sample_json', '$.answer')} FROM runs r JOIN "
                                      "dataset_samples d ON d.dataset_id = r.dataset_id WHERE r.run_id = ?"):
                for question, answer in chunk:
                    yield SimpleNamespace(language=text_language((question or "") + (answer or "")))
        return detect_language(languages())

    def samples_for(self, ids: Sequence[str]) -> dict[str, Sample]:
        out: dict[str, Sample] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), 500):
            part = unique[start:start + 500]
            for r in self.run_rows("SELECT d.sample_id, d.sample_json FROM runs r JOIN dataset_samples d ON "
                                   "d.dataset_id = r.dataset_id WHERE r.run_id = ? AND d.sample_id IN "
                                   f"({','.join('?' * len(part))})", part):
                out[r[0]] = Sample.model_validate_json(r[1])
        return out

    def lowest(self, scorer: str, n: int, below: float | None = None) -> list[Verdict]:
        """The n lowest-scored verdicts of a scorer (ties by sample id), optionally only those below a value."""
        where, params = ("AND v.score < ?", (below,)) if below is not None else ("", ())
        decided = [d.sample_id for d in self.official.decisions.values() if d.scorer == scorer]
        waiting = self.official.n_pending(scorer)         # pending review (issue 44): no official score to show
        rows = [row_to_verdict(r) for r in self.run_rows(
            f"SELECT v.* {FROM_RUN} AND v.scorer = ? AND v.score IS NOT NULL {where} ORDER BY v.score, v.sample_id "
            "LIMIT ?", (scorer, *params, n + len(decided) + waiting))]
        if waiting:
            rows = [v for v in rows if not self.official.is_pending(v.sample_id, scorer)]
        if not decided:
            return rows[:n]
        # Official scores: the machine's n + k lowest hold the n lowest undecided rows; the k decided rows are read
        # whatever the judge gave them, and all are ordered again by their official score.
        seen = {v.sample_id for v in rows}
        missing = [sid for sid in decided if sid not in seen]
        for start in range(0, len(missing), 500):
            part = missing[start:start + 500]
            rows += [row_to_verdict(r) for r in self.run_rows(
                f"SELECT v.* {FROM_RUN} AND v.scorer = ? AND v.sample_id IN ({','.join('?' * len(part))})",
                (scorer, *part))]
        shown = [with_decision(v, self.official.decision(v.sample_id, scorer)) for v in rows]
        kept = [v for v in shown if v.score is not None and (below is None or v.score < below)]
        return sorted(kept, key=lambda v: (v.score, v.sample_id))[:n]

    def row_chunks(self, *, where: str = "", params: Sequence[Any] = (), size: int | None = None
                   ) -> Iterator[list[tuple[Any, Sample]]]:
        """Every stored verdict row (the `verdicts` columns) with its sample, in verdict order, the rows of `size`
        samples at a time (each sample read and parsed once, not once per verdict)."""
        for chunk in self._in_order("v.*, d.position AS position", where, params, size):
            samples = {r[0]: Sample.model_validate_json(r[1]) for r in self._span_samples(
                "sample_json", chunk[0]["position"], chunk[-1]["position"])}
            yield [(r, samples[r["position"]]) for r in chunk]

    def sheet_rows(self) -> Iterator[list[tuple[Any, SampleFields]]]:
        """What the samples sheet shows of every verdict (SHEET_COLUMNS, by position), in verdict order, each with
        its sample's shown fields: read from the sample's JSON in SQL, not parsed into a Sample (parsing took ~2 of
        the sheet's 19 CPU-seconds at 100,000 samples)."""
        fields = ", ".join(self.sql.json_text("sample_json", f"$.{name}") for name in SampleFields._fields)
        columns = ", ".join(f"v.{name}" for name in SHEET_COLUMNS)
        for chunk in self._in_order(f"{columns}, d.position"):
            samples = {r[0]: SampleFields(r[1] or "", r[2] or "", r[3] or "", json.loads(r[4] or "[]"), r[5] or "")
                       for r in self._span_samples(fields, chunk[0][-1], chunk[-1][-1])}
            yield [(r, samples[r[-1]]) for r in chunk]

    def verdict_chunks(self, *, where: str = "", params: Sequence[Any] = (), size: int | None = None
                       ) -> Iterator[list[tuple[Verdict, Sample]]]:
        """Every verdict with its sample, in verdict order, the verdicts of `size` samples at a time."""
        for chunk in self.row_chunks(where=where, params=params, size=size):
            yield [(row_to_verdict(r), sample) for r, sample in chunk]

    def diagnose(self, summary: Summary, config: Any = None) -> list[Any]:
        """The diagnosis of the run (report/diagnosis.py), its questions answered in SQL."""
        from rubriceval.report.diagnosis import diagnose
        from rubriceval.report.source_diagnosis import SqlIndex

        return diagnose(summary, (), self.scorers, None, config, index=SqlIndex(self))

    def conversation_chunks(self, span: int | None = None) -> Iterator[tuple[list[Sample], list[Verdict]]]:
        """The conversation samples and their rubric verdicts one range of `span` dataset positions at a time, in
        dataset (and verdict) order: what the streamed conversation sections read (report/conversation_stream.py),
        so at most a span of conversations is held at once."""
        span, conversation = span or SPAN, _CONVERSATION.format(kind=self.sql.json_kind("d.sample_json",
                                                                                         "$.conversation"))
        end = self.conn.execute("SELECT MAX(position) FROM dataset_samples WHERE dataset_id = ?",
                                (self.dataset,)).fetchone()[0]
        for low in range(0, (end if end is not None else -1) + 1, span):
            samples = [Sample.model_validate_json(r[0]) for r in self.conn.execute(
                "SELECT d.sample_json FROM dataset_samples d WHERE d.dataset_id = ? AND d.position >= ? "
                f"AND d.position < ? AND {conversation} ORDER BY d.position", (self.dataset, low, low + span))]
            if not samples:
                continue
            ids = {s.id for s in samples}
            verdicts = [row_to_verdict(r) for r in self.conn.execute(
                "SELECT v.* FROM dataset_samples d JOIN verdicts v ON v.run_id = ? AND v.sample_id = d.sample_id "
                f"WHERE d.dataset_id = ? AND d.position >= ? AND d.position < ? AND v.kind = 'rubric' {ORDER}",
                (self.run_id, self.dataset, low, low + span)) if r["sample_id"] in ids]
            yield samples, verdicts

    def conversation_rows(self) -> tuple[list[Sample], list[Verdict]]:
        """The conversation samples (every one, in dataset order) and their rubric verdicts: what the reports on
        conversations read; single-turn rows are not loaded."""
        # instr() first: a sample without a conversation is stored without the key (Sample's serializer drops it),
        # so only conversations are parsed as JSON (a run of single-turn rows costs one text scan per sample).
        conversation = (f"instr(d.sample_json, '\"conversation\"') > 0 "
                        f"AND {self.sql.json_kind('d.sample_json', '$.conversation')} = 'object'")
        samples = [Sample.model_validate_json(r[0]) for r in self.run_rows(
            "SELECT d.sample_json FROM runs r JOIN dataset_samples d ON d.dataset_id = r.dataset_id "
            f"WHERE r.run_id = ? AND {conversation} ORDER BY d.position")]
        if not samples:                  # no conversation: no verdict to look for
            return [], []
        verdicts = [v for chunk in self.verdict_chunks(where=f"AND v.kind = 'rubric' AND {conversation}")
                    for v, _ in chunk]
        return samples, verdicts
