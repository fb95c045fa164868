"""Which reader a file needs: `trace_format(path)` tells an OTel or Langfuse export from an ordinary dataset by its
content (a JSON or JSONL file's first object), so `rubriceval run` needs no flag; `--format` names it when
sniffing cannot (FORMATS). `read_traces` reads either export as Conversations."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from rubriceval.common.errors import DatasetError
from rubriceval.data.conversation import Conversation
from rubriceval.data.readers.langfuse import looks_like_langfuse, read_langfuse
from rubriceval.data.readers.otel import looks_like_otlp, read_otel

Format = Literal["auto", "dataset", "chatlog", "otel", "langfuse"]
FORMATS: tuple[str, ...] = ("auto", "dataset", "chatlog", "otel", "langfuse")
JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
WHOLE_FILE_SNIFF_BYTES = 256 * 1024 * 1024     # a pretty-printed JSON document is parsed whole to see what it is


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


def read_traces(path: str | Path, fmt: str) -> list[Conversation]:
    """The conversations of an OTel or Langfuse export."""
    if fmt == "otel":
        return read_otel(path)
    if fmt == "langfuse":
        return read_langfuse(path)
    raise DatasetError(f"unknown trace format {fmt!r}", field="--format", hint=f"one of {', '.join(FORMATS)}")


def _first_object(path: Path) -> dict[str, Any] | None:
    if path.suffix.lower() not in JSON_SUFFIXES or not path.is_file():
        return None
    with path.open("rb") as fh:
        line = fh.readline(1 << 20).decode("utf-8-sig", errors="replace").strip()
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        value = None
    if value is None and line[:1] in ("{", "[") and path.stat().st_size <= WHOLE_FILE_SNIFF_BYTES:
        try:
            value = json.loads(path.read_text(encoding="utf-8-sig"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, dict) else None
