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
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import random
import re
import signal
import socket
import struct
import threading
import time
import traceback
import urllib.request
import uuid
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Literal

from pydantic import BaseModel, Field

Endpoint = Literal["chat", "embeddings", "models"]
Responder = Callable[[dict], "str | dict"]

NAMED_FAULTS = ("ok", "timeout", "disconnect", "malformed", "html", "no_choices", "truncated", "garbage")
# What `--fault-rate R` spreads evenly over when no explicit `--faults` mix is given.
DEFAULT_FAULT_MIX = ("429", "500", "timeout", "malformed", "truncated", "garbage")
DEFAULT_TEXT = "Feedback: stub feedback [RESULT] 3"
_HTTP_ERROR = re.compile(r"[45]\d\d")
_WITH_RETRY_AFTER = {"429", "503"}


def check_fault(kind: str) -> str:
    """The fault name itself, or ValueError — a typo in a test script must not silently mean "ok"."""
    if kind in NAMED_FAULTS or _HTTP_ERROR.fullmatch(kind):
        return kind
    raise ValueError(f"unknown fault {kind!r}; use one of {', '.join(NAMED_FAULTS)} or an HTTP status 400–599")


# ----------------------------------------------------------------------------------------------------------------
# Token counts, embeddings, JSON-schema instances: deterministic functions of the request.
# ----------------------------------------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LATIN_TOKEN = re.compile(r"\w+|[^\w\s]")


def rough_token_count(text: str) -> int:
    """~1.5 CJK characters per token, one token per other word or punctuation mark: crude but deterministic."""
    cjk = len(_CJK.findall(text))
    rest = _CJK.sub(" ", text)
    return math.ceil(cjk / 1.5) + len(_LATIN_TOKEN.findall(rest))


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multi-part content: count the text parts
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def prompt_token_count(messages: list[dict]) -> int:
    # 3 tokens of framing per message, as OpenAI's own accounting roughly does.
    return sum(3 + rough_token_count(_message_text(m.get("content"))) for m in messages if isinstance(m, dict))


def _text_features(text: str) -> Iterable[str]:
    lowered = text.lower()
    for word in re.findall(r"[a-z0-9]+", lowered):
        yield "w:" + word
    chars = _CJK.findall(lowered)
    for i, char in enumerate(chars):
        yield "c:" + char
        if i + 1 < len(chars):
            yield "b:" + char + chars[i + 1]


def embedding_for(text: str, dim: int = 64) -> list[float]:
    """A unit vector: hashed bag of words / CJK characters and bigrams, plus a small whole-text component.

    Identical texts → identical vectors; texts sharing words → high cosine; different texts never collide exactly.
    """
    vector = [0.0] * dim
    for feature in _text_features(text):
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % dim] += 1.0 if digest[4] & 1 else -1.0
    noise = random.Random("embedding:" + text)
    noise_vector = [noise.gauss(0.0, 1.0) for _ in range(dim)]
    bag_norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    noise_norm = math.sqrt(sum(v * v for v in noise_vector)) or 1.0
    combined = [v / bag_norm + 0.2 * n / noise_norm for v, n in zip(vector, noise_vector)]
    norm = math.sqrt(sum(v * v for v in combined))
    return [v / norm for v in combined]


class SchemaError(ValueError):
    """The schema cannot be satisfied (or uses something the generator does not support)."""


def _resolve_ref(root: dict, ref: str) -> dict:
    if not ref.startswith("#/"):
        raise SchemaError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaError(f"$ref {ref!r} does not resolve")
        node = node[part]
    return node


def _bound(schema: dict, inclusive_key: str, exclusive_key: str) -> tuple[float | None, bool]:
    """(bound, exclusive) handling both draft-4 boolean and draft-6+ numeric exclusive bounds."""
    exclusive = schema.get(exclusive_key)
    if isinstance(exclusive, bool):
        return schema.get(inclusive_key), exclusive and inclusive_key in schema
    if exclusive is not None:
        return exclusive, True
    return schema.get(inclusive_key), False


