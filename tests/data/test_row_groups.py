"""Rows grouped by conversation in bounded memory (data/row_groups.py): the same groups, in the same order,
whether they stay in memory or spill to the temporary database — and a chat-log export read either way."""
from __future__ import annotations

import csv
import random

import pytest

from rubriceval.data import row_groups
from rubriceval.data.chatlog import ChatLogConfig, parse_speaker_map, read_chatlog
from rubriceval.data.row_groups import RowGroups


def _interleaved(n_groups: int, per_group: int, seed: int = 3) -> list[tuple[str, int, dict]]:
    rng = random.Random(seed)
    cursors = {f"g{g}": 0 for g in range(n_groups)}
    rows, line = [], 1
    while cursors:
        key = rng.choice(sorted(cursors))
        rows.append((key, line, {"k": key, "n": cursors[key], "text": "中文 ok"}))
        line += 1
        cursors[key] += 1
        if cursors[key] == per_group:
            del cursors[key]
    return rows


@pytest.mark.parametrize("spill_rows", [10_000, 7, 0])
def test_groups_in_order_of_first_appearance_rows_in_file_order(spill_rows):
    rows = _interleaved(30, 9)
    groups = RowGroups(spill_rows=spill_rows)
    for key, line, record in rows:
        groups.add(key, line, record)
    got = list(groups.groups())
    first_seen = list(dict.fromkeys(key for key, _, _ in rows))
    assert [key for key, _ in got] == first_seen
    for key, group in got:
        assert [r["n"] for _, r in group] == list(range(9))            # file order within the group
        assert [line for line, _ in group] == sorted(line for line, _ in group)
        assert all(r["k"] == key and r["text"] == "中文 ok" for _, r in group)
    assert (groups._db is None) and groups.rows == len(rows)          # closed after reading


def test_a_spilled_chatlog_reads_the_same_conversations(tmp_path, monkeypatch):
    path = tmp_path / "export.csv"
    rows = _interleaved(12, 6, seed=5)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["会话ID", "发送时间", "发言人", "内容", "技能组"])
        for key, line, record in rows:
            minute, second = divmod(line, 60)
            writer.writerow([key, f"2026-11-16 09:{minute:02d}:{second:02d}", "用户" if record["n"] % 2 == 0 else "客服",
                             f"{key} 第{record['n']}条", "售后组"])
    config = ChatLogConfig(speakers=parse_speaker_map("客服=assistant,用户=user"))
    in_memory = read_chatlog(path, config)
    monkeypatch.setattr(row_groups, "SPILL_ROWS", 5)
    spills = []
    original = RowGroups._spill
    monkeypatch.setattr(RowGroups, "_spill", lambda self: (spills.append(1), original(self))[1])
    spilled = read_chatlog(path, config)
    assert spills == [1]
    assert [c.model_dump() for c in spilled] == [c.model_dump() for c in in_memory]
    assert len(in_memory) == 12 and all(len(c.turns) == 6 for c in in_memory)
