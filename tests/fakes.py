"""A scripted in-process judge with JudgeClient's interface, for fast unit tests of the arithmetic."""
from __future__ import annotations

import json
from typing import Callable

from rubriceval.judge.client import CallStats, JudgeResponse
from rubriceval.judge.config import JudgeConfig


class ScriptedJudge:
    def __init__(self, reply: Callable[[list[dict]], str] | list[str], structured: str = "json_schema"):
        self.config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="scripted", structured=structured,
                                  cache=False)
        self.stats = CallStats()
        self._reply = reply
        self.requests: list[list[dict]] = []

    async def complete(self, messages, *, json_schema=None, schema_name="verdict", cache_tag="", use_cache=True):
        self.requests.append(messages)
        self.stats.calls += 1
        self.stats.requests += 1
        text = self._reply(messages) if callable(self._reply) else self._reply[len(self.requests) - 1]
        data = None
        if json_schema is not None:
            try:
                data = json.loads(text)
            except (json.JSONDecodeError, TypeError):
                data = None
        return JudgeResponse(text=text, data=data if isinstance(data, dict) else None, prompt_tokens=100,
                             completion_tokens=20)

    async def close(self):
        pass
