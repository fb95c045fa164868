"""OpenTelemetry GenAI spans (an OTLP/JSON trace file) → one Conversation per `gen_ai.conversation.id`.

What is read, from the published GenAI semantic conventions:
- a chat span's `gen_ai.input.messages` (the history sent to the model) and `gen_ai.output.messages` (its reply,
  choice 0 kept): messages `{role, parts: [{type: text, content} | {type: tool_call, id, name, arguments} |
  {type: tool_call_response, id, response}]}`, structured or as JSON text;
- or, from instrumentations before those attributes (semconv ≤ 1.36), the per-message span events
  `gen_ai.user.message`, `gen_ai.assistant.message` (content, tool_calls), `gen_ai.tool.message` (content, id),
  `gen_ai.choice` (message, tool_calls), their body fields as event attributes;
- `execute_tool` spans (`gen_ai.tool.call.id`, `gen_ai.tool.name`, `gen_ai.tool.call.arguments`/`.result`) for a
  tool call or result the chat spans do not show.
A conversation's chat spans are read in start order; each adds what its input has beyond the transcript so far
(a model sees the whole history again each call) and then its output. System messages and instructions are the
bot's configuration, not the customer conversation, and are left out. A trace whose GenAI spans carry no
conversation id is one conversation, its id the trace id.

Span and resource attributes become metadata (the message attributes and per-call ones such as gen_ai.response.*
excepted; token counts summed over the conversation's calls), the standard keys of
data/metadata.py filled from gen_ai.agent.id/name, gen_ai.agent.version or service.version, user.id/enduser.id;
`source` keeps the trace and span ids that export/otel.py parents evaluation events to.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubriceval.common.errors import DatasetError
from rubriceval.data import metadata as meta
from rubriceval.data.conversation import Conversation
from rubriceval.data.readers.documents import iter_documents
from rubriceval.data.readers.otlp_json import any_value, attributes, span_lists
from rubriceval.data.readers.transcript import Transcript, arguments, as_text
from rubriceval.data.row_groups import RowGroups

# Held in memory before the rest spill to the temporary database (data/row_groups.py): few, as a span carries the
# whole history its call saw.
SPANS_IN_MEMORY = 2_000

CONVERSATION_ID = "gen_ai.conversation.id"
INPUT, OUTPUT = "gen_ai.input.messages", "gen_ai.output.messages"
BULKY = {INPUT, OUTPUT, "gen_ai.system_instructions", "gen_ai.tool.definitions", "gen_ai.prompt",
         "gen_ai.completion", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}
# Standard metadata key ← attribute names, first present wins.
STANDARD_ATTRIBUTES = {
    meta.AGENT_ID: ("gen_ai.agent.id",),
    meta.AGENT_NAME: ("gen_ai.agent.name",),
    meta.BOT_VERSION: ("gen_ai.agent.version", "service.version"),
    meta.CUSTOMER_ID: ("user.id", "enduser.id"),
}
# Attributes of one call, not of the conversation: left out of metadata (token counts are summed instead).
PER_CALL = ("gen_ai.operation.name", "gen_ai.tool.", "gen_ai.response.", "gen_ai.request.", "gen_ai.output.type",
            "gen_ai.usage.", "error.type")
KEPT_PER_CALL = ("gen_ai.request.model",)
USAGE = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                  "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def looks_like_otlp(record: dict[str, Any]) -> bool:
    """An OTLP/JSON export: traces, or logs (which read_otel refuses by name rather than as a bad dataset)."""
    return isinstance(record, dict) and any(isinstance(record.get(k), list) for k in ("resourceSpans", "resourceLogs"))


class _Span:
    """One span as the reader needs it, with where it was found."""

    def __init__(self, line: int, where: str, resource: dict[str, Any], raw: Any, file: str):
        self.line, self.where, self.file = line, where, file
        if not isinstance(raw, dict):
            raise DatasetError("a span must be a JSON object", file=file, line=line, field=where)
        self.trace_id = str(raw.get("traceId") or "")
        self.span_id = str(raw.get("spanId") or "")
        if not self.trace_id or not self.span_id:
            missing = "traceId" if not self.trace_id else "spanId"
            raise DatasetError(f"a span without {missing}", file=file, line=line, field=f"{where}.{missing}")
        self.parent = str(raw.get("parentSpanId") or "")
        self.name = str(raw.get("name") or "")
        self.start = self._nanos(raw, "startTimeUnixNano", where)
        self.end = self._nanos(raw, "endTimeUnixNano", where) or self.start
        self.attributes = attributes(raw.get("attributes"))
        self.resource = resource
        self.events = [(str(e.get("name") or ""), self._nanos(e, "timeUnixNano", f"{where}.events[{i}]") or self.start,
                        attributes(e.get("attributes")), f"{where}.events[{i}]")
                       for i, e in enumerate(raw.get("events") or [], start=1) if isinstance(e, dict)]

    def _nanos(self, raw: dict[str, Any], key: str, where: str) -> int:
        """A time in Unix nanoseconds (OTLP/JSON writes the int64 as a decimal string); absent → 0."""
        value = raw.get(key)
        try:
            return int(value or 0)
        except (TypeError, ValueError):
            raise DatasetError(f"{value!r} is not a time in Unix nanoseconds", file=self.file, line=self.line,
                               field=f"{where}.{key}") from None

    @property
    def operation(self) -> str:
        return str(self.attributes.get("gen_ai.operation.name") or "")

    def messages(self, key: str) -> list[dict[str, Any]] | None:
        value = self.attributes.get(key)
        if value is None:
            return None
        field = f"{self.where}.attributes[{key}]"
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"not valid JSON text: {exc.msg}", file=self.file, line=self.line,
                                   field=field) from None
        if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
            raise DatasetError("must be a list of messages {role, parts}", file=self.file, line=self.line,
                               field=field)
        return value

    def is_genai(self) -> bool:
        return bool(self.operation or INPUT in self.attributes or OUTPUT in self.attributes
                    or any(name in MESSAGE_EVENTS or name == "gen_ai.choice" for name, *_ in self.events))


def read_otel(path: str | Path) -> list[Conversation]:
    """Every conversation of an OTLP/JSON trace file, in order of first appearance (iter_otel, as a list)."""
    return list(iter_otel(path))


def iter_otel(path: str | Path) -> Iterator[Conversation]:
    """The conversations of an OTLP/JSON trace file one at a time, in bounded memory: a first pass learns which
    traces hold GenAI spans and under which conversation id (and reports a bad span when reached), a second
    gathers each conversation's spans (data/row_groups.py spills a large file to a temporary database)."""
    path = Path(path)
    file = str(path)
    trace_conversation, genai_traces = _trace_index(path, file)
    if not genai_traces:
        raise DatasetError("no GenAI spans (gen_ai.operation.name, gen_ai.input/output.messages or message events)",
                           file=file)
    groups = RowGroups(spill_rows=SPANS_IN_MEMORY)
    try:
        for line, document in _requests(path, file):
            for where, resource, raw in span_lists(document):
                trace_id = str(raw.get("traceId") or "")
                key = (_own_conversation_id(raw) or trace_conversation.get(trace_id)
                       or (trace_id if trace_id in genai_traces else None))
                if key:
                    groups.add(key, line, {"where": where, "resource": resource, "span": raw})
        for conversation_id, rows in groups.groups():
            spans = [_Span(line, r["where"], r["resource"], r["span"], file) for line, r in rows]
            genai = sorted((s for s in spans if s.is_genai()), key=lambda s: (s.start, s.line))
            if genai:
                yield _conversation(conversation_id, genai, {s.span_id: s for s in spans}, file)
    finally:
        groups.close()


