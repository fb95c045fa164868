"""JSON files exported by observability tools, read as documents: JSON Lines (one object per line), one JSON object
over several lines, or one JSON list of objects. Errors name file and line."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubriceval.common.errors import DatasetError


def iter_documents(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, request) for a JSON Lines file, or (1, the document) for one JSON document over several lines."""
    text = _text(path)
    stripped = text.lstrip()
    if not stripped:
        raise DatasetError("the file is empty", file=str(path))
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        yield 1, whole
        return
    if isinstance(whole, list):
        for i, item in enumerate(whole, start=1):
            if not isinstance(item, dict):
                raise DatasetError("each item must be a JSON object", file=str(path), line=i)
            yield i, item
        return
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=str(path), line=lineno) from None
        if not isinstance(obj, dict):
            raise DatasetError("each line must be a JSON object", file=str(path), line=lineno)
        yield lineno, obj


def _text(path: Path) -> str:
    if not path.exists():
        raise DatasetError("file not found", file=str(path))
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not valid UTF-8 (byte {exc.start})", file=str(path)) from None
