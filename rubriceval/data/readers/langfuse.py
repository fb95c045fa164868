"""Langfuse trace and session exports (JSON or JSONL) → one Conversation per session, or per trace without one.

Accepted, as Langfuse's public API and UI export write them: a trace (`GET /api/public/traces/{id}`:
TraceWithFullDetails — id, timestamp, name, input, output, sessionId, userId, release, version, metadata, tags,
environment, observations[], scores[]), a session (`GET /api/public/sessions/{id}`: id, createdAt, traces[]), a
page of either (`{data: [...], meta: {...}}`), a JSON list of them, or one per line.

A session's traces, in timestamp order, are its exchanges: a trace's `input` gives the customer's message(s) and
its `output` the bot's reply (a string, an OpenAI-style message or message list, or a dict with one text field
such as query/question/input → answer/output/content); when a trace has neither, its last GENERATION observation's
input/output are read instead. A message list repeating the history adds only what is new (data/readers/
transcript.py). TOOL observations add a tool call and its result when the messages show none; RETRIEVER
observations' output becomes the reply's contexts.

Metadata (data/metadata.py): the traces' metadata (first value wins), customer_id ← userId, bot_version ← release
or version, environment, `langfuse_scores` (the scores the traces already carry, for agreement with our judge),
`source` {format, session_id, trace_id, trace_ids, turns: {n: {trace_id, observation_id}}} for writing
verdicts back as score records (export/langfuse.py).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubriceval.common.errors import DatasetError
from rubriceval.data import metadata as meta
from rubriceval.data.conversation import Conversation
from rubriceval.data.readers.documents import iter_documents
from rubriceval.data.readers.transcript import Transcript, arguments, as_text
from rubriceval.data.row_groups import RowGroups

# Held in memory before the rest spill to the temporary database (data/row_groups.py): few, as a trace carries its
# observations' inputs and outputs.
TRACES_IN_MEMORY = 2_000

USER_TEXT_KEYS = ("query", "question", "input", "message", "text", "content", "prompt", "user_input")
BOT_TEXT_KEYS = ("answer", "output", "content", "text", "response", "completion", "result")
DOCUMENT_TEXT_KEYS = ("page_content", "content", "text", "chunk")


def looks_like_langfuse(record: dict[str, Any]) -> bool:
    """A trace (id with observations, htmlPath, or sessionId beside input/output), a session (id with a traces list)
    or an API page of either; never a row of an ordinary dataset (question / turns / messages / user_input)."""
    if not isinstance(record, dict) or "resourceSpans" in record:
        return False
    if isinstance(record.get("data"), list) and isinstance(record.get("meta"), dict):
        return bool(record["data"]) and looks_like_langfuse(record["data"][0])
    if isinstance(record.get("traces"), list):
        return "id" in record
    if "id" not in record or any(k in record for k in ("question", "turns", "messages", "user_input")):
        return False
    return ("observations" in record or "htmlPath" in record
            or ("sessionId" in record and ("input" in record or "output" in record)))


class _Trace:
    def __init__(self, raw: dict[str, Any], line: int, where: str, file: str, session: str | None):
        self.raw, self.line, self.where, self.file = raw, line, where, file
        self.id = str(raw.get("id") or "")
        if not self.id:
            raise DatasetError("a trace without id", file=file, line=line, field=f"{where}id")
        self.session = str(raw.get("sessionId") or session or "") or None
        stamp = raw.get("timestamp")
        self.timestamp = meta.to_utc_iso(stamp, file=file, line=line, field=f"{where}timestamp") if stamp else None
        observations = raw.get("observations") or []
        if not isinstance(observations, list) or not all(isinstance(o, dict) for o in observations):
            raise DatasetError("observations must be a list of objects (GET /api/public/traces/{id} gives them; "
                               "the trace list gives ids only)", file=file, line=line, field=f"{where}observations")
        self.observations = sorted(observations, key=lambda o: str(o.get("startTime") or ""))

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.observations if str(o.get("type") or "").upper() == kind]


def read_langfuse(path: str | Path) -> list[Conversation]:
    """Every conversation of a Langfuse export, in order of first appearance (iter_langfuse, as a list)."""
    return list(iter_langfuse(path))


def iter_langfuse(path: str | Path) -> Iterator[Conversation]:
    """The conversations of a Langfuse export one at a time: each trace checked when read, the traces of a
    session gathered in bounded memory (data/row_groups.py)."""
    path = Path(path)
    file = str(path)
    groups = RowGroups(spill_rows=TRACES_IN_MEMORY)
    session_scores: dict[str, list[dict[str, Any]]] = {}
    try:
        for line, where, trace, session in _traces(path, file, session_scores):
            checked = _Trace(trace, line, where, file, session)
            groups.add(checked.session or checked.id, line, {"where": where, "session": session, "trace": trace})
        if not groups.rows:
            raise DatasetError("the export holds no traces", file=file)
        for conversation_id, rows in groups.groups():
            traces = [_Trace(r["trace"], line, r["where"], file, r["session"]) for line, r in rows]
            yield _conversation(conversation_id, sorted(traces, key=lambda t: (t.timestamp or "", t.line)),
                                session_scores.get(conversation_id, []), file)
    finally:
        groups.close()


def _traces(path: Path, file: str, session_scores: dict[str, list[dict[str, Any]]]
            ) -> Iterator[tuple[int, str, dict[str, Any], str | None]]:
    """(line, field prefix, trace, session id given by an enclosing session) for every trace of the export."""
    for line, document in iter_documents(path):
        paged = isinstance(document.get("data"), list)
        items = document["data"] if paged else [document]
        for i, item in enumerate(items, start=1):
            where = f"data[{i}]." if paged else ""
            if not isinstance(item, dict):
                raise DatasetError("not a JSON object", file=file, line=line, field=where.rstrip(".") or None)
            if isinstance(item.get("traces"), list):             # a session
                session = str(item.get("id") or "") or None
                session_scores.setdefault(session or "", []).extend(item.get("scores") or [])
                for n, trace in enumerate(item["traces"], start=1):
                    if not isinstance(trace, dict):
                        raise DatasetError("a trace must be a JSON object", file=file, line=line,
                                           field=f"{where}traces[{n}]")
                    yield line, f"{where}traces[{n}].", trace, session
            elif looks_like_langfuse(item) or "input" in item or "output" in item:
                yield line, where, item, None
            else:
                raise DatasetError("not a Langfuse trace or session (no id with observations, sessionId or traces)",
                                   file=file, line=line, field=where.rstrip(".") or None)


def _conversation(conversation_id: str, traces: list[_Trace], extra_scores: list[dict[str, Any]],
                  file: str) -> Conversation:
    transcript = Transcript()
    for trace in traces:
        _add_trace(transcript, trace)
    first = traces[0]
    tags = list(dict.fromkeys(str(tag) for t in traces for tag in _as_list(t.raw.get("tags"))))
    return transcript.conversation(conversation_id, _metadata(traces, extra_scores), file=file,
                                   line=first.line, field=f"{first.where}input", tags=tags)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value in (None, "") else [value]


def _add_trace(transcript: Transcript, trace: _Trace) -> None:
    generations = trace.of_type("GENERATION")
    last = generations[-1] if generations else None
    given_in, given_out = trace.raw.get("input"), trace.raw.get("output")
    if given_in is None and given_out is None and last is not None:
        given_in, given_out = last.get("input"), last.get("output")
    user_turns = _turns(given_in, "user", trace, "input")
    transcript.extend(user_turns, trace.timestamp)
    said = _turns(given_out, "assistant", trace, "output")
    if not any(t.get("tool_calls") for t in user_turns + said):
        for tool in trace.of_type("TOOL"):
            call_id = str(tool.get("id") or "")
            transcript.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": call_id, "name": str(tool.get("name") or "tool"), "arguments": arguments(tool.get("input"))}]},
                _time(tool.get("startTime"), trace))
            if tool.get("output") is not None:
                transcript.append({"role": "tool", "tool_call_id": call_id, "content": as_text(tool["output"])},
                                  _time(tool.get("endTime"), trace))
    contexts = [doc for retriever in trace.of_type("RETRIEVER") for doc in _documents(retriever.get("output"))]
    reply_time = _time((last or {}).get("endTime"), trace) or trace.timestamp
    source = {"trace_id": trace.id, **({"observation_id": str(last["id"])} if last and last.get("id") else {})}
    for turn in said:
        if turn["role"] == "assistant" and contexts and not turn.get("contexts"):
            turn["contexts"] = contexts
        transcript.append(turn, reply_time, source)


def _time(value: Any, trace: _Trace) -> str | None:
    return meta.to_utc_iso(value, file=trace.file, line=trace.line, field=f"{trace.where}observations") if value else None


def _turns(value: Any, role: str, trace: _Trace, field: str) -> list[dict[str, Any]]:
    """A trace's input or output → turn dicts (system messages left out)."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [{"role": role, "content": value}]
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
    if isinstance(value, dict) and "role" in value:
        value = [value]
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        return [t for n, m in enumerate(value, start=1) for t in _message(m, trace, f"{field}[{n}]")]
    if isinstance(value, dict):
        for key in (USER_TEXT_KEYS if role == "user" else BOT_TEXT_KEYS):
            if isinstance(value.get(key), str):
                return [{"role": role, "content": value[key]}]
    return [{"role": role, "content": as_text(value)}]


