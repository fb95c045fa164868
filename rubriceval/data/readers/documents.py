"""JSON files exported by observability tools, read as documents: JSON Lines (one object per line) and JSON lists
as every dataset is read (data/stream.py: line by line, errors naming file and line), and also one JSON object
pretty-printed over several lines, as an exporter's single document (read whole)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubriceval.common.errors import DatasetError
from rubriceval.data.stream import iter_records


def iter_documents(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) of a JSONL file or JSON list, or (1, the document) for one object over several lines."""
    path = Path(path)
    if not path.exists():
        raise DatasetError("file not found", file=str(path))
    with path.open("rb") as fh:
        first_line = fh.readline().decode("utf-8-sig", errors="replace").strip()
    if first_line.startswith("{") and not _is_json(first_line):
        try:
            document = json.loads(path.read_text(encoding="utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise DatasetError(f"not valid UTF-8 (byte {exc.start})", file=str(path)) from None
        except json.JSONDecodeError as exc:
            raise DatasetError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=str(path),
                               line=exc.lineno) from None
        if isinstance(document, dict):
            yield 1, document
            return
    yield from iter_records(path)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True
