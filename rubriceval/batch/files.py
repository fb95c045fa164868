"""Batch request files: OpenAI Batch JSONL, split at the provider's limits, and its output lines read back.

A request line is `{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body": {…}}`, the body being
exactly what the online client posts (`rubriceval.judge.client.chat_body`). OpenAI, DashScope's compatible mode
and `vllm run-batch` all take this format and answer with lines
`{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}`.

A file is written as `NAME.part` and renamed when complete, so a file with its final name is whole.
"""
from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.store.batches import RequestRow

ENDPOINT = "/v1/chat/completions"
_UNSAFE = re.compile(r"[^\w.\-]+")
MAX_PART = 48


def safe_part(text: object) -> str:
    """A piece of a custom_id or file name: letters, digits, _ . - only (the rest become _), at most 48 chars."""
    return _UNSAFE.sub("_", str(text))[:MAX_PART] or "_"


class WrittenFile(BaseModel):
    path: str
    requests: list[RequestRow]
    n_bytes: int


def request_line(custom_id: str, body: dict) -> bytes:
    return (json.dumps({"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body},
                       ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class RequestFileWriter:
    """Appends request lines to `<directory>/<prefix>-NNN.jsonl`, starting a new file before one would pass
    `max_requests` lines or `max_bytes` bytes; `on_file(WrittenFile)` is called for each finished file."""

    def __init__(self, directory: Path, prefix: str, *, max_requests: int, max_bytes: int,
                 on_file: Callable[[WrittenFile], None], first_number: int = 1,
                 numbers: Iterator[int] | None = None):
        """numbers: file numbers shared with other writers of the same run (a panel's endpoints write side by
        side); default first_number, first_number + 1, …"""
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.on_file = on_file
        self._numbers = numbers if numbers is not None else itertools.count(first_number)
        self.number = 0
        self.written = 0
        self._handle: BinaryIO | None = None
        self._path: Path | None = None
        self._rows: list[RequestRow] = []
        self._bytes = 0

    def add(self, row: RequestRow, body: dict) -> None:
        line = request_line(row.custom_id, body)
        if len(line) > self.max_bytes:
            raise RubricEvalError(f"request {row.custom_id} alone is {len(line)} bytes, over the batch file limit "
                                  f"of {self.max_bytes} bytes", field="judge.batch_max_bytes")
        if self._handle is not None and (len(self._rows) >= self.max_requests
                                         or self._bytes + len(line) > self.max_bytes):
            self._finish()
        if self._handle is None:
            self.number = next(self._numbers)
            self._path = self.directory / f"{self.prefix}-{self.number:03d}.jsonl"
            self._handle = open(self._path.with_suffix(".jsonl.part"), "wb")
        self._handle.write(line)
        self._rows.append(row)
        self._bytes += len(line)
        self.written += 1

    def _finish(self) -> None:
        assert self._handle is not None and self._path is not None
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        os.replace(self._path.with_suffix(".jsonl.part"), self._path)
        self.on_file(WrittenFile(path=str(self._path), requests=self._rows, n_bytes=self._bytes))
        self._handle, self._rows, self._bytes = None, [], 0

    def close(self) -> None:
        if self._handle is not None:
            self._finish()


class OutputLine(BaseModel):
    """One line of a batch output or error file, as far as it could be read."""

    line_no: int
    custom_id: str | None = None
    status_code: int | None = None
    body: dict | None = None             # the chat completion (status 200), or the error body
    error: str | None = None             # why there is no usable completion
    malformed: bool = False              # the line itself is not a valid result line


_CUSTOM_ID = re.compile(r'"custom_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def read_output_line(raw: bytes, line_no: int) -> OutputLine:
    """A result line → OutputLine. A line that is not JSON keeps the custom_id it still shows (a cut-off line
    usually does), so its request is settled as unscored with the reason instead of being lost."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        item = json.loads(text)
        if not isinstance(item, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        found = _CUSTOM_ID.search(text)
        custom_id = json.loads(f'"{found.group(1)}"') if found else None
        return OutputLine(line_no=line_no, custom_id=custom_id, malformed=True,
                          error=f"malformed batch output line {line_no}: {str(exc)[:120]}")
    custom_id = item.get("custom_id") if isinstance(item.get("custom_id"), str) else None
    response = item.get("response") if isinstance(item.get("response"), dict) else None
    error = item.get("error")
    if response is None:
        message = error.get("message") if isinstance(error, dict) else error
        code = error.get("code") if isinstance(error, dict) else None
        return OutputLine(line_no=line_no, custom_id=custom_id, malformed=custom_id is None or error is None,
                          error=f"{code}: {message}" if code else str(message or "no response in the line"))
    status = response.get("status_code")
    body = response.get("body")
    if not isinstance(status, int) or not isinstance(body, dict):
        return OutputLine(line_no=line_no, custom_id=custom_id, malformed=True,
                          error=f"malformed batch output line {line_no}: response without status_code/body")
    if status != 200:
        given = body.get("error")
        err = given if isinstance(given, dict) else {}
        return OutputLine(line_no=line_no, custom_id=custom_id, status_code=status, body=body,
                          error=f"HTTP {status}: {str(err.get('message') or body)[:200]}")
    return OutputLine(line_no=line_no, custom_id=custom_id, status_code=200, body=body,
                      malformed=custom_id is None)


def iter_output_lines(path: Path) -> Iterator[OutputLine]:
    """The result lines of a file, read one at a time (a 100,000-line file is never held whole)."""
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if raw.strip():
                yield read_output_line(raw, line_no)
