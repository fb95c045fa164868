"""One call to the bot under test with a timeout and retries — the rule every collection (questions or
conversation turns) follows.

Timeouts and transient errors (HTTP 5xx/429, connection refused, any exception from user code) are retried with
exponential backoff and jitter; a contract error (a reply of the wrong shape, HTTP 4xx) is not: the same input
breaks the same way again.
"""
from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable

from pydantic import BaseModel

from rubriceval.collect.targets import TargetContractError, TargetReply, TransientTargetError


class Attempted(BaseModel):
    """The reply, or the last error with "(after N attempt(s))"; always the attempts and the time spent."""

    reply: TargetReply | None = None
    error: str | None = None
    attempts: int = 0
    latency_s: float = 0.0


async def ask_with_retries(call: Callable[[], Awaitable[TargetReply]], *, timeout_s: float, retries: int,
                           backoff_s: float) -> Attempted:
    started = time.perf_counter()
    error = ""
    attempts = 0
    while attempts <= retries:
        attempts += 1
        try:
            reply = await asyncio.wait_for(call(), timeout=timeout_s)
            return Attempted(reply=reply, attempts=attempts, latency_s=time.perf_counter() - started)
        except asyncio.TimeoutError:
            error = f"timed out after {timeout_s:g}s"
        except TargetContractError as exc:
            error = str(exc)
            break                      # the same input will break the same way again
        except TransientTargetError as exc:
            error = str(exc)
        except Exception as exc:       # noqa: BLE001 — the target is user code; any failure is recorded per row
            error = f"{type(exc).__name__}: {exc}"
        if attempts <= retries:
            await asyncio.sleep(backoff_s * 2 ** (attempts - 1) * (0.5 + random.random()))
    return Attempted(error=f"{error} (after {attempts} attempt(s))", attempts=attempts,
                     latency_s=time.perf_counter() - started)