def _integer_instance(schema: dict, rng: random.Random) -> int:
    low, low_exclusive = _bound(schema, "minimum", "exclusiveMinimum")
    high, high_exclusive = _bound(schema, "maximum", "exclusiveMaximum")
    if low is None and high is None:
        low, high = 0, 10
    elif low is None:
        low = high - 10
    elif high is None:
        high = low + 10
    lo = math.floor(low) + 1 if low_exclusive and float(low).is_integer() else math.ceil(low)
    hi = math.ceil(high) - 1 if high_exclusive and float(high).is_integer() else math.floor(high)
    step = schema.get("multipleOf", 1)
    if not isinstance(step, int) or step <= 0:
        step = 1
    first = math.ceil(lo / step) * step
    if first > hi:
        raise SchemaError(f"no integer satisfies {schema}")
    return first + step * rng.randint(0, (hi - first) // step)


def _number_instance(schema: dict, rng: random.Random) -> float:
    low, _ = _bound(schema, "minimum", "exclusiveMinimum")
    high, _ = _bound(schema, "maximum", "exclusiveMaximum")
    low = 0.0 if low is None else float(low)
    high = low + 1.0 if high is None else float(high)
    if low > high:
        raise SchemaError(f"no number satisfies {schema}")
    # Stay strictly inside the interval so exclusive bounds hold without special cases.
    value = round(low + (high - low) * (0.1 + 0.8 * rng.random()), 4)
    return min(max(value, low), high)


def _string_instance(schema: dict, rng: random.Random, name: str, language: str) -> str:
    formats = {"date-time": "2024-01-01T00:00:00Z", "date": "2024-01-01", "time": "00:00:00",
               "email": "stub@example.com", "uri": "https://example.com/stub"}
    fmt = schema.get("format")
    if fmt == "uuid":
        text = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    elif fmt in formats:
        text = formats[fmt]
    else:
        text = f"桩服务器生成的{name}" if language == "zh" else f"stub {name}"
    min_length, max_length = schema.get("minLength", 0), schema.get("maxLength")
    if len(text) < min_length:
        text += ("字" if language == "zh" else "x") * (min_length - len(text))
    if max_length is not None:
        if max_length < min_length:
            raise SchemaError(f"no string satisfies {schema}")
        text = text[:max_length]
    return text


def instance_for_schema(schema: dict, rng: random.Random, *, language: str = "en", name: str = "value",
                        root: dict | None = None, _depth: int = 0) -> Any:
    """A value satisfying `schema` (the subset structured-output APIs accept; `pattern` is not honoured)."""
    root = schema if root is None else root
    if _depth > 16:
        raise SchemaError("schema recursion too deep")

    def sub(node: dict, child_name: str) -> Any:
        return instance_for_schema(node, rng, language=language, name=child_name, root=root, _depth=_depth + 1)

    if "$ref" in schema:
        schema = {**_resolve_ref(root, schema["$ref"]), **{k: v for k, v in schema.items() if k != "$ref"}}
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        if not schema["enum"]:
            raise SchemaError("empty enum")
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [_resolve_ref(root, o["$ref"]) if "$ref" in o else o for o in schema[key]]
            # The first non-null option: an Optional[...] field then carries a real value.
            meaningful = [o for o in options if o.get("type") != "null"] or options
            return sub(meaningful[0], name)
    if schema.get("allOf"):
        merged: dict = {}
        for part in schema["allOf"]:
            part = _resolve_ref(root, part["$ref"]) if "$ref" in part else part
            merged = {**merged, **part, "properties": {**merged.get("properties", {}), **part.get("properties", {})},
                      "required": [*merged.get("required", []), *part.get("required", [])]}
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        return sub({**merged, **rest}, name)

    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"

    if kind == "object":
        properties: dict = schema.get("properties", {})
        value = {prop: sub(prop_schema, prop) for prop, prop_schema in properties.items()}
        for prop in schema.get("required", []):
            value.setdefault(prop, f"stub {prop}")
        return value
    if kind == "array":
        return _array_instance(schema, rng, name, sub)
    if kind == "string":
        return _string_instance(schema, rng, name, language)
    if kind == "integer":
        return _integer_instance(schema, rng)
    if kind == "number":
        return _number_instance(schema, rng)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    raise SchemaError(f"unsupported schema type {kind!r}")


def _array_instance(schema: dict, rng: random.Random, name: str, sub: Callable[[dict, str], Any]) -> list:
    min_items, max_items = schema.get("minItems", 0), schema.get("maxItems")
    if max_items is not None and max_items < min_items:
        raise SchemaError(f"no array satisfies {schema}")
    prefix = [sub(item, f"{name} {i + 1}") for i, item in enumerate(schema.get("prefixItems", []))]
    # 1–3 items unless the schema says otherwise.
    low, high = max(min_items, 1), max(min_items, 3)
    if max_items is not None:
        low, high = min(low, max_items), min(high, max_items)
    count = rng.randint(low, high) - len(prefix)
    item_schema = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    items: list = []
    attempts = 0
    while len(items) < count and attempts < count * 20:
        attempts += 1
        item = sub(item_schema, f"{name} {len(prefix) + len(items) + 1}")
        if schema.get("uniqueItems") and item in prefix + items:
            continue
        items.append(item)
    if len(prefix) + len(items) < min_items:
        raise SchemaError(f"cannot generate {min_items} unique items for {schema}")
    return prefix + items


# ----------------------------------------------------------------------------------------------------------------
# Stats
# ----------------------------------------------------------------------------------------------------------------

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


def _digest(parts: dict) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()


# ----------------------------------------------------------------------------------------------------------------
# Server
# ----------------------------------------------------------------------------------------------------------------

class _Reply(BaseModel):
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = Field(default_factory=dict)
    drop_connection: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _json_reply(payload: dict, status: int = 200, headers: dict[str, str] | None = None, **usage: int) -> _Reply:
    return _Reply(status=status, body=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                  headers=headers or {}, **usage)


def _error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> _Reply:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
             404: "not_found_error", 429: "rate_limit_exceeded"}
    error = {"message": message, "type": kinds.get(status, "server_error"), "param": None, "code": str(status)}
    return _json_reply({"error": error}, status=status, headers=headers)


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
        self._httpd: _StubHTTPServer | None = None
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

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def start(self) -> "StubServer":
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _StubHTTPServer(("127.0.0.1", self._requested_port), _StubHandler, self)
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

    def __enter__(self) -> "StubServer":
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

    def _end(self, record: RequestRecord, reply: _Reply) -> None:
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

    def handle(self, endpoint: Endpoint, body: dict | None, authorization: str | None) -> _Reply:
        if self.require_api_key is not None and authorization != f"Bearer {self.require_api_key}":
            # Logged like any call (a client must not retry this), but it consumes no scripted fault.
            record = self._begin(endpoint, "ok", body, "")
            reply = _error_reply(401, "Incorrect API key provided (stub)")
            self._end(record, reply)
            return reply
        if endpoint == "models":
            record = self._begin("models", "ok", None, "")
            reply = _json_reply({"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in self.models]})
            self._end(record, reply)
            return reply
        assert body is not None
        digest = _digest({k: body.get(k) for k in ("model", "messages", "response_format", "input", "dimensions")})
        fault = self._next_fault(endpoint)
        record = self._begin(endpoint, fault, body, digest)
        reply = _Reply(status=500)
        try:
            self._sleep(self.latency_s)
            if fault == "timeout":
                self._sleep(self.hang_s)
            reply = self._faulty_reply(fault) or (
                self._chat_reply(body, fault, digest, record.seq) if endpoint == "chat"
                else self._embeddings_reply(body, fault))
        except Exception:  # noqa: BLE001 — a bug in a responder must show up in the test, not kill the thread
            self._note_error(traceback.format_exc())
            reply = _error_reply(500, "stub server error (see StubServer.stats.errors)")
        finally:
            self._end(record, reply)
        return reply

    def _faulty_reply(self, fault: str) -> _Reply | None:
        """Replies for faults that do not depend on the endpoint; None for ok and content faults."""
        if _HTTP_ERROR.fullmatch(fault):
            headers = {}
            if fault in _WITH_RETRY_AFTER and self.retry_after_s is not None:
                headers["Retry-After"] = f"{self.retry_after_s:g}"
            return _error_reply(int(fault), f"stub injected HTTP {fault}", headers)
        if fault == "disconnect":
            return _Reply(drop_connection=True)
        if fault == "malformed":
            return _Reply(body=b'{"id": "chatcmpl-stub", "choices": [{"index": 0, "message": {"role": "assis')
        if fault == "html":
            return _Reply(body=b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html")
        return None

    def _chat_reply(self, body: dict, fault: str, digest: str, seq: int) -> _Reply:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error_reply(400, "'messages' must be a non-empty array")
        if not body.get("model"):
            return _error_reply(400, "'model' is required")
        if body.get("stream"):
            return _error_reply(400, "the stub server does not stream")
        if fault == "no_choices":
            return _json_reply({"id": f"chatcmpl-stub-{seq}", "object": "chat.completion", "model": body["model"]})
        # Like a real model: greedy decoding gives one answer per prompt; sampling (temperature > 0) differs by seed.
        sampled = isinstance(body.get("temperature"), (int, float)) and body["temperature"] > 0
        rng = random.Random(f"{self.seed}:{digest}" + (f":seed={body.get('seed')}" if sampled else ""))
        try:
            content = self._content_for(body, rng)
        except SchemaError as exc:
            return _error_reply(400, f"invalid response_format schema: {exc}")
        finish_reason = "stop"
        if fault == "truncated":
            content, finish_reason = content[: max(1, len(content) // 2)], "length"
        elif fault == "garbage":
            noise = ["lorem", "ipsum", "▒▒▒", "<|im_end|>", "asdf", "#####", "乱码", "ÿþ", "...", "qwerty", "锟斤拷"]
            content = " ".join(rng.choice(noise) for _ in range(12))
        prompt_tokens = prompt_token_count(messages)
        completion_tokens = rough_token_count(content)
        payload = {
            "id": f"chatcmpl-stub-{seq}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"], "system_fingerprint": "stub",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                         "finish_reason": finish_reason, "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
        return _json_reply(payload, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    def _content_for(self, body: dict, rng: random.Random) -> str:
        if self.responder is not None:
            answer = self.responder(body)
            if isinstance(answer, dict):
                return json.dumps(answer, ensure_ascii=False)
            if isinstance(answer, str):
                return answer
            raise TypeError(f"responder must return str or dict, got {type(answer).__name__}")
        response_format = body.get("response_format") or {}
        prompt = " ".join(_message_text(m.get("content")) for m in body["messages"] if isinstance(m, dict))
        language = "zh" if _CJK.search(prompt) else "en"
        if response_format.get("type") == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema") or {}
            return json.dumps(instance_for_schema(schema, rng, language=language), ensure_ascii=False)
        if response_format.get("type") == "json_object":
            return json.dumps({"feedback": "stub feedback", "score": 3})
        return self.default_text

    def _embeddings_reply(self, body: dict, fault: str) -> _Reply:
        raw = body.get("input")
        if isinstance(raw, str):
            texts = [raw]
        elif isinstance(raw, list) and raw and all(isinstance(x, int) for x in raw):
            texts = [" ".join(map(str, raw))]          # one input given as token ids
        elif isinstance(raw, list) and raw:
            texts = [x if isinstance(x, str) else " ".join(map(str, x)) for x in raw]
        else:
            return _error_reply(400, "'input' must be a non-empty string or array")
        if not body.get("model"):
            return _error_reply(400, "'model' is required")
        if fault == "no_choices":
            return _json_reply({"object": "list", "model": body["model"]})
        dim = int(body.get("dimensions") or self.embedding_dim)
        vectors = [embedding_for(text, dim) for text in texts]
        if fault == "truncated":
            vectors = vectors[: len(vectors) // 2]
        elif fault == "garbage":
            vectors = [v[: max(1, dim // 2)] for v in vectors]
        as_base64 = body.get("encoding_format") == "base64"   # the OpenAI SDK asks for base64 by default
        data = [{"object": "embedding", "index": i,
                 "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if as_base64 else v}
                for i, v in enumerate(vectors)]
        tokens = sum(rough_token_count(t) for t in texts)
        return _json_reply({"object": "list", "data": data, "model": body["model"],
                            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}, prompt_tokens=tokens)

    # -- out-of-process control ---------------------------------------------------------------------------------

    def handle_admin(self, method: str, path: str, body: dict | None) -> _Reply:
        route, _, query = path.partition("?")
        if method == "GET" and route == "/_stub/stats":
            exclude = {"requests"} if "requests=0" in query else None
            return _Reply(body=self.stats.model_dump_json(exclude=exclude).encode())
        if method == "POST" and route == "/_stub/script":
            try:
                self.script((body or {}).get("faults", []), (body or {}).get("endpoint", "chat"))
            except (ValueError, KeyError) as exc:
                return _error_reply(400, str(exc))
            return _json_reply({"ok": True})
        if method == "POST" and route == "/_stub/reset":
            self.reset()
            return _json_reply({"ok": True})
        return _error_reply(404, f"no route {method} {route}")


class _StubHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512        # the default backlog of 5 drops connections when 64 clients start at once

    def __init__(self, address: tuple[str, int], handler: type, stub: StubServer):
        self.stub = stub
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def track(self, connection: socket.socket, open_: bool) -> None:
        with self._connections_lock:
            (self._connections.add if open_ else self._connections.discard)(connection)

    def close_open_connections(self) -> None:
        """Keep-alive handler threads would otherwise wait for the next request on a dead server."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"     # keep-alive, like real providers; every reply sets Content-Length
    timeout = 120                     # idle keep-alive connections end eventually
    disable_nagle_algorithm = True    # headers and body go out as separate writes; Nagle would add ~40 ms to each
    server: _StubHTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 — quiet: tests read stats instead
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path.startswith("/_stub/"):
            self._send(self.server.stub.handle_admin("GET", self.path, None))
        elif self.path.rstrip("/") == "/v1/models":
            self._send(self.server.stub.handle("models", None, self.headers.get("Authorization")))
        else:
            self._send(_error_reply(404, f"no route GET {self.path}"))

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(_error_reply(400, "request body is not JSON"))
            return
        if not isinstance(body, dict):
            self._send(_error_reply(400, "request body must be a JSON object"))
            return
        route = self.path.split("?")[0].rstrip("/")
        stub = self.server.stub
        if route.startswith("/_stub/"):
            self._send(stub.handle_admin("POST", self.path, body))
        elif route == "/v1/chat/completions":
            self._send(stub.handle("chat", body, self.headers.get("Authorization")))
        elif route == "/v1/embeddings":
            self._send(stub.handle("embeddings", body, self.headers.get("Authorization")))
        else:
            self._send(_error_reply(404, f"no route POST {self.path}"))

    def _send(self, reply: _Reply) -> None:
        try:
            if reply.drop_connection:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.send_response(reply.status)
            self.send_header("Content-Type", f"{reply.content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            # The client gave up (e.g. it timed out during an injected hang): nothing left to answer.
            self.close_connection = True


def fetch_stats(url: str, *, requests: bool = True, timeout_s: float = 5.0) -> StubStats:
    """Stats of a stub running in another process; `url` may be the root or the /v1 base URL."""
    root = url.rstrip("/").removesuffix("/v1")
    query = "" if requests else "?requests=0"
    with urllib.request.urlopen(f"{root}/_stub/stats{query}", timeout=timeout_s) as response:
        return StubStats.model_validate_json(response.read())


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