def _message(message: dict[str, Any], trace: _Trace, field: str) -> list[dict[str, Any]]:
    """An OpenAI-style chat message (what Langfuse's OpenAI/LangChain integrations record) → turn dicts."""
    role = {"human": "user", "ai": "assistant", "function": "tool"}.get(str(message["role"]), str(message["role"]))
    if role in ("system", "developer"):
        return []
    if role not in ("user", "assistant", "tool"):
        raise DatasetError(f"role {role!r} is not user, assistant, tool or system", file=trace.file, line=trace.line,
                           field=f"{trace.where}{field}.role")
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    turn: dict[str, Any] = {"role": role, "content": "" if content is None else as_text(content)}
    calls = message.get("tool_calls") or []
    if calls:
        turn["tool_calls"] = [{"id": c.get("id"), "name": (c.get("function") or c).get("name") or "",
                               "arguments": arguments((c.get("function") or c).get("arguments"))} for c in calls]
    if role == "tool" and message.get("tool_call_id"):
        turn["tool_call_id"] = str(message["tool_call_id"])
    return [turn]


def _documents(value: Any) -> list[str]:
    """A retriever's output → passages: a list of strings or of documents with page_content/content/text."""
    if isinstance(value, dict):
        value = next((value[k] for k in ("documents", "results", "output") if isinstance(value.get(k), list)), [value])
    if not isinstance(value, list):
        return [] if value is None else [as_text(value)]
    passages = []
    for doc in value:
        if isinstance(doc, dict):
            text = next((doc[k] for k in DOCUMENT_TEXT_KEYS if isinstance(doc.get(k), str)), None)
            passages.append(text if text is not None else as_text(doc))
        else:
            passages.append(as_text(doc))
    return passages


