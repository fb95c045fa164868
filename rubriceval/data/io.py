"""Read and write datasets (JSONL, CSV, Excel) as Samples, with errors that name file, row and field."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import pandas as pd
from pydantic import ValidationError

from rubriceval.data.sample import COLUMN_ALIASES, Sample
from rubriceval.errors import DatasetError
from rubriceval.safety.spreadsheet import escape_frame, unescape_frame

if TYPE_CHECKING:
    from rubriceval.data.chatlog import ChatLogConfig

LIST_FIELDS = ("contexts", "reference_contexts", "tags")
TABULAR = (".csv", ".tsv", ".xlsx", ".xls")
KNOWN_FIELDS = set(Sample.model_fields)


def _read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Return (line-or-row number as a human counts it, record) pairs."""
    suffix = path.suffix.lower()
    if not path.exists():
        raise DatasetError("file not found", file=str(path))
    if suffix in (".jsonl", ".ndjson", ".json"):
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise DatasetError(f"not valid UTF-8 (byte {exc.start})", file=str(path), line=line,
                               hint="re-save the file as UTF-8") from None
        if suffix == ".json" and text.lstrip().startswith("["):
            try:
                items = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
            return [(i + 1, item) for i, item in enumerate(items)]
        records = []
        # Only \n ends a JSONL line: str.splitlines() would also split inside a valid row holding U+2028/U+2029/U+0085
        # (common in text pasted from web pages and chat apps); json.loads ignores a \r before the \n.
        for lineno, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=str(path), line=lineno) from None
            if not isinstance(obj, dict):
                raise DatasetError("each line must be a JSON object", file=str(path), line=lineno)
            records.append((lineno, obj))
        return records
    if suffix in (".csv", ".tsv"):
        try:
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False,
                                encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise DatasetError("not valid UTF-8", file=str(path), hint="re-save the file as UTF-8 CSV") from None
        except pd.errors.EmptyDataError:
            raise DatasetError("the file is empty", file=str(path)) from None
        # Row 1 is the header, so data row i sits on line i + 2.
        return [(i + 2, rec) for i, rec in enumerate(unescape_frame(frame).to_dict(orient="records"))]
    if suffix in (".xlsx", ".xls"):
        frame = pd.read_excel(path, dtype=str).fillna("")
        return [(i + 2, rec) for i, rec in enumerate(unescape_frame(frame).to_dict(orient="records"))]
    raise DatasetError(f"unsupported file type '{suffix}'", file=str(path), hint="use .jsonl, .csv or .xlsx")


def _context_list(value: str, name: str, *, path: Path, line: int, plain_text: list[int] | None) -> list[str]:
    """A contexts cell or field given as one string. JSON text of a list is read as the list. Otherwise, in a
    CSV/Excel cell (which cannot hold a list) it is one context and the row is noted; in JSON, which can hold a
    list, a string is refused: it is usually several passages joined, and per-context metrics would miscount."""
    if value.strip().startswith("["):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"cell is not a valid JSON list: {exc.msg}", file=str(path), line=line,
                               field=name) from None
    if not value.strip():
        return []
    if path.suffix.lower() not in TABULAR:
        raise DatasetError(f"{name} must be a list of strings, got a single string", file=str(path), line=line,
                           field=name, hint=f'write "{name}": ["…"], one string per passage')
    if plain_text is not None:
        plain_text.append(line)
    return [value]


