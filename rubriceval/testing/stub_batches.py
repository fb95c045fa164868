"""The stub's Batch API: `/v1/files` (upload, retrieve, content) and `/v1/batches` (create, retrieve, cancel, list).

A batch moves through the provider's states — validating → in_progress → finalizing → completed (or failed,
expired, cancelling → cancelled) — by time (`BatchTimings`) or at once through the control endpoint. Its requests
are answered by the stub's own chat endpoint (`StubServer.handle`), in a worker thread: the same answer a request
gets online, with the stub's injected faults showing up as error-file lines (HTTP 4xx/5xx) like a provider's.

Seeded batch faults, per created batch, from a script (`endpoints.script([...])`, first) or a rate:
  ok               all requests answered
  expire_half      the window runs out after half the requests: status expired, the done half in the output
                   file, the rest in the error file with code batch_expired
  malformed_lines  every `malformed_every`-th output line cut off mid-way, plus one line of noise
  request_errors   every `error_every`-th request answered with HTTP 500 in the error file
  fail             validation fails: status failed, `errors` set, no output
  hang             stays in_progress until cancelled or advanced

Control (in process: `batch_endpoints(stub)`; over HTTP):
  POST /_stub/batches/script {"faults": [...]}      faults of the next created batches
  POST /_stub/batches/<id>/advance                   skip the remaining waits (the worker still finishes)
  GET  /_stub/batches                                every batch with its custom_ids' digests (no bodies)
"""
from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from rubriceval.testing.stub_replies import Reply, error_reply, json_reply

if TYPE_CHECKING:
    from rubriceval.testing.stub_server import StubServer

BATCH_FAULTS = ("ok", "expire_half", "malformed_lines", "request_errors", "fail", "hang")
ENDPOINT = "/v1/chat/completions"


class BatchTimings(BaseModel):
    validating_s: float = 0.05
    in_progress_s: float = 0.05       # at least this long in progress, however fast the worker is
    finalizing_s: float = 0.05
    malformed_every: int = 10
    error_every: int = 10


class StubFile(BaseModel):
    id: str
    filename: str
    purpose: str
    bytes: int
    created_at: int
    path: str

    def public(self) -> dict:
        return {"id": self.id, "object": "file", "bytes": self.bytes, "created_at": self.created_at,
                "filename": self.filename, "purpose": self.purpose}


class StubBatch(BaseModel):
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, str] = Field(default_factory=dict)
    created_at: float
    fault: str = "ok"
    output_file_id: str | None = None
    error_file_id: str | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0
    errors: list[dict] = Field(default_factory=list)
    worker_done: bool = False
    advanced: bool = False
    cancelled: bool = False
    custom_ids: list[str] = Field(default_factory=list)
    digests: list[str] = Field(default_factory=list)     # sha256 of each request body, in file order

    def status(self, timings: BatchTimings, now: float) -> str:
        waited = now - self.created_at
        if self.cancelled:
            return "cancelled" if self.worker_done else "cancelling"
        if not self.advanced and waited < timings.validating_s:
            return "validating"
        if self.fault == "fail" or (self.worker_done and self.errors and not self.total):
            return "failed"
        if not self.worker_done or (not self.advanced and waited < timings.validating_s + timings.in_progress_s):
            return "in_progress"
        if not self.advanced and waited < timings.validating_s + timings.in_progress_s + timings.finalizing_s:
            return "finalizing"
        return "expired" if self.fault == "expire_half" else "completed"

    def public(self, timings: BatchTimings, now: float) -> dict:
        status = self.status(timings, now)
        done = status in ("completed", "expired", "cancelled", "failed")
        return {"id": self.id, "object": "batch", "endpoint": self.endpoint, "input_file_id": self.input_file_id,
                "completion_window": self.completion_window, "status": status,
                "output_file_id": self.output_file_id if done else None,
                "error_file_id": self.error_file_id if done else None,
                "created_at": int(self.created_at), "metadata": self.metadata,
                "errors": {"object": "list", "data": self.errors} if self.errors else None,
                "request_counts": {"total": self.total, "completed": self.completed, "failed": self.failed}}


