"""A loopback OpenAI-compatible server with fault injection, for tests and benchmarks.

Serves `POST /v1/chat/completions`, `POST /v1/embeddings` and `GET /v1/models` on 127.0.0.1 with the standard
library only (a thread per connection, so 64 concurrent slow calls do not queue behind each other).

Why a stub and not mocks: the judge client's retries, timeouts, Retry-After handling and concurrency bound live in
the HTTP layer of the OpenAI SDK; only a real socket exercises them.

Faults, chosen per call from a seeded RNG (`fault_rates`) or, first, from an exact `script([...])`:
  ok          a normal answer
  "429", "500", any 4xx/5xx
              that HTTP error with an OpenAI-shaped body; 429 and 503 carry `Retry-After: retry_after_s`
  timeout     hold the request `hang_s` seconds (longer than the client's timeout), then answer
  disconnect  close the connection without any response
  malformed   200 whose body is cut-off JSON (Content-Type application/json)
  html        200 whose body is an HTML page (a proxy's error page)
  no_choices  200 JSON without "choices" (embeddings: without "data")
  truncated   200 completion whose content stops mid-way, finish_reason "length"
              (embeddings: fewer vectors than inputs)
  garbage     200 completion whose content is noise: no JSON, no score (embeddings: vectors of the wrong size)

Answers: with `response_format.json_schema`, a JSON object generated to satisfy the schema; with a `responder`
callback, whatever it returns (str, or a dict sent as JSON); otherwise `default_text`
("Feedback: stub feedback [RESULT] 3"). Content is seeded by the request itself, so the same prompt always gets
the same answer whatever the order of calls.

CLI (runs until killed; prints "stub server listening on http://127.0.0.1:PORT/v1"):
  python -m rubriceval.testing.stub_server --port 8765 --latency 0.2 --fault-rate 0.2
Out-of-process control: GET /_stub/stats[?requests=0], POST /_stub/script {"faults": [...], "endpoint": "chat"},
POST /_stub/reset; `fetch_stats(base_url)` reads the stats from Python.

This module is the server itself (faults, stats, lifecycle) and its CLI; stub_replies.py builds the answers and the
faults' wire forms, stub_content.py the token counts and embeddings, schema_instance.py JSON-schema answers,
stub_stats.py the request log, stub_http.py the HTTP layer.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import signal
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Iterable

from rubriceval.testing.stub_http import StubHandler, StubHTTPServer
from rubriceval.testing.stub_replies import (
    DEFAULT_FAULT_MIX,
    DEFAULT_TEXT,
    Reply,
    Responder,
    chat_reply,
    check_fault,
    embeddings_reply,
    error_reply,
    fault_reply,
    json_reply,
    prompt_text,
)
from rubriceval.testing.stub_stats import Endpoint, RequestRecord, StubStats


def _digest(parts: dict) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()


class StubServer:
    """`with StubServer(latency_s=0.05, fault_rates={"429": 0.1}) as stub: … stub.base_url … stub.stats`.

    Settings (`latency_s`, `fault_rates`, `responder`, `retry_after_s`, `hang_s`) may be changed while it runs.
    """

    def __init__(self, latency_s: float = 0.0, fault_rates: dict[str, float] | None = None, seed: int = 0,
                 responder: Responder | None = None, *, port: int = 0, retry_after_s: float | None = 1.0,
                 hang_s: float = 30.0, embedding_dim: int = 64, models: Iterable[str] = ("stub",),
                 default_text: str = DEFAULT_TEXT, fault_endpoints: Iterable[str] = ("chat", "embeddings"),
                 require_api_key: str | None = None, log_bodies: bool = True, log_file: str | None = None):
        self.latency_s = latency_s
        self.seed = seed
        self.responder = responder
        self.retry_after_s = retry_after_s
        self.hang_s = hang_s
        self.embedding_dim = embedding_dim
        self.models = list(models)
        self.default_text = default_text
        self.fault_endpoints = set(fault_endpoints)
        self.require_api_key = require_api_key
        self.log_bodies = log_bodies
        self._requested_port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._log_file = open(log_file, "a", encoding="utf-8") if log_file else None
        self._fault_rates: list[tuple[str, float]] = []
        self.set_fault_rates(fault_rates or {})
        self._httpd: StubHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.reset()

    # -- configuration ------------------------------------------------------------------------------------------

    def set_fault_rates(self, fault_rates: dict[str, float]) -> None:
        rates = [(check_fault(kind), float(rate)) for kind, rate in fault_rates.items() if rate]
        if any(rate < 0 for _, rate in rates) or sum(rate for _, rate in rates) > 1.0 + 1e-9:
            raise ValueError(f"fault rates must be ≥ 0 and sum to ≤ 1, got {fault_rates}")
        with self._lock:
            self._fault_rates = rates

    def script(self, faults: Iterable[str], endpoint: Endpoint = "chat") -> None:
        """The next calls to `endpoint` get exactly these faults ("ok" = a normal answer), before any random fault.

        Replaces whatever was left of an earlier script for that endpoint.
        """
        checked = [check_fault(kind) for kind in faults]
        with self._lock:
            self._scripts[endpoint] = deque(checked)

    def pending_script(self, endpoint: Endpoint = "chat") -> list[str]:
        with self._lock:
            return list(self._scripts[endpoint])

    def reset(self) -> None:
        """Clear counters, the request log and scripts, and restart the fault RNG from the seed."""
        with self._lock:
            self._rng = random.Random(self.seed)
            self._scripts: dict[str, deque[str]] = {"chat": deque(), "embeddings": deque(), "models": deque()}
            self._calls: Counter = Counter()
            self._faults: Counter = Counter()
            self._records: list[RequestRecord] = []
            self._errors: list[str] = []
            self._in_flight = 0
            self._max_in_flight = 0
            self._last_prompt = ""

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def start(self) -> StubServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = StubHTTPServer(("127.0.0.1", self._requested_port), StubHandler, self)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=f"stub-server-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()              # wakes handlers sleeping for latency or a hang
        self._httpd.shutdown()
        self._httpd.close_open_connections()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the stub server is not running")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def stats(self) -> StubStats:
        with self._lock:
            return StubStats(calls={"chat": 0, "embeddings": 0, "models": 0, **self._calls},
                             faults=dict(self._faults), in_flight=self._in_flight,
                             max_in_flight=self._max_in_flight,
                             requests=[r.model_copy() for r in self._records], errors=list(self._errors))

    # -- request handling (called from handler threads) ---------------------------------------------------------

    def _next_fault(self, endpoint: Endpoint) -> str:
        with self._lock:
            queue = self._scripts[endpoint]
            if queue:
                return queue.popleft()
            draw = self._rng.random()      # drawn on every call so the sequence depends only on the seed
            if endpoint not in self.fault_endpoints:
                return "ok"
            cumulative = 0.0
            for kind, rate in self._fault_rates:
                cumulative += rate
                if draw < cumulative:
                    return kind
            return "ok"

    def _begin(self, endpoint: Endpoint, fault: str, body: dict | None, digest: str) -> RequestRecord:
        with self._lock:
            record = RequestRecord(seq=len(self._records) + 1, endpoint=endpoint, fault=fault, started=time.time(),
                                   digest=digest, model=(body or {}).get("model"),
                                   body=body if self.log_bodies else None)
            self._records.append(record)
            self._calls[endpoint] += 1
            if fault != "ok":
                self._faults[fault] += 1
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        return record

    def _end(self, record: RequestRecord, reply: Reply) -> None:
        with self._lock:
            self._in_flight -= 1
            record.finished = time.time()
            record.status = 0 if reply.drop_connection else reply.status
            record.prompt_tokens, record.completion_tokens = reply.prompt_tokens, reply.completion_tokens
            if self._log_file is not None:
                self._log_file.write(record.model_dump_json(exclude={"body"}) + "\n")
                self._log_file.flush()

    def _note_error(self, message: str) -> None:
        with self._lock:
            self._errors.append(message)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def handle(self, endpoint: Endpoint, body: dict | None, authorization: str | None) -> Reply:
        if self.require_api_key is not None and authorization != f"Bearer {self.require_api_key}":
            # Logged like any call (a client must not retry this), but it consumes no scripted fault.
            record = self._begin(endpoint, "ok", body, "")
            reply = error_reply(401, "Incorrect API key provided (stub)")
            self._end(record, reply)
            return reply
        if endpoint == "models":
            record = self._begin("models", "ok", None, "")
            reply = json_reply({"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in self.models]})
            self._end(record, reply)
            return reply
        assert body is not None
        digest = _digest({k: body.get(k) for k in ("model", "messages", "response_format", "input", "dimensions")})
        fault = self._next_fault(endpoint)
        record = self._begin(endpoint, fault, body, digest)
        reply = Reply(status=500)
        try:
            self._sleep(self.latency_s)
            if fault == "timeout":
                self._sleep(self.hang_s)
            reply = fault_reply(fault, self.retry_after_s) or (
                chat_reply(body, fault, digest, record.seq, seed=self.seed, responder=self.responder,
                           default_text=self.default_text, previous_prompt=self._swap_prompt(body))
                if endpoint == "chat"
                else embeddings_reply(body, fault, self.embedding_dim))
        except Exception:  # noqa: BLE001 — a bug in a responder must show up in the test, not kill the thread
            self._note_error(traceback.format_exc())
            reply = error_reply(500, "stub server error (see StubServer.stats.errors)")
        finally:
            self._end(record, reply)
        return reply

    def _swap_prompt(self, body: dict) -> str:
        """The previous chat prompt, replaced by this one: the stub keeps one prefix-cache slot."""
        prompt = prompt_text(body.get("messages") or [])
        with self._lock:
            previous, self._last_prompt = self._last_prompt, prompt
        return previous

    def handle_admin(self, method: str, path: str, body: dict | None) -> Reply:
        route, _, query = path.partition("?")
        if method == "GET" and route == "/_stub/stats":
            exclude = {"requests"} if "requests=0" in query else None
            return Reply(body=self.stats.model_dump_json(exclude=exclude).encode())
        if method == "POST" and route == "/_stub/script":
            try:
                self.script((body or {}).get("faults", []), (body or {}).get("endpoint", "chat"))
            except (ValueError, KeyError) as exc:
                return error_reply(400, str(exc))
            return json_reply({"ok": True})
        if method == "POST" and route == "/_stub/reset":
            self.reset()
            return json_reply({"ok": True})
        return error_reply(404, f"no route {method} {route}")


# ----------------------------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------------------------

def _parse_fault_mix(text: str) -> dict[str, float]:
    mix: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        kind, _, rate = item.partition("=")
        mix[check_fault(kind.strip())] = float(rate)
    return mix


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m rubriceval.testing.stub_server",
                                     description="Loopback OpenAI-compatible stub server with fault injection.")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port (printed on start)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every call")
    parser.add_argument("--fault-rate", type=float, default=0.0,
                        help=f"total fault rate, spread evenly over {', '.join(DEFAULT_FAULT_MIX)}")
    parser.add_argument("--faults", default="", help='explicit mix, e.g. "429=0.1,500=0.05" (overrides --fault-rate)')
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=1.0, help="Retry-After seconds sent with 429/503")
    parser.add_argument("--hang", type=float, default=30.0, help="seconds an injected timeout holds the request")
    parser.add_argument("--embedding-dim", type=int, default=64)
    parser.add_argument("--model", action="append", default=None, help="model id listed by /v1/models (repeatable)")
    parser.add_argument("--log-file", default=None, help="append one JSON line per finished request")
    parser.add_argument("--no-log-bodies", action="store_true", help="keep request bodies out of the in-memory log")
    args = parser.parse_args(argv)

    if args.faults:
        rates = _parse_fault_mix(args.faults)
    else:
        rates = {kind: args.fault_rate / len(DEFAULT_FAULT_MIX) for kind in DEFAULT_FAULT_MIX}
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    stub = StubServer(latency_s=args.latency, fault_rates=rates, seed=args.seed, port=args.port,
                      retry_after_s=args.retry_after, hang_s=args.hang, embedding_dim=args.embedding_dim,
                      models=args.model or ["stub"], log_file=args.log_file, log_bodies=not args.no_log_bodies)
    with stub:
        print(f"stub server listening on {stub.base_url}", flush=True)
        while not stop.wait(0.5):
            pass


if __name__ == "__main__":
    main()
