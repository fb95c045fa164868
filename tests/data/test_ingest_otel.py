"""OpenTelemetry GenAI spans (OTLP/JSON, as a file exporter writes them) → conversations with metadata (issue 26.1b).

The fixture tests/fixtures/ingest/otel_genai_spans.jsonl is written from the published GenAI semantic conventions
and the OTLP JSON mapping: two ExportTraceServiceRequest lines; conversation conv-1001 spans two traces (an
invoke_agent root with two chat spans and an execute_tool span, then a second trace for the customer's next
message), a third trace carries no conversation id and uses the pre-1.37 per-message events, a fourth is an HTTP
span with no GenAI content.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubriceval.common.errors import DatasetError
from rubriceval.data.readers.otel import looks_like_otlp, read_otel

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ingest" / "otel_genai_spans.jsonl"


def _requests() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def _write(tmp_path: Path, requests: list[dict], name: str = "traces.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests), encoding="utf-8")
    return path


def _attribute(span: dict, key: str, value) -> None:
    span["attributes"] = [a for a in span["attributes"] if a["key"] != key]
    if value is not None:
        span["attributes"].append({"key": key, "value": value})


def test_one_conversation_per_conversation_id_across_traces():
    conversations = read_otel(FIXTURE)
    assert [c.id for c in conversations] == ["conv-1001", "4bf92f3577b34da6a3ce929d0e0e4736"]
    conv = conversations[0]
    assert [t.role for t in conv.turns] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    # The second chat span repeats the history; the next trace's span repeats it again: each message once.
    assert conv.turns[0].content == "我的订单A123还没到，怎么回事？"
    assert conv.turns[1].tool_calls[0].name == "get_order_status"
    assert conv.turns[1].tool_calls[0].arguments == {"order_id": "A123"}
    assert conv.turns[2].tool_call_id == "call_1" and json.loads(conv.turns[2].content)["status"] == "运输中"
    assert conv.turns[3].content.startswith("非常抱歉") and conv.turns[5].content.startswith("不客气")
    assert not any("电商客服助手" in t.content for t in conv.turns)       # system instructions are not turns


def test_span_attributes_become_metadata_with_the_standard_keys_and_utc_times():
    conv = read_otel(FIXTURE)[0]
    m = conv.metadata
    assert (m["agent_id"], m["agent_name"], m["bot_version"], m["customer_id"]) == \
        ("agent-aftersales", "售后助手", "2026.11.2", "cust-77")
    assert m["skill_group"] == "售后组" and m["channel"] == "app" and m["service.name"] == "cs-bot"
    assert m["gen_ai.request.model"] == "qwen-max"
    assert m["gen_ai.usage.input_tokens"] == 52                      # summed over the conversation's chat spans
    assert "gen_ai.input.messages" not in m and "gen_ai.operation.name" not in m
    assert (m["started_at"], m["ended_at"]) == ("2025-11-16T01:00:01Z", "2025-11-16T01:01:02Z")
    assert conv.turns[0].timestamp == "2025-11-16T01:00:01Z"
    source = m["source"]
    assert source["format"] == "otel" and source["trace_id"] == "5b8efff798038103d269b633813fc60c"
    assert source["span_id"] == "a000000000000001"                    # the invoke_agent root
    assert source["trace_ids"] == ["5b8efff798038103d269b633813fc60c", "0af7651916cd43dd8448eb211c80319c"]
    # Each bot reply names the chat span that said it (for per-turn evaluation events).
    assert source["turns"]["4"] == {"trace_id": "5b8efff798038103d269b633813fc60c", "span_id": "a000000000000004"}
    assert source["turns"]["6"]["span_id"] == "b000000000000001"


def test_older_per_message_events_and_a_trace_without_conversation_id():
    conv = read_otel(FIXTURE)[1]
    assert [(t.role, t.content) for t in conv.turns] == [
        ("user", "How do I return an item?"),
        ("assistant", "Open Orders, pick the item and tap Return within 7 days.")]
    assert conv.metadata["source"]["span_id"] == "c000000000000001"


def test_a_pretty_printed_single_document_reads_the_same(tmp_path):
    requests = _requests()
    merged = {"resourceSpans": requests[0]["resourceSpans"] + requests[1]["resourceSpans"]}
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(merged, ensure_ascii=False, indent=2), encoding="utf-8")
    assert [c.turns for c in read_otel(path)] == [c.turns for c in read_otel(FIXTURE)]


def test_execute_tool_span_supplies_a_result_the_chat_spans_do_not_show(tmp_path):
    requests = _requests()
    spans = requests[0]["resourceSpans"][0]["scopeSpans"][0]["spans"]
    second_chat = spans[3]
    messages = json.loads(next(a for a in second_chat["attributes"]
                               if a["key"] == "gen_ai.input.messages")["value"]["stringValue"])
    _attribute(second_chat, "gen_ai.input.messages",
               {"stringValue": json.dumps(messages[:2], ensure_ascii=False)})   # no tool result in the history
    _attribute(spans[2], "gen_ai.tool.call.result", {"stringValue": '{"status": "已签收"}'})
    conv = read_otel(_write(tmp_path, requests[:1]))[0]
    assert [t.role for t in conv.turns] == ["user", "assistant", "tool", "assistant"]
    assert conv.turns[2].content == '{"status": "已签收"}' and conv.turns[2].tool_call_id == "call_1"
    assert conv.metadata["source"]["turns"]["4"]["span_id"] == "a000000000000004"   # shifted past the tool turn


def test_structured_message_attributes_as_kvlist_values(tmp_path):
    """On spans the messages SHOULD be structured: an OTLP arrayValue of kvlistValues."""
    requests = _requests()
    chat = requests[1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    text = {"kvlistValue": {"values": [{"key": "type", "value": {"stringValue": "text"}},
                                       {"key": "content", "value": {"stringValue": "你好"}}]}}

    def message(role):
        return {"kvlistValue": {"values": [{"key": "role", "value": {"stringValue": role}},
                                           {"key": "parts", "value": {"arrayValue": {"values": [text]}}}]}}
    _attribute(chat, "gen_ai.input.messages", {"arrayValue": {"values": [message("user")]}})
    _attribute(chat, "gen_ai.output.messages", {"arrayValue": {"values": [message("assistant")]}})
    conv = next(c for c in read_otel(_write(tmp_path, [{"resourceSpans": requests[1]["resourceSpans"]}]))
                if c.id == "conv-1001")
    assert [(t.role, t.content) for t in conv.turns] == [("user", "你好"), ("assistant", "你好")]


def test_sniffing():
    assert looks_like_otlp(_requests()[0])
    assert not looks_like_otlp({"question": "q", "answer": "a"})


@pytest.mark.parametrize("breakage, where", [
    (lambda span: span.pop("traceId"), "resourceSpans[1].scopeSpans[1].spans[2].traceId"),
    (lambda span: _attribute(span, "gen_ai.input.messages", {"stringValue": "[{not json"}),
     "resourceSpans[1].scopeSpans[1].spans[2].attributes[gen_ai.input.messages]"),
    (lambda span: _attribute(span, "gen_ai.input.messages", {"stringValue": '{"role": "user"}'}),
     "resourceSpans[1].scopeSpans[1].spans[2].attributes[gen_ai.input.messages]"),
])
def test_errors_name_file_line_and_field(tmp_path, breakage, where):
    requests = _requests()
    breakage(requests[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][1])
    path = _write(tmp_path, requests)
    with pytest.raises(DatasetError) as err:
        read_otel(path)
    assert err.value.file == str(path) and err.value.line == 1 and err.value.field == where


def test_bad_json_line_and_not_a_trace_file(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(FIXTURE.read_text(encoding="utf-8").splitlines()[0] + "\n{oops\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="invalid JSON") as err:
        read_otel(path)
    assert err.value.line == 2
    logs = _write(tmp_path, [{"resourceLogs": []}], "logs.jsonl")
    with pytest.raises(DatasetError, match="no resourceSpans") as err:
        read_otel(logs)
    assert err.value.field == "resourceSpans"


def test_a_conversation_with_no_bot_reply_is_an_error_naming_its_span(tmp_path):
    requests = _requests()
    scope = requests[0]["resourceSpans"][0]["scopeSpans"][0]
    scope["spans"] = scope["spans"][:2]                   # the agent span and the first chat span, which
    _attribute(scope["spans"][1], "gen_ai.output.messages", None)      # recorded no reply
    path = _write(tmp_path, requests[:1])
    with pytest.raises(DatasetError, match="conv-1001.*no assistant turn") as err:
        read_otel(path)
    assert err.value.line == 1 and err.value.field.endswith("attributes[gen_ai.conversation.id]")


def test_a_span_time_that_is_not_nanoseconds_names_its_field(tmp_path):
    requests = _requests()
    requests[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["startTimeUnixNano"] = "2025-11-16T01:00:00Z"
    with pytest.raises(DatasetError, match="not a time in Unix nanoseconds") as err:
        read_otel(_write(tmp_path, requests))
    assert err.value.field == "resourceSpans[1].scopeSpans[1].spans[3].startTimeUnixNano"
    requests = _requests()
    requests[1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0] = "not a span"
    with pytest.raises(DatasetError, match="must be a JSON object") as err:
        read_otel(_write(tmp_path, requests))
    assert (err.value.line, err.value.field) == (2, "resourceSpans[1].scopeSpans[1].spans[1]")


def test_spans_spilled_to_the_temporary_database_read_the_same(monkeypatch):
    from rubriceval.data.readers import otel
    from rubriceval.data.row_groups import RowGroups

    in_memory = read_otel(FIXTURE)
    monkeypatch.setattr(otel, "SPANS_IN_MEMORY", 1)
    spills = []
    original = RowGroups._spill
    monkeypatch.setattr(RowGroups, "_spill", lambda self: (spills.append(1), original(self))[1])
    assert [c.model_dump() for c in read_otel(FIXTURE)] == [c.model_dump() for c in in_memory]
    assert spills == [1]