def _requests(path: Path, file: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, document in iter_documents(path):
        if "resourceSpans" not in document:
            raise DatasetError("not an OTLP trace export (no resourceSpans)", file=file, line=line,
                               field="resourceSpans", hint="an OTLP/JSON file exporter's traces output; "
                               "resourceLogs holds logs or evaluation events, not conversations")
        yield line, document


def _trace_index(path: Path, file: str) -> tuple[dict[str, str], set[str]]:
    """(trace id → its conversation id, traces holding a GenAI span), every span checked on the way."""
    trace_conversation: dict[str, str] = {}
    genai_traces: set[str] = set()
    for line, document in _requests(path, file):
        for where, resource, raw in span_lists(document):
            span = _Span(line, where, resource, raw, file)
            conversation_id = span.attributes.get(CONVERSATION_ID)
            if conversation_id not in (None, ""):
                trace_conversation.setdefault(span.trace_id, str(conversation_id))
            if span.is_genai():
                genai_traces.add(span.trace_id)
    return trace_conversation, genai_traces


def _own_conversation_id(raw: dict[str, Any]) -> str | None:
    for item in raw.get("attributes") or []:
        if isinstance(item, dict) and item.get("key") == CONVERSATION_ID:
            value = any_value(item.get("value"))
            return str(value) if value not in (None, "") else None
    return None


def _conversation(conversation_id: str, spans: list[_Span], by_id: dict[str, _Span], file: str) -> Conversation:
    transcript = Transcript()
    for span in spans:
        if span.operation == "execute_tool":
            continue
        inputs, outputs = _span_messages(span)
        transcript.extend([t for m in inputs for t in _turns(m, span)], meta.nanos_to_utc_iso(span.start))
        for message in outputs:
            for turn in _turns({**message, "role": message.get("role") or "assistant"}, span):
                transcript.append(turn, meta.nanos_to_utc_iso(span.end),
                                  {"trace_id": span.trace_id, "span_id": span.span_id})
    for span in spans:
        if span.operation == "execute_tool":
            _add_tool_span(transcript, span)
    first = spans[0]
    return transcript.conversation(conversation_id, _metadata(spans, by_id), file=file, line=first.line,
                                   field=f"{first.where}.attributes[{CONVERSATION_ID}]")


def _add_tool_span(transcript: Transcript, span: _Span) -> None:
    """An execute_tool span adds its call and its result when no chat span showed them."""
    call_id = str(span.attributes.get("gen_ai.tool.call.id") or "")
    name = str(span.attributes.get("gen_ai.tool.name") or "")
    if not call_id or not name:
        return
    if call_id not in transcript.calls():
        transcript.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": call_id, "name": name, "arguments": arguments(span.attributes.get("gen_ai.tool.call.arguments"))}]},
            meta.nanos_to_utc_iso(span.start))
    result = span.attributes.get("gen_ai.tool.call.result")
    if call_id not in transcript.answered() and result is not None:
        transcript.insert_result(call_id, as_text(result))


