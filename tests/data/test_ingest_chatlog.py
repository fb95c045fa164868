"""Flat chat-log exports as a contact centre writes them (issue 26.1a): every extra column kept as metadata under the
standard keys, speakers dropped or marked system, turns ordered by timestamp when there is no index, the export's
time zone applied and UTC stored, errors naming file, line and field."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rubriceval.common.errors import DatasetError
from rubriceval.data.chatlog import ChatLogConfig, parse_speaker_map, read_chatlog
from rubriceval.data.io import read_dataset

DATASETS = Path(__file__).parents[2] / "datasets"
EXAMPLE = DATASETS / "chatlog_week_zh.yaml"          # the docs/ingest.md example
HEADER = ["会话ID", "发送时间", "发言人", "内容", "客服工号", "技能组", "渠道"]


def _csv(tmp_path: Path, rows: list[list[str]], header: list[str] = HEADER, name: str = "export.csv") -> Path:
    path = tmp_path / name
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _config(tmp_path: Path, export: Path, extra: str = "") -> Path:
    path = tmp_path / "chats.yaml"
    path.write_text(f"file: {export.name}\nspeakers: {{客服: assistant, 用户: user}}\n{extra}", encoding="utf-8")
    return path


def test_the_documented_example_reads_metadata_speakers_order_and_utc():
    by_id = {c.id: c for c in read_chatlog(EXAMPLE)}
    c1, c2 = by_id["c-001"], by_id["c-002"]
    assert (c1.metadata["agent_id"], c1.metadata["agent_name"], c1.metadata["skill_group"], c1.metadata["channel"],
            c1.metadata["bot_version"], c1.metadata["customer_id"]) == ("A-07", "小李", "售后组", "app", "2026.11.2",
                                                                      "cust-88")
    assert c1.metadata["满意度"] == "5"                              # an extra column under its own header
    # 系统 is kept as a system turn; 满意度机器人 is dropped.
    assert [(t.role, t.speaker) for t in c1.turns] == [
        ("user", "用户"), ("assistant", "机器人"), ("user", "用户"), ("system", "系统"), ("assistant", "客服"),
        ("user", "用户")]
    # c-002's last message is the export's first row: no index column, so the turns follow the timestamps.
    assert [t.content for t in c2.turns][-1].startswith("抱歉让您久等了")
    # 2026-11-17 07:30 in Asia/Shanghai is 2026-11-16 23:30 UTC: the stored date is the UTC one.
    assert c2.turns[0].timestamp == "2026-11-16T23:30:00Z"
    assert (c2.metadata["started_at"], c2.metadata["ended_at"]) == ("2026-11-16T23:30:00Z", "2026-11-16T23:31:05Z")
    assert c2.metadata["source"] == {"format": "chatlog"}      # no file or line: the hash survives a move


def test_samples_carry_the_metadata_for_segments():
    samples = read_dataset(EXAMPLE)
    assert {s.id: s.metadata["skill_group"] for s in samples} == {"c-001": "售后组", "c-002": "退款组"}
    assert all(s.metadata == s.conversation.metadata for s in samples)


def test_default_headers_fill_the_standard_keys_without_a_config(tmp_path):
    path = _csv(tmp_path, [["s1", "2026-11-16 09:00:00", "用户", "在吗", "A-1", "售后组", "app"],
                           ["s1", "2026-11-16 09:00:03", "客服", "您好，请讲", "A-1", "售后组", "app"]])
    conv = read_dataset(path, chatlog=ChatLogConfig(speakers=parse_speaker_map("客服=assistant,用户=user")))[0]
    assert (conv.metadata["agent_id"], conv.metadata["skill_group"], conv.metadata["channel"]) == \
        ("A-1", "售后组", "app")
    assert "客服工号" not in conv.metadata                            # mapped, not kept twice
    assert conv.conversation.turns[0].timestamp == "2026-11-16T09:00:00Z"    # no zone configured: UTC


def test_a_transfer_between_agents_lists_every_agent(tmp_path):
    export = _csv(tmp_path, [["s1", "2026-11-16 09:00:00", "用户", "在吗", "", "售后组", "app"],
                             ["s1", "2026-11-16 09:00:03", "客服", "您好", "A-1", "售后组", "app"],
                             ["s1", "2026-11-16 09:05:00", "客服", "我是主管", "A-9", "投诉组", "app"]])
    conv = read_chatlog(_config(tmp_path, export))[0]
    assert conv.metadata["agent_id"] == "A-1" and conv.metadata["skill_group"] == "售后组"
    assert conv.metadata["varying"] == {"agent_id": ["A-1", "A-9"], "skill_group": ["售后组", "投诉组"]}


def test_named_metadata_columns_and_an_offset_that_overrides_the_zone(tmp_path):
    header = ["sid", "ts", "who", "msg", "staff", "queue"]
    export = _csv(tmp_path, [["s1", "2026-11-16T09:00:00+09:00", "用户", "hi", "S-1", "vip"],
                             ["s1", "2026-11-16 08:00:05", "客服", "hello", "S-1", "vip"]], header=header)
    config = _config(tmp_path, export, "timezone: Asia/Shanghai\n"
                                       "columns: {conversation_id: sid, timestamp: ts, speaker: who, text: msg}\n"
                                       "metadata: {agent_id: staff, skill_group: queue}\n")
    conv = read_chatlog(config)[0]
    assert [t.timestamp for t in conv.turns] == ["2026-11-16T00:00:00Z", "2026-11-16T00:00:05Z"]
    assert (conv.metadata["agent_id"], conv.metadata["skill_group"]) == ("S-1", "vip")


def test_drop_and_system_from_the_speaker_map_flag(tmp_path):
    export = _csv(tmp_path, [["s1", "2026-11-16 09:00:00", "用户", "在吗", "", "", ""],
                             ["s1", "2026-11-16 09:00:01", "提示", "请稍候", "", "", ""],
                             ["s1", "2026-11-16 09:00:02", "系统", "已转人工", "", "", ""],
                             ["s1", "2026-11-16 09:00:03", "客服", "您好", "", "", ""]])
    speakers = parse_speaker_map("客服=assistant,用户=user,提示=drop,系统=system")
    conv = read_chatlog(export, ChatLogConfig(speakers=speakers))[0]
    assert [t.role for t in conv.turns] == ["user", "system", "assistant"]
    with pytest.raises(DatasetError, match="'skip' is not a role") as err:
        parse_speaker_map("提示=skip")
    assert "drop" in err.value.hint


def test_a_timestamp_that_does_not_parse_names_file_line_and_column(tmp_path):
    export = _csv(tmp_path, [["s1", "2026-11-16 09:00:00", "用户", "在吗", "", "", ""],
                             ["s1", "昨天下午", "客服", "您好", "", "", ""]])
    with pytest.raises(DatasetError, match="'昨天下午' is not a date-time") as err:
        read_chatlog(_config(tmp_path, export))
    assert (err.value.file, err.value.line, err.value.field) == (str(export), 3, "发送时间")


def test_a_conversation_id_missing_on_some_rows_names_the_row(tmp_path):
    export = _csv(tmp_path, [["s1", "2026-11-16 09:00:00", "用户", "在吗", "", "", ""],
                             ["", "2026-11-16 09:00:01", "客服", "您好", "", "", ""]])
    with pytest.raises(DatasetError, match="empty conversation id") as err:
        read_chatlog(_config(tmp_path, export))
    assert (err.value.line, err.value.field) == (3, "会话ID")


def test_config_errors_name_the_config_field(tmp_path):
    export = _csv(tmp_path, [["s1", "2026-11-16 09:00:00", "用户", "在吗", "", "", ""]])
    with pytest.raises(DatasetError, match="unknown time zone 'Mars/Olympus'") as err:
        read_chatlog(_config(tmp_path, export, "timezone: Mars/Olympus\n"))
    assert err.value.field == "timezone" and err.value.file.endswith("chats.yaml")
    with pytest.raises(DatasetError, match="column '坐席' not found") as err:
        read_chatlog(_config(tmp_path, export, "metadata: {agent_id: 坐席}\n"))
    assert err.value.field == "metadata.agent_id"
    with pytest.raises(DatasetError) as err:
        read_chatlog(_config(tmp_path, export, "metadata: {queue: 技能组}\n"))
    assert err.value.field == "metadata.queue"                       # only the standard keys are named here


def test_every_row_from_dropped_speakers_is_an_error(tmp_path):
    export = _csv(tmp_path, [["s1", "2026-11-16 09:00:00", "提示", "请稍候", "", "", ""],
                             ["s2", "2026-11-16 09:00:00", "用户", "在吗", "", "", ""],
                             ["s2", "2026-11-16 09:00:01", "客服", "您好", "", "", ""]])
    with pytest.raises(DatasetError, match="'s1': every row is from a dropped speaker") as err:
        read_chatlog(export, ChatLogConfig(speakers=parse_speaker_map("客服=assistant,用户=user,提示=drop")))
    assert err.value.line == 2


def test_a_moved_export_keeps_every_conversation_hash(tmp_path):
    """Incremental runs compare input hashes: where the export lies must not enter them."""
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    for name in ("chatlog_week_zh.csv", "chatlog_week_zh.yaml"):
        (moved / name).write_bytes((DATASETS / name).read_bytes())
    here = {s.id: s.input_hash() for s in read_dataset(EXAMPLE)}
    assert {s.id: s.input_hash() for s in read_dataset(moved / "chatlog_week_zh.yaml")} == here
    otel = Path(__file__).parents[1] / "fixtures" / "ingest" / "otel_genai_spans.jsonl"
    (moved / "t.jsonl").write_bytes(otel.read_bytes())
    assert [s.input_hash() for s in read_dataset(otel)] == [s.input_hash() for s in read_dataset(moved / "t.jsonl")]


@pytest.mark.parametrize("cell, stored", [("1763254800", "2025-11-16T01:00:00Z"), ("1763254800000", "2025-11-16T01:00:00Z"),
                                          ("45981.375", None)])
def test_numeric_timestamps_are_unix_time_and_an_excel_serial_is_refused(tmp_path, cell, stored):
    export = _csv(tmp_path, [["s1", cell, "用户", "在吗", "", "", ""], ["s1", cell, "客服", "您好", "", "", ""]])
    if stored is None:
        with pytest.raises(DatasetError, match="not a date-time") as err:
            read_chatlog(_config(tmp_path, export))
        assert (err.value.line, err.value.field) == (2, "发送时间")
    else:
        assert read_chatlog(_config(tmp_path, export))[0].turns[0].timestamp == stored