class BatchEndpoints:
    """The Batch API of one StubServer; files live in a temporary directory removed with `close()`."""

    def __init__(self, stub: StubServer, timings: BatchTimings | None = None, fault_rates: dict[str, float] | None
                 = None):
        self.stub = stub
        self.timings = timings or BatchTimings()
        self.fault_rates = fault_rates or {}
        self._lock = threading.Lock()
        self._dir = Path(tempfile.mkdtemp(prefix="rubriceval-stub-batches-"))
        self._files: dict[str, StubFile] = {}
        self._batches: dict[str, StubBatch] = {}
        self._script: deque[str] = deque()
        self._ids = itertools.count(1)
        self._rng_draws = itertools.count()

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    # -- control --------------------------------------------------------------------------------------------------
    def script(self, faults: Iterable[str]) -> None:
        faults = list(faults)
        unknown = [f for f in faults if f not in BATCH_FAULTS]
        if unknown:
            raise ValueError(f"unknown batch fault(s) {unknown}; use {', '.join(BATCH_FAULTS)}")
        with self._lock:
            self._script = deque(faults)

    def advance(self, batch_id: str) -> None:
        with self._lock:
            self._batches[batch_id].advanced = True

    def batches(self) -> list[StubBatch]:
        with self._lock:
            return [b.model_copy() for b in self._batches.values()]

    def wait_idle(self, timeout_s: float = 60.0) -> None:
        """Wait until every batch's worker has finished (tests)."""
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            with self._lock:
                if all(b.worker_done or b.fault == "hang" for b in self._batches.values()):
                    return
            time.sleep(0.01)
        raise TimeoutError("stub batch workers still running")

    def _next_fault(self) -> str:
        with self._lock:
            if self._script:
                return self._script.popleft()
        import random

        draw = random.Random(f"{self.stub.seed}:batch:{next(self._rng_draws)}").random()
        cumulative = 0.0
        for kind, rate in self.fault_rates.items():
            cumulative += rate
            if draw < cumulative:
                return kind
        return "ok"

    # -- HTTP -----------------------------------------------------------------------------------------------------
    def handle(self, method: str, path: str, headers: Any, raw: bytes) -> Reply:
        route = path.split("?")[0].rstrip("/")
        parts = route.strip("/").split("/")
        try:
            if route.startswith("/_stub/batches"):
                return self._control(method, parts[2:], raw)
            authorization = headers.get("Authorization")
            if self.stub.require_api_key is not None and authorization != f"Bearer {self.stub.require_api_key}":
                return error_reply(401, "Incorrect API key provided (stub)")
            if parts[:2] == ["v1", "files"]:
                return self._files_route(method, parts[2:], headers, raw)
            if parts[:2] == ["v1", "batches"]:
                return self._batches_route(method, parts[2:], path, raw, authorization)
        except (KeyError, ValueError) as exc:
            return error_reply(400, f"{type(exc).__name__}: {exc}")
        return error_reply(404, f"no route {method} {path}")

    def _control(self, method: str, rest: list[str], raw: bytes) -> Reply:
        if method == "GET" and not rest:
            return json_reply({"data": [b.model_dump(exclude={"errors"}) for b in self.batches()]})
        if method == "POST" and rest == ["script"]:
            self.script(json.loads(raw or b"{}").get("faults", []))
            return json_reply({"ok": True})
        if method == "POST" and len(rest) == 2 and rest[1] == "advance":
            self.advance(rest[0])
            return json_reply({"ok": True})
        return error_reply(404, f"no control route {method} /_stub/batches/{'/'.join(rest)}")

    def _files_route(self, method: str, rest: list[str], headers: Any, raw: bytes) -> Reply:
        if method == "POST" and not rest:
            fields = parse_multipart(headers.get("Content-Type", ""), raw)
            if "file" not in fields or fields.get("purpose", (None, b""))[1] != b"batch":
                return error_reply(400, "a batch upload needs purpose=batch and a file")
            filename, content = fields["file"]
            return json_reply(self._store_file(filename or "upload.jsonl", "batch", content).public())
        with self._lock:
            stub_file = self._files.get(rest[0]) if rest else None
        if stub_file is None:
            return error_reply(404, f"no file {rest[0] if rest else ''}")
        if method == "GET" and len(rest) == 1:
            return json_reply(stub_file.public())
        if method == "GET" and rest[1:] == ["content"]:
            return Reply(body=Path(stub_file.path).read_bytes(), content_type="application/jsonl")
        return error_reply(404, "no such files route")

    def _batches_route(self, method: str, rest: list[str], path: str, raw: bytes, authorization: str | None
                       ) -> Reply:
        now = time.time()
        if method == "POST" and not rest:
            return self._create(json.loads(raw or b"{}"), authorization)
        if method == "GET" and not rest:
            return self._list(path)
        with self._lock:
            batch = self._batches.get(rest[0])
        if batch is None:
            return error_reply(404, f"no batch {rest[0]}")
        if method == "POST" and rest[1:] == ["cancel"]:
            with self._lock:
                if batch.status(self.timings, now) in ("validating", "in_progress", "finalizing"):
                    batch.cancelled = True
        if method == "GET" or rest[1:] == ["cancel"]:
            with self._lock:
                return json_reply(batch.public(self.timings, time.time()))
        return error_reply(404, "no such batches route")

    def _list(self, path: str) -> Reply:
        query = dict(p.split("=", 1) for p in path.partition("?")[2].split("&") if "=" in p)
        limit, after = int(query.get("limit", 20)), query.get("after")
        with self._lock:
            ordered = sorted(self._batches.values(), key=lambda b: -b.created_at)
            if after:
                ids = [b.id for b in ordered]
                ordered = ordered[ids.index(after) + 1:] if after in ids else []
            page = [b.public(self.timings, time.time()) for b in ordered[:limit]]
        return json_reply({"object": "list", "data": page, "has_more": len(ordered) > limit,
                           "first_id": page[0]["id"] if page else None, "last_id": page[-1]["id"] if page else None})

    def _store_file(self, filename: str, purpose: str, content: bytes) -> StubFile:
        file_id = f"file-stub{next(self._ids)}"
        path = self._dir / file_id
        path.write_bytes(content)
        stub_file = StubFile(id=file_id, filename=filename, purpose=purpose, bytes=len(content),
                             created_at=int(time.time()), path=str(path))
        with self._lock:
            self._files[file_id] = stub_file
        return stub_file

    def _create(self, body: dict, authorization: str | None) -> Reply:
        with self._lock:
            source = self._files.get(body.get("input_file_id", ""))
        if source is None:
            return error_reply(400, f"no input file {body.get('input_file_id')!r}")
        if body.get("endpoint") != ENDPOINT:
            return error_reply(400, f"endpoint must be {ENDPOINT}")
        if body.get("completion_window") != "24h":
            return error_reply(400, "completion_window must be 24h")
        batch = StubBatch(id=f"batch_stub{next(self._ids)}", input_file_id=source.id, endpoint=ENDPOINT,
                          completion_window="24h", metadata=body.get("metadata") or {}, created_at=time.time(),
                          fault=self._next_fault())
        with self._lock:
            self._batches[batch.id] = batch
        threading.Thread(target=self._work, args=(batch, Path(source.path), authorization), daemon=True,
                         name=f"stub-{batch.id}").start()
        return json_reply(batch.public(self.timings, time.time()))

    # -- the worker -----------------------------------------------------------------------------------------------
    def _work(self, batch: StubBatch, source: Path, authorization: str | None) -> None:
        try:
            lines = self._validated(batch, source)
            if lines is None or batch.fault == "fail":
                if batch.fault == "fail" and not batch.errors:
                    batch.errors = [{"code": "stub_failure", "message": "seeded fault: the batch failed", "line": None}]
                return
            while batch.fault == "hang" and not (batch.cancelled or batch.advanced):
                time.sleep(0.02)
            self._answer(batch, lines, authorization)
        finally:
            with self._lock:
                batch.worker_done = True

    def _validated(self, batch: StubBatch, source: Path) -> list[dict] | None:
        requests, seen = [], set()
        for line_no, raw in enumerate(source.read_bytes().splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
                problem = None if isinstance(item, dict) else "not a JSON object"
            except ValueError as exc:
                item, problem = None, f"invalid JSON: {exc}"
            if problem is None:
                if item.get("custom_id") in seen:
                    problem = f"duplicate custom_id {item.get('custom_id')!r}"
                elif item.get("method") != "POST" or item.get("url") != ENDPOINT:
                    problem = f"method must be POST and url {ENDPOINT}"
                elif not isinstance(item.get("body"), dict) or not item["body"].get("model"):
                    problem = "body must be an object with a model"
            if problem is not None:
                batch.errors.append({"code": "invalid_request", "message": problem, "line": line_no})
                continue
            seen.add(item["custom_id"])
            requests.append(item)
        with self._lock:
            batch.custom_ids = [r["custom_id"] for r in requests]
            batch.digests = [_digest(r["body"]) for r in requests]
            batch.total = 0 if batch.errors else len(requests)
        return None if batch.errors else requests

    def _answer(self, batch: StubBatch, requests: list[dict], authorization: str | None) -> None:
        out_path, err_path = self._dir / f"{batch.id}-output", self._dir / f"{batch.id}-errors"
        stop_at = len(requests) // 2 if batch.fault == "expire_half" else len(requests)
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            for index, item in enumerate(requests):
                if batch.cancelled or index >= stop_at:
                    code = "batch_cancelled" if batch.cancelled else "batch_expired"
                    err.write(_line({"id": f"batch_req_{batch.id}_{index}", "custom_id": item["custom_id"],
                                     "response": None, "error": {"code": code, "message": "not executed: "
                                                                 f"{code.removeprefix('batch_')}"}}))
                    batch.failed += 1
                    continue
                if batch.fault == "request_errors" and index % self.timings.error_every == 0:
                    reply = error_reply(500, "stub injected HTTP 500 (batch)")
                else:
                    reply = self.stub.handle("chat", item["body"], authorization)
                target, ok = self._result_line(batch, index, item, reply)
                if ok and batch.fault == "malformed_lines" and index % self.timings.malformed_every == 0:
                    target = target[: len(target) // 2] + b"\n"
                (out if ok else err).write(target)
                with self._lock:
                    batch.completed += ok
                    batch.failed += not ok
            if batch.fault == "malformed_lines":
                out.write(b"\x00\x01 this is not a result line\n")
        with self._lock:
            if out_path.stat().st_size:
                batch.output_file_id = self._register(out_path, f"{batch.id}_output.jsonl")
            if err_path.stat().st_size:
                batch.error_file_id = self._register(err_path, f"{batch.id}_errors.jsonl")

    def _result_line(self, batch: StubBatch, index: int, item: dict, reply: Reply) -> tuple[bytes, bool]:
        """A 200 goes to the output file whatever its body (a provider passes it on as it is); an HTTP error,
        or a connection the chat endpoint dropped (502), to the error file."""
        try:
            body = json.loads(reply.body) if reply.body else None
        except ValueError:
            body = None
        status = 502 if reply.drop_connection else reply.status
        if not isinstance(body, dict):
            status, body = (502, {"error": {"message": "stub: bad gateway", "code": "502"}}) if status != 200 \
                else (200, {"unreadable_body": reply.body.decode("utf-8", "replace")[:200]})
        return _line({"id": f"batch_req_{batch.id}_{index}", "custom_id": item["custom_id"],
                      "response": {"status_code": status, "request_id": f"req_stub_{batch.id}_{index}",
                                   "body": body}, "error": None}), status == 200

    def _register(self, path: Path, filename: str) -> str:
        file_id = f"file-stub{next(self._ids)}"
        self._files[file_id] = StubFile(id=file_id, filename=filename, purpose="batch_output",
                                        bytes=path.stat().st_size, created_at=int(time.time()), path=str(path))
        return file_id


def _line(item: dict) -> bytes:
    return (json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8")


def _digest(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def parse_multipart(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """multipart/form-data → {field: (filename, content)} (enough for a file upload; no nested parts)."""
    boundary = next((p.split("=", 1)[1].strip('"') for p in content_type.split(";")
                     if p.strip().startswith("boundary=")), None)
    if not boundary:
        raise ValueError("multipart upload without a boundary")
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in raw.split(b"--" + boundary.encode()):
        if not part.strip() or part.strip() == b"--":
            continue
        head, _, content = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
        disposition = next((line for line in head.decode("utf-8", "replace").split("\r\n")
                            if line.lower().startswith("content-disposition")), "")
        params = dict(p.strip().split("=", 1) for p in disposition.split(";")[1:] if "=" in p)
        name = params.get("name", "").strip('"')
        filename = params["filename"].strip('"') if "filename" in params else None
        fields[name] = (filename, content[:-2] if content.endswith(b"\r\n") else content)
    return fields


def batch_endpoints(stub: StubServer) -> BatchEndpoints:
    """The Batch API of a stub server, made on first use (its files go when the stub's process ends)."""
    with _ATTACH:
        endpoints = stub.__dict__.get("_batch_endpoints")
        if endpoints is None:
            endpoints = stub.__dict__["_batch_endpoints"] = BatchEndpoints(stub)
    return endpoints


_ATTACH = threading.Lock()