def _metadata(traces: list[_Trace], extra_scores: list[dict[str, Any]]) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for trace in traces:
        given = trace.raw.get("metadata")
        for key, value in (given if isinstance(given, dict) else {}).items():
            if value not in (None, "") and key not in metadata:
                metadata[str(key)] = meta.scalar(value)
    first = traces[0].raw
    for key, names in ((meta.CUSTOMER_ID, ("userId",)), (meta.BOT_VERSION, ("release", "version")),
                       ("environment", ("environment",)), ("trace_name", ("name",))):
        found = next((first[n] for n in names if first.get(n) not in (None, "")), None)
        if found is not None and key not in metadata:
            metadata[key] = meta.scalar(found)
    scores = [_score(s, t.id) for t in traces for s in (t.raw.get("scores") or []) if isinstance(s, dict)]
    scores += [_score(s, None) for s in extra_scores if isinstance(s, dict)]
    if scores:
        metadata[meta.LANGFUSE_SCORES] = scores
    session = traces[0].session
    metadata[meta.SOURCE] = {"format": "langfuse", "trace_id": traces[-1].id,
                             "trace_ids": [t.id for t in traces], **({"session_id": session} if session else {})}
    return metadata


def _score(score: dict[str, Any], trace_id: str | None) -> dict[str, Any]:
    value = score.get("value")
    if score.get("stringValue") is not None and str(score.get("dataType") or "").upper() == "CATEGORICAL":
        value = score["stringValue"]
    return {"name": str(score.get("name") or ""), "value": value, "data_type": score.get("dataType"),
            "comment": score.get("comment"), "source": score.get("source"),
            "trace_id": score.get("traceId") or trace_id, **({"observation_id": score["observationId"]}
                                                               if score.get("observationId") else {})}

