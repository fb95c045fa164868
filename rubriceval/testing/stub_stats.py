"""The stub's request log and counters, in process (`StubServer.stats`) or from another process (`fetch_stats`)."""
from __future__ import annotations

import urllib.request
from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

Endpoint = Literal["chat", "embeddings", "models"]


class RequestRecord(BaseModel):
    seq: int
    endpoint: Endpoint
    fault: str                        # "ok", or the fault injected
    status: int = 0                   # HTTP status sent; 0 while in flight or when the connection was dropped
    started: float                    # time.time() when the request was read
    finished: float | None = None     # time.time() just before the response was written
    digest: str = ""                  # sha256 of what determines the answer (model, messages/input, format)
    model: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    body: dict | None = None          # the request JSON (when log_bodies)


class StubStats(BaseModel):
    """A snapshot: calls per endpoint, faults injected per kind, the request log."""

    calls: dict[str, int] = Field(default_factory=lambda: {"chat": 0, "embeddings": 0, "models": 0})
    faults: dict[str, int] = Field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    requests: list[RequestRecord] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)      # exceptions inside the stub (e.g. a failing responder)

    def repeated(self, endpoint: Endpoint = "chat") -> dict[str, int]:
        """Digests answered successfully more than once — work a cache or a resumed run should have saved."""
        counts = Counter(r.digest for r in self.requests if r.endpoint == endpoint and r.status == 200
                         and r.fault == "ok")
        return {digest: n for digest, n in counts.items() if n > 1}


def fetch_stats(url: str, *, requests: bool = True, timeout_s: float = 5.0) -> StubStats:
    """Stats of a stub running in another process; `url` may be the root or the /v1 base URL."""
    root = url.rstrip("/").removesuffix("/v1")
    query = "" if requests else "?requests=0"
    with urllib.request.urlopen(f"{root}/_stub/stats{query}", timeout=timeout_s) as response:
        return StubStats.model_validate_json(response.read())
