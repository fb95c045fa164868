"""Conversation data: our shape, OpenAI messages, Ragas MultiTurnSample, flat chat-log exports, and bad input
(unknown role, no assistant turn, an unanswered tool result, turns out of order) named by file:line [field]."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from rubriceval import DatasetError, Sample, read_dataset
from rubriceval.data.chatlog import ChatLogConfig, parse_speaker_map, read_chatlog
from rubriceval.data.io import read_conversations

OPENAI = {"id": "oa-1", "tags": ["查单"], "messages": [
    {"role": "system", "content": "你是客服"},
    {"role": "user", "content": "帮我查一下订单 A100"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "order_lookup", "arguments": "{\"order_id\": \"A100\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"status\": \"已发货\"}"},
    {"role": "assistant", "content": "您的订单已发货。"}]}

RAGAS = {"user_input": [
    {"content": "订单 A100 到哪了？", "type": "human"},
    {"content": "我查一下。", "type": "ai", "tool_calls": [{"name": "order_lookup", "args": {"order_id": "A100"}}]},
    {"content": "已发货", "type": "tool"},
    {"content": "已发货，预计明天送达。", "type": "ai"}],
    "reference": "告知物流状态和送达时间", "reference_tool_calls": [{"name": "order_lookup", "args": {"order_id": "A100"}}],
    "reference_topics": ["物流"]}


def write_jsonl(path, records):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return path


def test_openai_messages_are_read_as_they_are(tmp_path):
    [conv] = read_conversations(write_jsonl(tmp_path / "c.jsonl", [OPENAI]))
    assert [t.role for t in conv.turns] == ["system", "user", "assistant", "tool", "assistant"]
    call = conv.turns[2].tool_calls[0]
    assert (call.name, call.arguments, call.id) == ("order_lookup", {"order_id": "A100"}, "call_1")
    assert conv.turns[2].content == "" and conv.tags == ["查单"]


def test_ragas_multiturn_sample_is_read_as_it_is(tmp_path):
    [conv] = read_conversations(write_jsonl(tmp_path / "r.jsonl", [RAGAS]))
    assert conv.id == "conv-1"
    assert [t.role for t in conv.turns] == ["user", "assistant", "tool", "assistant"]
    assert conv.turns[1].tool_calls[0].arguments == {"order_id": "A100"}
    assert conv.reference_outcome == "告知物流状态和送达时间"
    assert conv.reference_tool_calls[0].name == "order_lookup" and conv.reference_topics == ["物流"]


def test_json_list_and_mixed_dataset(tmp_path):
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([OPENAI, {"id": "single", "question": "你好", "answer": "您好"}], ensure_ascii=False),
                    encoding="utf-8")
    samples = read_dataset(path)
    assert [s.conversation is not None for s in samples] == [True, False]
    conv_sample = samples[0]
    # The one-line view of a conversation: its first user turn and last assistant turn.
    assert (conv_sample.question, conv_sample.answer) == ("帮我查一下订单 A100", "您的订单已发货。")


def test_single_turn_samples_dump_and_hash_as_before():
    sample = Sample(id="a", question="q", answer="x")
    assert "conversation" not in sample.model_dump()
    assert "conversation" not in sample.model_dump_json()


def test_conversation_survives_a_store_round_trip(tmp_path):
    [sample] = read_dataset(write_jsonl(tmp_path / "c.jsonl", [OPENAI]))
    again = Sample.model_validate_json(sample.model_dump_json())
    assert again.conversation == sample.conversation
    assert again.input_hash() == sample.input_hash()
    edited = sample.conversation.model_copy(deep=True)
    edited.turns[-1].content = "改过的回答"
    assert Sample(**{**sample.model_dump(), "conversation": edited}).input_hash() != sample.input_hash()


@pytest.mark.parametrize("conversation, field, words", [
    ({"turns": [{"role": "user", "content": "hi"}, {"role": "客服", "content": "hello"}]}, "turns[2].role", "客服"),
    ({"turns": [{"role": "user", "content": "hi"}]}, "turns", "no assistant turn"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_9", "content": "{}"},
                   {"role": "assistant", "content": "ok"}]}, "messages[2].tool_call_id", "call_9"),
    ({"user_input": [{"type": "human", "content": "hi"}, {"type": "tool", "content": "{}"},
                     {"type": "ai", "content": "ok"}]}, "user_input[2].role", "no preceding tool call"),
    ({"turns": [{"role": "user", "content": "a", "index": 2}, {"role": "assistant", "content": "b", "index": 1}]},
     "turns[2].index", "out of order"),
    ({"turns": [{"role": "user", "content": "a", "timestamp": "2024-05-01 10:00:05"},
                {"role": "assistant", "content": "b", "timestamp": "2024-05-01 09:59:00"}]},
     "turns[2].timestamp", "out of order"),
    ({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "tool_calls": [
        {"id": "c", "function": {"name": "f", "arguments": "{oops"}}]}]}, "messages[2].tool_calls[1]", "not valid JSON"),
])
def test_bad_conversations_name_file_line_and_field(tmp_path, conversation, field, words):
    path = write_jsonl(tmp_path / "bad.jsonl", [OPENAI, conversation])
    with pytest.raises(DatasetError) as err:
        read_dataset(path)
    assert err.value.file == str(path) and err.value.line == 2
    assert err.value.field == field
    assert words in err.value.message


def test_duplicate_conversation_ids_are_refused(tmp_path):
    with pytest.raises(DatasetError, match="duplicate id 'oa-1'"):
        read_dataset(write_jsonl(tmp_path / "d.jsonl", [OPENAI, OPENAI]))


CHATLOG_ROWS = [
    {"会话ID": "s2", "序号": 1, "发言人": "用户", "内容": "我的快递三天没动了"},
    {"会话ID": "s1", "序号": 1, "发言人": "用户", "内容": "我要退款"},
    {"会话ID": "s1", "序号": 2, "发言人": "机器人", "内容": "请先提供手机号后四位验证身份。"},
    {"会话ID": "s2", "序号": 2, "发言人": "客服", "内容": "非常抱歉，我帮您查询。"},
    {"会话ID": "s1", "序号": 3, "发言人": "用户", "内容": "1234"},
    {"会话ID": "s1", "序号": 4, "发言人": "客服", "内容": "验证通过，已为您提交退款。"},
]
SPEAKERS = "客服=assistant,机器人=assistant,用户=user"


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".jsonl"])
def test_chatlog_export_groups_rows_into_conversations(tmp_path, suffix):
    path = tmp_path / f"export{suffix}"
    frame = pd.DataFrame(CHATLOG_ROWS)
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        write_jsonl(path, CHATLOG_ROWS)
    samples = read_dataset(path, chatlog=ChatLogConfig(speakers=parse_speaker_map(SPEAKERS)))
    assert [s.id for s in samples] == ["s2", "s1"]
    s1 = samples[1].conversation
    assert [t.role for t in s1.turns] == ["user", "assistant", "user", "assistant"]
    assert [t.speaker for t in s1.turns] == ["用户", "机器人", "用户", "客服"]
    assert s1.turns[3].content == "验证通过，已为您提交退款。" and s1.turns[3].index == 4


def test_chatlog_unmapped_speaker_names_line_and_lists_speakers(tmp_path):
    path = write_jsonl(tmp_path / "export.jsonl", CHATLOG_ROWS)
    with pytest.raises(DatasetError) as err:
        read_dataset(path, chatlog=ChatLogConfig(speakers=parse_speaker_map("客服=assistant,用户=user")))
    assert (err.value.line, err.value.field) == (3, "发言人")
    assert "机器人" in err.value.message and "speakers seen: 用户, 机器人, 客服" in err.value.message
    # Without any mapping, the file is still recognised as a chat log by its headers, and the error says so.
    with pytest.raises(DatasetError, match="speaker '用户' has no role"):
        read_dataset(path)


def test_chatlog_out_of_order_and_missing_assistant(tmp_path):
    rows = [dict(r) for r in CHATLOG_ROWS]
    rows[4]["序号"] = 2          # s1: index 2 twice
    path = write_jsonl(tmp_path / "ooo.jsonl", rows)
    with pytest.raises(DatasetError) as err:
        read_chatlog(path, ChatLogConfig(speakers=parse_speaker_map(SPEAKERS)))
    assert (err.value.line, err.value.field) == (5, "序号") and "out of order" in err.value.message
    only_user = write_jsonl(tmp_path / "only_user.jsonl", [{"会话ID": "x", "序号": 1, "发言人": "用户", "内容": "在吗"}])
    with pytest.raises(DatasetError) as err:
        read_chatlog(only_user, ChatLogConfig(speakers=parse_speaker_map(SPEAKERS)))
    assert err.value.line == 1 and "conversation 'x'" in err.value.message and "no assistant turn" in err.value.message


def test_chatlog_bad_index_and_missing_columns(tmp_path):
    rows = [dict(r) for r in CHATLOG_ROWS]
    rows[2]["序号"] = "第二句"
    with pytest.raises(DatasetError) as err:
        read_chatlog(write_jsonl(tmp_path / "i.jsonl", rows), ChatLogConfig(speakers=parse_speaker_map(SPEAKERS)))
    assert (err.value.line, err.value.field) == (3, "序号")
    no_order = [{k: v for k, v in r.items() if k != "序号"} for r in CHATLOG_ROWS]
    with pytest.raises(DatasetError, match="no turn index or timestamp"):
        read_chatlog(write_jsonl(tmp_path / "n.jsonl", no_order), ChatLogConfig(speakers=parse_speaker_map(SPEAKERS)))


def test_chatlog_dataset_config_yaml_with_custom_columns(tmp_path):
    rows = [{"sid": r["会话ID"], "n": r["序号"], "who": r["发言人"], "msg": r["内容"]} for r in CHATLOG_ROWS]
    write_jsonl(tmp_path / "raw.jsonl", rows)
    config = tmp_path / "chats.yaml"
    config.write_text("file: raw.jsonl\ncolumns: {conversation_id: sid, turn_index: n, speaker: who, text: msg}\n"
                      "speakers: {客服: assistant, 机器人: assistant, 用户: user}\n", encoding="utf-8")
    samples = read_dataset(config)
    assert [s.id for s in samples] == ["s2", "s1"] and samples[1].conversation.turns[1].speaker == "机器人"
    config.write_text("file: raw.jsonl\ncolumns: {conversation_id: session, speaker: who, text: msg}\n",
                      encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_dataset(config)
    assert err.value.field == "columns.conversation_id" and "'session' not found" in err.value.message


@pytest.mark.parametrize("text, words", [("客服assistant", "not speaker=role"), ("客服=robot", "'robot' is not a role")])
def test_speaker_map_errors_name_the_flag(text, words):
    with pytest.raises(DatasetError) as err:
        parse_speaker_map(text)
    assert err.value.field == "--speaker-map" and words in err.value.message


def test_speaker_map_accepts_full_width_commas():
    assert parse_speaker_map("客服=assistant，用户=user") == {"客服": "assistant", "用户": "user"}


def test_run_dry_run_reads_a_chatlog_with_the_speaker_map_flag(tmp_path, capsys):
    from rubriceval.cli import main

    export = tmp_path / "export.csv"
    pd.DataFrame(CHATLOG_ROWS).to_csv(export, index=False)
    argv = ["run", str(export), "--rubrics", "rubrics/closing.yaml", "--dry-run", "--store", str(tmp_path / "r.db")]
    assert main(argv) == 2
    assert "speaker '用户' has no role" in capsys.readouterr().err
    assert main([*argv, "--speaker-map", SPEAKERS]) == 0
    plan = capsys.readouterr().out
    # Per conversation: the holistic judgment, and closing's question about the last turn (its phrases do not match
    # these closings, so the final_turn check asks the judge: rubrics/closing.yaml, issue 28).
    assert "closing" in plan and "total: 4 judge call(s)" in plan
