"""Synthetic contact-centre data for the segment, trend, incremental and sampling-plan tests: conversations with
agent id, skill group and start time in their metadata, judged by a checks-only conversation rubric (no judge)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rubriceval import Rubric

LEVELS = {1: "差", 2: "较差", 3: "一般", 4: "好", 5: "很好"}
# 5 when the bot apologises (抱歉) in the conversation, 1 when it does not: a score the test decides per conversation.
APOLOGY = Rubric(id="apology", name="致歉", criterion="回复中是否致歉", score_descriptions=LEVELS, scope="conversation",
                 threshold=4, items=[{"id": "sorry", "type": "must_mention", "phrases": ["抱歉"], "must": True}],
                 combine={"rule": "min"})


def conversation(cid: str, *, agent: str, group: str, start: datetime, good: bool, turns: int = 2,
                 tags: list[str] | None = None, **metadata: Any) -> dict[str, Any]:
    """One conversation record (JSONL shape) starting at `start`, each message a minute apart."""
    messages = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"我的订单{cid}还没到", "timestamp": _iso(start + timedelta(minutes=2 * i))})
        reply = ("非常抱歉，" if good else "") + "您的包裹正在派送。"
        messages.append({"role": "assistant", "content": reply, "timestamp": _iso(start + timedelta(minutes=2 * i + 1))})
    return {"id": cid, "messages": messages, "tags": tags or [],
            "metadata": {"agent_id": agent, "skill_group": group, "started_at": _iso(start), **metadata}}


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_jsonl(path: Path, records: list[dict[str, Any]], mode: str = "w") -> Path:
    with path.open(mode, encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path
