"""Langfuse trace and session exports → conversations with metadata and the scores they already had (issue 26.1c).

Fixtures (tests/fixtures/ingest/) written from Langfuse's published API shapes: langfuse_traces.jsonl holds three
TraceWithFullDetails (two in session sess-42, with RETRIEVER, TOOL and GENERATION observations and scores; one
without a session, in +08:00), langfuse_session.json one session (GET /api/public/sessions/{id}) whose traces are
listed out of order.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubriceval.common.errors import DatasetError
from rubriceval.data.readers.langfuse import looks_like_langfuse, read_langfuse

FIXTURES = Path(__file__).parents[1] / "fixtures" / "ingest"
TRACES = FIXTURES / "langfuse_traces.jsonl"
SESSION = FIXTURES / "langfuse_session.json"


def _traces() -> list[dict]:
    return [json.loads(line) for line in TRACES.read_text(encoding="utf-8").splitlines()]


def _write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_traces_of_a_session_are_one_conversation():
    conversations = read_langfuse(TRACES)
    assert [c.id for c in conversations] == ["sess-42", "tr-0100"]
    conv = conversations[0]
    assert [(t.role, bool(t.tool_calls)) for t in conv.turns] == [
        ("user", False), ("assistant", False), ("user", False), ("assistant", True), ("tool", False),
        ("assistant", False)]
    # The second generation's input repeats the first exchange and the system prompt: read once, system left out.
    assert conv.turns[2].content == "订单B77的退款到了吗？"
    assert conv.turns[3].tool_calls[0].name == "get_refund_status"
    assert conv.turns[3].tool_calls[0].arguments == {"order_id": "B77"}
    assert conv.turns[4].tool_call_id == "obs-t1" and "已退款" in conv.turns[4].content
    assert conv.turns[1].contexts == ["退款审核通过后1-3个工作日原路退回。"]      # the RETRIEVER's output


def test_metadata_standard_keys_scores_and_source():
    conv = read_langfuse(TRACES)[0]
    m = conv.metadata
    assert (m["agent_id"], m["agent_name"], m["skill_group"], m["channel"]) == ("A-07", "小李", "退款组", "微信")
    assert (m["customer_id"], m["bot_version"], m["environment"]) == ("cust-88", "2026.11.3", "production")
    assert (m["started_at"], m["ended_at"]) == ("2025-11-17T02:00:00Z", "2025-11-17T02:01:01Z")
    assert m["langfuse_scores"] == [
        {"name": "user_feedback", "value": 1, "data_type": "NUMERIC", "comment": "有用", "source": "API",
         "trace_id": "tr-0001"},
        {"name": "tone", "value": "polite", "data_type": "CATEGORICAL", "comment": None, "source": "ANNOTATION",
         "trace_id": "tr-0002"}]
    assert m["source"]["session_id"] == "sess-42" and m["source"]["trace_ids"] == ["tr-0001", "tr-0002"]
    assert m["source"]["turns"]["2"] == {"trace_id": "tr-0001", "observation_id": "obs-g1"}
    assert m["source"]["turns"]["6"] == {"trace_id": "tr-0002", "observation_id": "obs-g2"}
    assert conv.tags == ["售后"]


def test_a_trace_without_session_with_dict_input_output_and_an_offset_timestamp():
    conv = read_langfuse(TRACES)[1]
    assert [(t.role, t.content) for t in conv.turns] == [
        ("user", "How long does shipping take?"), ("assistant", "Standard shipping takes 3-5 business days.")]
    assert conv.turns[0].timestamp == "2025-11-17T02:30:00Z"           # 10:30+08:00 stored in UTC
    assert conv.metadata["bot_version"] == "v5" and "session_id" not in conv.metadata["source"]


def test_a_session_export_orders_its_traces_by_timestamp():
    conv = read_langfuse(SESSION)[0]
    assert conv.id == "sess-7"
    assert [t.content for t in conv.turns] == ["快递显示签收了但我没收到", "非常抱歉！请问包裹单号是多少？", "SF1234",
                                               "已为您登记丢件调查，24小时内会有专员联系您。"]
    assert conv.metadata["source"]["trace_ids"] == ["tr-0701", "tr-0702"]
    assert conv.metadata["channel"] == "app"                        # first trace's value, others add keys


def test_an_api_page_and_a_json_list(tmp_path):
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"data": _traces(), "meta": {"page": 1, "limit": 50, "totalItems": 3}},
                               ensure_ascii=False), encoding="utf-8")
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(_traces(), ensure_ascii=False), encoding="utf-8")
    expected = [c.turns for c in read_langfuse(TRACES)]
    assert [c.turns for c in read_langfuse(page)] == expected == [c.turns for c in read_langfuse(listed)]


def test_sniffing():
    assert looks_like_langfuse(_traces()[0])
    assert looks_like_langfuse(json.loads(SESSION.read_text(encoding="utf-8")))
    assert not looks_like_langfuse({"question": "q", "answer": "a"})
    assert not looks_like_langfuse({"resourceSpans": []})


def test_errors_name_file_line_and_field(tmp_path):
    records = _traces()
    records[1]["timestamp"] = "yesterday"
    with pytest.raises(DatasetError, match="not a date-time") as err:
        read_langfuse(_write(tmp_path, records))
    assert (err.value.line, err.value.field) == (2, "timestamp")

    records = _traces()
    records[2].pop("id")
    with pytest.raises(DatasetError, match="without id") as err:
        read_langfuse(_write(tmp_path, records))
    assert (err.value.line, err.value.field) == (3, "id")

    records = _traces()
    records[0]["observations"] = ["obs-r1", "obs-g1"]           # the trace list gives observation ids only
    with pytest.raises(DatasetError, match="observations must be a list of objects") as err:
        read_langfuse(_write(tmp_path, records))
    assert (err.value.line, err.value.field) == (1, "observations")

    records = _traces()
    records[2]["input"] = [{"role": "customer", "content": "hi"}]
    with pytest.raises(DatasetError, match="role 'customer'") as err:
        read_langfuse(_write(tmp_path, records))
    assert (err.value.line, err.value.field) == (3, "input[1].role")

    session = json.loads(SESSION.read_text(encoding="utf-8"))
    session["traces"] = session["traces"][1:]            # the first exchange alone, which recorded no reply
    session["traces"][0]["output"] = None
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DatasetError, match="sess-7.*no assistant turn") as err:
        read_langfuse(path)
    assert err.value.field == "traces[1].input"


def test_trace_format_sniffs_exports_and_leaves_datasets_alone():
    from rubriceval.data.readers.formats import trace_format

    datasets = Path(__file__).parents[2] / "datasets"
    assert trace_format(TRACES) == trace_format(SESSION) == "langfuse"
    assert trace_format(FIXTURES / "otel_genai_spans.jsonl") == "otel"
    assert trace_format(datasets / "demo_zh.jsonl") is None
    assert trace_format(datasets / "demo_conversations_zh.jsonl") is None


def test_traces_spilled_to_the_temporary_database_read_the_same(monkeypatch):
    from rubriceval.data.readers import langfuse
    from rubriceval.data.row_groups import RowGroups

    in_memory = read_langfuse(TRACES) + read_langfuse(SESSION)
    monkeypatch.setattr(langfuse, "TRACES_IN_MEMORY", 1)
    spills = []
    original = RowGroups._spill
    monkeypatch.setattr(RowGroups, "_spill", lambda self: (spills.append(1), original(self))[1])
    spilled = read_langfuse(TRACES) + read_langfuse(SESSION)
    assert [c.model_dump() for c in spilled] == [c.model_dump() for c in in_memory]
    assert spills == [1, 1]
