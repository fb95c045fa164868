"""A tags cell holding JSON text of a list (issue 32.11): read as that list wherever tags arrive as text — a chat-log
export's column, a Sample/Conversation field, a CSV row — not split on the comma inside the JSON."""
from __future__ import annotations

from pathlib import Path

from rubriceval import Conversation, Sample
from rubriceval.data.chatlog import ChatLogConfig
from rubriceval.data.io import read_dataset


def test_sample_and_conversation_read_a_json_list_of_tags():
    assert Sample(id="a", question="q", tags='["售后组","W46"]').tags == ["售后组", "W46"]
    convo = Conversation(id="c", turns=[{"role": "user", "content": "在吗"}, {"role": "assistant", "content": "在"}],
                         tags='["售后组", "W46"]')
    assert convo.tags == ["售后组", "W46"]


def test_plain_tag_text_is_still_split_on_commas():
    assert Sample(id="a", question="q", tags="售后组，W46, VIP").tags == ["售后组", "W46", "VIP"]
    assert Sample(id="a", question="q", tags="[VIP], 售后").tags == ["[VIP]", "售后"]    # not JSON: two tags


def test_chat_log_export_with_a_json_tags_column(tmp_path: Path):
    path = tmp_path / "log.csv"
    path.write_text('conversation_id,turn_index,speaker,text,tags\n'
                    'c1,1,用户,在吗,"[""售后组"",""W46""]"\nc1,2,客服,您好,"[""售后组"",""W46""]"\n', encoding="utf-8")
    samples = read_dataset(path, chatlog=ChatLogConfig(speakers={"用户": "user", "客服": "assistant"}))
    assert [s.tags for s in samples] == [["售后组", "W46"]]


def test_single_turn_csv_tags_cell(tmp_path: Path):
    path = tmp_path / "d.csv"
    path.write_text('question,answer,tags\n你好,您好,"[""售后组"",""W46""]"\nq2,a2,"a, b"\n', encoding="utf-8")
    assert [s.tags for s in read_dataset(path)] == [["售后组", "W46"], ["a", "b"]]