def _span_messages(span: _Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(input messages, output messages) of a chat span: the attributes, else the per-message events."""
    inputs, outputs = span.messages(INPUT), span.messages(OUTPUT)
    if inputs is not None or outputs is not None:
        return inputs or [], (outputs or [])[:1]
    inputs, outputs = [], []
    for name, _, attrs, where in span.events:
        if name in MESSAGE_EVENTS:
            inputs.append(_event_message(MESSAGE_EVENTS[name], attrs, span, where))
        elif name == "gen_ai.choice" and not outputs and str(attrs.get("index") or 0) == "0":
            body = _decoded(attrs.get("message"), span, where) or {}
            outputs.append(_event_message("assistant", {**(body if isinstance(body, dict) else {}),
                                                        "tool_calls": attrs.get("tool_calls")}, span, where))
    return inputs, outputs


def _decoded(value: Any, span: _Span, where: str) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"not valid JSON text: {exc.msg}", file=span.file, line=span.line, field=where) from None
    return value


def _event_message(role: str, attrs: dict[str, Any], span: _Span, where: str) -> dict[str, Any]:
    """A pre-1.37 message event's body → the parts form of gen_ai.input.messages."""
    parts: list[dict[str, Any]] = []
    content = _decoded(attrs.get("content"), span, where)
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": attrs.get("id"), "response": content})
    elif content not in (None, ""):
        parts.append({"type": "text", "content": content if isinstance(content, str) else json.dumps(content)})
    for call in _decoded(attrs.get("tool_calls"), span, where) or []:
        function = call.get("function") or {}
        parts.append({"type": "tool_call", "id": call.get("id"), "name": function.get("name") or call.get("name"),
                      "arguments": function.get("arguments", call.get("arguments"))})
    return {"role": str(attrs.get("role") or role), "parts": parts}


def _turns(message: dict[str, Any], span: _Span) -> list[dict[str, Any]]:
    """One GenAI message → turn dicts: its text and tool calls as one turn, each tool result as a tool turn.
    System (and developer) messages are left out (see the module docstring)."""
    role = str(message.get("role") or "")
    if role in ("system", "developer"):
        return []
    parts = message.get("parts")
    if parts is None and "content" in message:            # a message written with a plain content string
        parts = [{"type": "text", "content": message["content"]}]
    text, calls, results = [], [], []
    for part in parts or []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            text.append(str(part.get("content") or ""))
        elif kind == "tool_call":
            calls.append({"id": part.get("id"), "name": str(part.get("name") or ""),
                          "arguments": arguments(part.get("arguments"))})
        elif kind == "tool_call_response":
            results.append({"role": "tool", "tool_call_id": str(part["id"]).strip() if part.get("id") else None,
                            "content": as_text(part.get("response", part.get("result")))})
    if role == "tool":
        return results or [{"role": "tool", "content": "\n".join(text)}]
    said = [{"role": role, "content": "\n".join(text), "tool_calls": calls}] if text or calls else []
    return said + results


def _metadata(spans: list[_Span], by_id: dict[str, _Span]) -> dict[str, Any]:
    """Span and resource attributes, first value wins (spans in start order), plus the standard keys and source."""
    metadata: dict[str, Any] = {}
    for span in spans:
        for key, value in {**span.resource, **span.attributes}.items():
            if key in BULKY or key == CONVERSATION_ID or value in (None, "") or key in metadata:
                continue
            if key.startswith(PER_CALL) and key not in KEPT_PER_CALL:
                continue
            metadata[key] = meta.scalar(value)
    for key in USAGE:
        counts = [s.attributes[key] for s in spans if isinstance(s.attributes.get(key), int)]
        if counts:
            metadata[key] = sum(counts)
    for key, names in STANDARD_ATTRIBUTES.items():
        found = next((metadata[n] for n in names if n in metadata), None)
        if found is not None and key not in metadata:
            metadata[key] = found
    # The span a conversation-level verdict hangs under: the outermost span of the first trace (invoke_agent or
    # the app's root), else the last chat span.
    first = spans[0]
    root = first
    while root.parent in by_id and by_id[root.parent].trace_id == first.trace_id:
        root = by_id[root.parent]
    chats = [s for s in spans if s.operation != "execute_tool"]
    anchor = root if root is not first or first.operation == "invoke_agent" else (chats or spans)[-1]
    trace_ids = list(dict.fromkeys(s.trace_id for s in spans))
    metadata[meta.SOURCE] = {"format": "otel", "trace_id": anchor.trace_id, "span_id": anchor.span_id,
                             "trace_ids": trace_ids}
    return metadata
