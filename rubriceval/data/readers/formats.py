"""Which reader a file needs: `trace_format(path)` tells an OTel or Langfuse export from an ordinary dataset by its
content (a JSON or JSONL file's first object), so `rubriceval run` needs no flag; `--format` names it when
sniffing cannot (FORMATS). `read_traces` reads either export as Conversations."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from rubriceval.common.errors import DatasetError
from rubriceval.data.conversation import Conversation
from rubriceval.data.readers.langfuse import iter_langfuse, looks_like_langfuse
from rubriceval.data.readers.otel import iter_otel, looks_like_otlp

Format = Literal["auto", "dataset", "chatlog", "otel", "langfuse"]
FORMATS: tuple[str, ...] = ("auto", "dataset", "chatlog", "otel", "langfuse")
JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
OTLP_START = re.compile(r'\{\s*"resource(Spans|Logs)"\s*:')
HEAD_BYTES = 64 * 1024                         # small: a dataset of any size is sniffed in flat memory
WHOLE_FILE_SNIFF_BYTES = 64 * 1024 * 1024      # a pretty-printed JSON document is parsed whole to see what it is


def trace_format(path: str | Path) -> str | None:
    """'otel' or 'langfuse' when a JSON/JSONL file holds that export, else None (an ordinary dataset)."""
    first = _first_object(Path(path))
    if first is None:
        return None
    if looks_like_otlp(first):
        return "otel"
    if looks_like_langfuse(first):
        return "langfuse"
    return None


def read_traces(path: str | Path, fmt: str) -> Iterator[Conversation]:
    """The conversations of an OTel or Langfuse export, one at a time (each reader holds bounded memory)."""
    if fmt == "otel":
        return iter_otel(path)
    if fmt == "langfuse":
        return iter_langfuse(path)
    raise DatasetError(f"unknown trace format {fmt!r}", field="--format", hint=f"one of {', '.join(FORMATS)}")


def _first_object(path: Path) -> dict[str, Any] | None:
    """The file's first JSON object: its first line (JSONL), the first item of a JSON list (decoded from the head
    only), or a pretty-printed document (parsed whole, up to WHOLE_FILE_SNIFF_BYTES)."""
    if path.suffix.lower() not in JSON_SUFFIXES or not path.is_file():
        return None
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES).decode("utf-8-sig", errors="replace")
    line = head.split("\n", 1)[0].strip()
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        value = None
    text = head.lstrip()
    if value is None and OTLP_START.match(text):       # an OTLP request line longer than the head
        return {"resourceSpans": []}
    if value is None and text.startswith("["):
        try:
            value, _ = json.JSONDecoder().raw_decode(text[1:].lstrip())
        except json.JSONDecodeError:
            value = None
    elif value is None and text.startswith("{") and path.stat().st_size <= WHOLE_FILE_SNIFF_BYTES:
        try:
            value = json.loads(path.read_text(encoding="utf-8-sig"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, dict) else None
