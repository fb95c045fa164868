"""The embedded judge starts on the first call the cache cannot answer: a warm rerun loads no model."""
from __future__ import annotations

import asyncio

from rubriceval import RubricEvalError
from rubriceval.judge.client import JudgeClient

SCHEMA = {"type": "object", "properties": {"feedback": {"type": "string"}, "score": {"type": "integer"}},
          "required": ["feedback", "score"]}


def ask(i: int) -> list[dict]:
    return [{"role": "user", "content": f"judge answer {i}"}]


class Starter:
    """Stands in for ensure_local_judge: counts starts, returns the stub's URL (or fails)."""

    def __init__(self, url: str | None, error: Exception | None = None):
        self.url, self.error, self.starts = url, error, 0

    def __call__(self) -> str:
        self.starts += 1
        if self.error:
            raise self.error
        return self.url


async def test_started_once_for_concurrent_calls_and_not_at_all_when_cached(stub_server, judge_config):
    starter = Starter(stub_server.base_url)
    client = JudgeClient(judge_config, base_url=starter)
    assert client.base_url is None and starter.starts == 0               # nothing started by constructing it
    answers = await asyncio.gather(*(client.complete(ask(i), json_schema=SCHEMA) for i in range(6)))
    assert all(a.ok for a in answers) and starter.starts == 1 and client.base_url == stub_server.base_url
    await client.close()

    warm_starter = Starter(None, RuntimeError("must not start"))
    warm = JudgeClient(judge_config, base_url=warm_starter)                # same cache file: all six are cached
    again = await asyncio.gather(*(warm.complete(ask(i), json_schema=SCHEMA) for i in range(6)))
    assert all(a.cached for a in again) and warm_starter.starts == 0 and stub_server.stats.calls["chat"] == 6
    await warm.close()


async def test_a_server_that_cannot_start_fails_the_run_once(judge_config):
    starter = Starter(None, RubricEvalError("the embedded judge could not be started: no model"))
    client = JudgeClient(judge_config, base_url=starter)
    results = await asyncio.gather(*(client.complete(ask(i), json_schema=SCHEMA) for i in range(4)),
                                   return_exceptions=True)
    assert all(isinstance(r, RubricEvalError) for r in results) and starter.starts == 1
    await client.close()


async def test_sampling_copies_share_the_started_server(stub_server, judge_config):
    import copy

    starter = Starter(stub_server.base_url)
    client = JudgeClient(judge_config, base_url=starter)
    variant = copy.copy(client)                       # as self-consistency makes them
    assert (await variant.complete(ask(1), json_schema=SCHEMA)).ok
    assert (await client.complete(ask(2), json_schema=SCHEMA)).ok
    assert starter.starts == 1 and client.base_url == variant.base_url == stub_server.base_url
    await client.close()
