"""What both verdict exports read from a run: each verdict beside the ids of what it judged, and the tally the
command prints. Unscored verdicts are never written as a number: an export writes them as unscored or skips them,
and says how many."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.audit.official import OfficialScores, with_decision
from rubriceval.core.verdict import Verdict
from rubriceval.data import metadata as meta
from rubriceval.data.sample import Sample
from rubriceval.store.runs import RunInfo, RunStore
from rubriceval.store.turn_audit import turn_scores


class ExportTally(BaseModel):
    """How many records a verdict export wrote, and what it left out, by reason (printed by the command)."""

    path: str
    format: str
    records: int = 0
    verdicts: int = 0
    unscored_written: int = 0
    turn_records: int = 0
    unparented: int = 0          # OTel events written without a trace context (the sample came with none)
    skipped: dict[str, int] = Field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def line(self) -> str:
        parts = [f"{self.records} {self.format} record(s) from {self.verdicts} verdict(s) -> {self.path}"]
        if self.turn_records:
            parts.append(f"{self.turn_records} of them per assistant turn")
        if self.unscored_written:
            parts.append(f"{self.unscored_written} unscored written as unscored (no score value)")
        if self.unparented:
            parts.append(f"{self.unparented} without a trace context (no OTel trace/span id in the sample's "
                         f"metadata; matched by gen_ai.conversation.id / rubriceval.sample.id)")
        parts += [f"skipped {n}: {reason}" for reason, n in sorted(self.skipped.items())]
        return "; ".join(parts)


class JudgedItem(BaseModel):
    """One verdict with the sample it judged and where that sample came from (metadata['source'])."""

    sample: Sample
    verdict: Verdict

    @property
    def source(self) -> dict[str, Any]:
        value = self.sample.metadata.get(meta.SOURCE)
        return value if isinstance(value, dict) else {}

    def turn_refs(self) -> dict[int, dict[str, str]]:
        turns = self.source.get("turns")
        return {int(n): ref for n, ref in turns.items() if isinstance(ref, dict)} if isinstance(turns, dict) else {}

    def turn_verdicts(self) -> list[tuple[str, int, float, str]]:
        """(judge item, turn, score, feedback) of an assistant_turn rubric's per-turn judgments, in turn order."""
        return sorted(((item, turn, float(e.score), e.detail) for (item, turn), e in turn_scores(self.verdict).items()
                       if e.score is not None),     # turn_scores keeps scored turns only: this narrows the type
                      key=lambda t: (t[1], t[0]))


RecordMaker = Callable[[RunInfo, Iterator[JudgedItem], ExportTally], Iterator[dict[str, Any]]]


def export_run(store: RunStore, run: str, out: str | Path, kind: str, make: RecordMaker) -> ExportTally:
    """Write what `make` turns the run's verdicts into to `out`, counting as it goes."""
    info, items = judged_items(store, run)
    tally = ExportTally(path=str(out), format=kind)
    write_lines(out, make(info, items, tally))
    return tally


def judged_items(store: RunStore, run: str) -> tuple[RunInfo, Iterator[JudgedItem]]:
    run_id = store.resolve(run)
    info = store.run_info(run_id)
    samples = {s.id: s for s in store.samples(run_id)}
    # Official scores: a human decision replaces the judge's (audit/official.py), its provenance in details.
    official = OfficialScores.load(store.conn, run_id)
    thresholds = {s["scorer"]: (s.get("definition") or {}).get("threshold") for s in store.scorers(run_id)}

    def items() -> Iterator[JudgedItem]:
        for verdict in store.verdicts(run_id):
            sample = samples.get(verdict.sample_id)
            if sample is not None:
                decided = with_decision(verdict, official.decision(verdict.sample_id, verdict.scorer),
                                        thresholds.get(verdict.scorer))
                yield JudgedItem(sample=sample, verdict=decided)
    return info, items()


def label(verdict: Verdict) -> str | None:
    """pass / fail where the scorer has a threshold (the label OTel's examples and Langfuse's UI use)."""
    return None if verdict.passed is None else ("pass" if verdict.passed else "fail")


def write_lines(path: str | Path, records: Iterator[dict[str, Any]]) -> Path:
    """JSON Lines (one record per line) written atomically; a .json path gets one JSON list instead."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    as_list = path.suffix.lower() == ".json"
    with tmp.open("w", encoding="utf-8") as fh:
        if as_list:
            fh.write("[\n")
        for n, record in enumerate(records):
            if as_list and n:
                fh.write(",\n")
            fh.write(json.dumps(record, ensure_ascii=False))
            if not as_list:
                fh.write("\n")
        if as_list:
            fh.write("\n]\n")
    tmp.replace(path)
    return path
