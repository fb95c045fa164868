"""A run's verdicts as Langfuse score records, each one the body of `POST /api/public/scores` (JSON Lines: post
line by line; a .json path gets one list), with the fields of Langfuse's CreateScoreRequest:

    id            stable per (run, sample, scorer[, turn]): posting the file twice updates, never duplicates
    traceId / sessionId / observationId
                  what was judged, from metadata['source'] (data/readers/langfuse.py): a conversation read from a
                  session is scored on the session (sessionId), one from a single trace on that trace; an
                  assistant_turn rubric's per-turn scores go on the trace and generation that said the turn.
                  Conversations read from OpenTelemetry spans are scored on their trace ids (what Langfuse keeps
                  when it ingests OTLP): traceId, observationId = the span id.
    name          the rubric or metric id (`<id>.per_turn` for an assistant_turn rubric's per-turn scores)
    value         the score (rubric 1–5, metric 0–1), dataType NUMERIC
    comment       the judge's feedback
    metadata      run id and name, sample id, scorer version, pass/fail; a per-turn score's turn and judge item
    environment   the trace's environment when the import knew it

Langfuse has no "unscored" value, so an unscored verdict is skipped and counted (never posted as 0); a sample with
no Langfuse or OTel id is skipped and counted too.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubriceval.export.results import ExportTally, JudgedItem, export_run, label
from rubriceval.store.runs import RunInfo, RunStore

# A per-turn score has a name of its own, so Langfuse's aggregates of the conversation score are not mixed with it.
PER_TURN_SUFFIX = ".per_turn"


def export_langfuse(store: RunStore, run: str, out: str | Path) -> ExportTally:
    return export_run(store, run, out, "Langfuse score", _scores)


def _scores(info: RunInfo, items: Iterator[JudgedItem], tally: ExportTally) -> Iterator[dict[str, Any]]:
    for item in items:
        tally.verdicts += 1
        verdict = item.verdict
        if verdict.score is None:
            tally.skip(f"unscored ({verdict.unscored_kind or 'error'}): Langfuse has no unscored value")
            continue
        target = _target(item)
        if not target:
            tally.skip("no Langfuse trace/session or OTel trace id in the sample's metadata")
            continue
        meta = {"rubriceval_run_id": info.run_id, "rubriceval_run": info.name, "sample_id": item.sample.id,
                "scorer_version": verdict.scorer_version, "scorer_kind": verdict.kind, "label": label(verdict)}
        tally.records += 1
        yield _score(info, item, target, float(verdict.score), verdict.feedback, meta)
        refs = item.turn_refs()
        for judge_item, turn, score, feedback in item.turn_verdicts():
            ref = refs.get(turn) or {}
            turn_target = _turn_target(item, ref)
            if not turn_target:
                continue
            tally.records += 1
            tally.turn_records += 1
            yield _score(info, item, turn_target, score, feedback,
                         {**meta, "turn": turn, "item": judge_item, "label": None}, turn=(judge_item, turn))


def _target(item: JudgedItem) -> dict[str, str]:
    source = item.source
    if source.get("format") == "langfuse":
        if source.get("session_id"):
            return {"sessionId": str(source["session_id"])}
        return {"traceId": str(source["trace_id"])} if source.get("trace_id") else {}
    if source.get("format") == "otel" and source.get("trace_id"):
        return {"traceId": str(source["trace_id"]), **({"observationId": str(source["span_id"])}
                                                       if source.get("span_id") else {})}
    return {}


def _turn_target(item: JudgedItem, ref: dict[str, Any]) -> dict[str, str]:
    if not ref.get("trace_id"):
        return {}
    observation = ref.get("observation_id") or ref.get("span_id")
    return {"traceId": str(ref["trace_id"]), **({"observationId": str(observation)} if observation else {})}


def _score(info: RunInfo, item: JudgedItem, target: dict[str, str], value: float, comment: str,
           meta: dict[str, Any], turn: tuple[str, int] | None = None) -> dict[str, Any]:
    key = "\x1f".join([info.run_id, item.sample.id, item.verdict.scorer, *map(str, turn or ())])
    name = item.verdict.scorer + (PER_TURN_SUFFIX if turn else "")
    record: dict[str, Any] = {"id": "rubriceval-" + hashlib.sha256(key.encode()).hexdigest()[:32], **target,
                              "name": name, "value": value, "dataType": "NUMERIC",
                              "comment": comment or None,
                              "metadata": {k: v for k, v in meta.items() if v not in (None, "")}}
    environment = item.sample.metadata.get("environment")
    if isinstance(environment, str) and environment:
        record["environment"] = environment
    return {k: v for k, v in record.items() if v is not None}