def _normalise(record: dict[str, Any], *, path: Path, line: int,
               plain_text: list[int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, float) and math.isnan(value):
            value = None
        name = COLUMN_ALIASES.get(key, key)
        if name in KNOWN_FIELDS:
            out[name] = value
        else:
            extra[key] = value
    for name in LIST_FIELDS:
        value = out.get(name)
        # CSV/Excel cells hold lists as JSON text: ["a", "b"]; tags may also be "a, b" (Sample splits them).
        column = next((k for k in record if COLUMN_ALIASES.get(k, k) == name), name)   # as the file names it
        if isinstance(value, str) and name != "tags":
            out[name] = _context_list(value, column, path=path, line=line, plain_text=plain_text)
        elif isinstance(value, str) and value.strip().startswith("["):
            out[name] = _context_list(value, column, path=path, line=line, plain_text=None)
    # write_dataset stores metadata as JSON text in CSV/Excel cells; read it back as a dict (provenance survives).
    if isinstance(out.get("metadata"), str) and out["metadata"].strip().startswith("{"):
        try:
            out["metadata"] = json.loads(out["metadata"])
        except json.JSONDecodeError as exc:
            raise DatasetError(f"cell is not a valid JSON object: {exc.msg}", file=str(path), line=line,
                               field="metadata") from None
    elif isinstance(out.get("metadata"), str) and not out["metadata"].strip():
        out.pop("metadata")
    if isinstance(out.get("metadata"), dict):
        extra = {**out["metadata"], **extra}
    out["metadata"] = extra
    for key in ("id", "question", "answer", "ground_truth", "intent"):
        if key in out and out[key] is not None and not isinstance(out[key], str):
            out[key] = str(out[key])
        if key in out and out[key] is None:
            out.pop(key)
    return out


def _single_turn_sample(record: dict[str, Any], *, path: Path, line: int, require: Iterable[str],
                        position: int, plain_text: list[int] | None = None) -> Sample:
    data = _normalise(record, path=path, line=line, plain_text=plain_text)
    for field in require:
        if field not in data or data[field] in (None, ""):
            raise DatasetError(f"missing required field '{field}'", file=str(path), line=line, field=field,
                               hint=f"columns found: {sorted(record)}")
    data.setdefault("id", f"row-{position}")
    try:
        return Sample.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise DatasetError(err["msg"], file=str(path), line=line, field=field) from None


def read_dataset(path: str | Path, *, require: Iterable[str] = ("question",),
                 chatlog: "ChatLogConfig | None" = None) -> list[Sample]:
    """Load samples; ids default to the row number. Raises DatasetError naming file, line and field.

    A record holding a message list (`turns`, OpenAI `messages`, Ragas `user_input`) is a conversation; a flat
    chat-log export (one row per message) or a chat-log config (.yaml) is grouped into conversations."""
    from rubriceval.data.chatlog import looks_like_chatlog, read_chatlog
    from rubriceval.data.conversation_io import conversation_sample, is_conversation_record, parse_conversation

    path = Path(path)
    if chatlog is not None or path.suffix.lower() in (".yaml", ".yml"):
        return [conversation_sample(c) for c in read_chatlog(path, chatlog)]
    records = _read_records(path)
    if not records:
        raise DatasetError("the dataset has no rows", file=str(path))
    if looks_like_chatlog(records):
        return [conversation_sample(c) for c in read_chatlog(path, None, records=records)]
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    plain_text: list[int] = []          # CSV/Excel rows whose contexts cell is plain text (read as one context)
    for line, record in records:
        if is_conversation_record(record):
            conversation = parse_conversation(record, file=str(path), line=line, position=len(samples) + 1)
            sample = conversation_sample(conversation)
        else:
            sample = _single_turn_sample(record, path=path, line=line, require=require, position=len(samples) + 1,
                                         plain_text=plain_text)
        if sample.id in seen:
            raise DatasetError(f"duplicate id '{sample.id}' (first at line {seen[sample.id]})", file=str(path),
                               line=line, field="id")
        seen[sample.id] = line
        samples.append(sample)
    if plain_text:
        print(_plain_text_note(path, plain_text), file=sys.stderr)
    return samples


def _plain_text_note(path: Path, lines: list[int]) -> str:
    rows = sorted(set(lines))
    shown = ", ".join(map(str, rows[:5])) + (", …" if len(rows) > 5 else "")
    return (f"note: {path}: {len(rows)} row(s) give contexts as plain text (lines {shown}); each is read as one "
            'context. For several passages write a JSON list in the cell: ["passage 1", "passage 2"]')


def samples_to_frame(samples: list[Sample]) -> pd.DataFrame:
    return pd.DataFrame([s.model_dump() for s in samples])


def write_dataset(samples: list[Sample], path: str | Path) -> Path:
    """Write samples; lists become JSON text in CSV/Excel so they read back unchanged."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        tmp = path.with_suffix(path.suffix + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for s in samples:
                fh.write(json.dumps(s.model_dump(), ensure_ascii=False) + "\n")
        tmp.replace(path)
        return path
    frame = samples_to_frame(samples)
    for col in (*LIST_FIELDS, "metadata"):
        frame[col] = frame[col].map(lambda v: json.dumps(v, ensure_ascii=False))
    frame = escape_frame(frame)   # no cell opens as a formula; read_dataset undoes the escape
    if suffix == ".csv":
        frame.to_csv(path, index=False, encoding="utf-8")
    elif suffix == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        raise DatasetError(f"unsupported output type '{suffix}'", file=str(path))
    return path
