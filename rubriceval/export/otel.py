"""A run's verdicts as OpenTelemetry `gen_ai.evaluation.result` events, in the OTLP/JSON logs encoding a collector's
file exporter writes (one ExportLogsServiceRequest per line: resourceLogs → scopeLogs → logRecords), so a
collector `otlpjsonfile` receiver, or any OTLP/JSON reader, replays them into the backend that holds the traces.

Each verdict is one event (a log record with eventName `gen_ai.evaluation.result`, and the `event.name` attribute
older collectors read), parented to what it judged through the record's traceId/spanId: the conversation's span
(metadata['source'], filled by data/readers/otel.py); an `assistant_turn` rubric adds one event per judged turn,
parented to the span that said that turn. Attributes, as the GenAI semantic conventions name them:
`gen_ai.evaluation.name` (the rubric or metric), `gen_ai.evaluation.score.value` (a double, only when scored),
`gen_ai.evaluation.score.label` (pass / fail where the scorer has a threshold), `gen_ai.evaluation.explanation`
(the judge's feedback, or why it is unscored), `error.type` (the unscored kind: the evaluation failed — never a
score of 0), `gen_ai.conversation.id`; and ours under `rubriceval.*` (run, sample, scorer version, and for a
per-turn event the turn and the judge item).
A verdict on a sample with no trace context (a chat-log export, a JSONL dataset) is written without traceId and
spanId, counted as such: it still names its conversation.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubriceval import __version__
from rubriceval.data.readers.otlp_json import encode_attributes
from rubriceval.export.results import ExportTally, JudgedItem, export_run, label
from rubriceval.store.runs import RunInfo, RunStore

EVENT_NAME = "gen_ai.evaluation.result"
RECORDS_PER_LINE = 500
SEVERITY_INFO = 9
TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
SPAN_ID = re.compile(r"^[0-9a-f]{16}$")


def export_otel(store: RunStore, run: str, out: str | Path) -> ExportTally:
    return export_run(store, run, out, "gen_ai.evaluation.result", _requests)


def _requests(info: RunInfo, items: Iterator[JudgedItem], tally: ExportTally) -> Iterator[dict[str, Any]]:
    batch: list[dict[str, Any]] = []
    for item in items:
        tally.verdicts += 1
        for record in _records(info, item, tally):
            batch.append(record)
            tally.records += 1
            if len(batch) == RECORDS_PER_LINE:
                yield _request(batch)
                batch = []
    if batch:
        yield _request(batch)


def _request(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceLogs": [{
        "resource": {"attributes": encode_attributes({"service.name": "rubriceval"})},
        "scopeLogs": [{"scope": {"name": "rubriceval", "version": __version__}, "logRecords": records}]}]}


def _records(info: RunInfo, item: JudgedItem, tally: ExportTally) -> Iterator[dict[str, Any]]:
    verdict, source = item.verdict, item.source
    stamp = str(int((info.finished_at or info.created_at or time.time()) * 1e9))
    common = {"gen_ai.evaluation.name": verdict.scorer,
              "gen_ai.conversation.id": item.sample.id if item.sample.conversation is not None else None,
              "rubriceval.run.id": info.run_id, "rubriceval.run.name": info.name,
              "rubriceval.sample.id": item.sample.id, "rubriceval.scorer.kind": verdict.kind,
              "rubriceval.scorer.version": verdict.scorer_version or None}
    attributes: dict[str, Any]
    if verdict.score is None:
        tally.unscored_written += 1
        attributes = {**common, "gen_ai.evaluation.explanation": verdict.unscored_reason,
                      "error.type": verdict.unscored_kind or "error"}
    else:
        attributes = {**common, "gen_ai.evaluation.score.value": float(verdict.score),
                      "gen_ai.evaluation.score.label": label(verdict),
                      "gen_ai.evaluation.explanation": verdict.feedback or None}
    context = _context(source.get("trace_id"), source.get("span_id"))
    if not context:
        tally.unparented += 1
    yield _record(stamp, attributes, context)
    refs = item.turn_refs()
    for judge_item, turn, score, feedback in item.turn_verdicts():
        ref = refs.get(turn)
        turn_context = _context(ref.get("trace_id"), ref.get("span_id")) if ref else {}
        if not turn_context:
            continue                       # a turn with no span of its own is judged in the conversation's event
        tally.turn_records += 1
        yield _record(stamp, {**common, "gen_ai.evaluation.score.value": score, "rubriceval.turn": turn,
                              "rubriceval.item": judge_item, "gen_ai.evaluation.explanation": feedback or None},
                      turn_context)


def _context(trace_id: Any, span_id: Any) -> dict[str, str]:
    """traceId/spanId as OTLP/JSON writes them (lowercase hex), when they are ids an OTel backend knows."""
    trace_id, span_id = str(trace_id or "").lower(), str(span_id or "").lower()
    if TRACE_ID.match(trace_id) and SPAN_ID.match(span_id):
        return {"traceId": trace_id, "spanId": span_id}
    if TRACE_ID.match(trace_id):
        return {"traceId": trace_id}
    return {}


def _record(stamp: str, attributes: dict[str, Any], context: dict[str, str]) -> dict[str, Any]:
    return {"timeUnixNano": stamp, "observedTimeUnixNano": stamp, "severityNumber": SEVERITY_INFO,
            "severityText": "INFO", "eventName": EVENT_NAME,
            "attributes": encode_attributes({"event.name": EVENT_NAME, **attributes}), **context}
