"""Read and write datasets (JSONL, CSV, Excel) as Samples, with errors that name file, row and field."""
from __future__ import annotations

import itertools
import json
import math
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from rubriceval.common.errors import DatasetError
from rubriceval.data.conversation import Conversation
from rubriceval.data.readers.formats import read_traces, trace_format
from rubriceval.data.sample import COLUMN_ALIASES, Sample
from rubriceval.data.spreadsheet import escape_frame
from rubriceval.data.stream import iter_records

if TYPE_CHECKING:
    import pandas as pd

    from rubriceval.data.chatlog import ChatLogConfig

LIST_FIELDS = ("contexts", "reference_contexts", "tags")
TABULAR = (".csv", ".tsv", ".xlsx", ".xls")
KNOWN_FIELDS = set(Sample.model_fields)


def read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every (line-or-row number as a human counts it, record) pair of a file, as a list (for small files)."""
    return list(iter_records(path))


def _context_list(value: str, name: str, *, path: Path, line: int, plain_text: LineTally | None) -> list[str]:
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


def normalise_record(record: dict[str, Any], *, path: Path, line: int,
                     plain_text: LineTally | None = None) -> dict[str, Any]:
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


def single_turn_sample(record: dict[str, Any], *, path: Path, line: int, require: Iterable[str],
                       position: int, plain_text: LineTally | None = None) -> Sample:
    data = normalise_record(record, path=path, line=line, plain_text=plain_text)
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
                 chatlog: ChatLogConfig | None = None, fmt: str = "auto") -> list[Sample]:
    """Load samples; ids default to the row number. Raises DatasetError naming file, line and field.

    A record holding a message list (`turns`, OpenAI `messages`, Ragas `user_input`) is a conversation; a flat
    chat-log export (one row per message) or a chat-log config (.yaml) is grouped into conversations."""
    return list(iter_samples(path, require=require, chatlog=chatlog, fmt=fmt))


def iter_samples(path: str | Path, *, require: Iterable[str] = ("question",), chatlog: ChatLogConfig | None = None,
                 check_duplicates: bool = True, with_lines: bool = False, fmt: str = "auto") -> Iterator[Any]:
    """The samples of a file one at a time, in file order, read as a stream (`read_dataset` lists them): a
    dataset of any size in flat memory, a bad line reported when reached. A chat-log export's rows are
    gathered per conversation in bounded memory (data/row_groups.py).

    check_duplicates=False leaves duplicate ids to the caller (the run store's key refuses them without this
    function holding every id); with_lines=True yields (line, sample) pairs (line None for grouped chat logs).
    fmt (run --format): auto sniffs OTel / Langfuse exports (data/readers/) and chat logs; otel, langfuse,
    chatlog or dataset says which it is."""
    from rubriceval.data.chatlog import iter_chatlog, looks_like_chatlog
    from rubriceval.data.conversation_io import conversation_sample, is_conversation_record, parse_conversation

    path = Path(path)
    traces = fmt if fmt in ("otel", "langfuse") else trace_format(path) if fmt == "auto" and chatlog is None else None
    if traces:                          # production traces: grouped into conversations whole, like a chat log
        yield from ((None, conversation_sample(c)) if with_lines else conversation_sample(c)
                    for c in read_traces(path, traces))
        return
    if chatlog is not None or fmt == "chatlog" or path.suffix.lower() in (".yaml", ".yml"):
        yield from ((None, conversation_sample(c)) if with_lines else conversation_sample(c)
                    for c in iter_chatlog(path, chatlog))
        return
    records = iter_records(path)
    first = next(records, None)
    if first is None:
        raise DatasetError("the dataset has no rows", file=str(path))
    if fmt != "dataset" and looks_like_chatlog([first]):
        yield from ((None, conversation_sample(c)) if with_lines else conversation_sample(c)
                    for c in iter_chatlog(path, None, records=itertools.chain([first], records)))
        return
    seen: dict[str, int] | None = {} if check_duplicates else None
    plain_text = LineTally()            # CSV/Excel rows whose contexts cell is plain text (read as one context)
    for position, (line, record) in enumerate(itertools.chain([first], records), start=1):
        if is_conversation_record(record):
            conversation = parse_conversation(record, file=str(path), line=line, position=position)
            sample = conversation_sample(conversation)
        else:
            sample = single_turn_sample(record, path=path, line=line, require=require, position=position,
                                        plain_text=plain_text)
        if seen is not None:
            if sample.id in seen:
                raise DatasetError(f"duplicate id '{sample.id}' (first at line {seen[sample.id]})", file=str(path),
                                   line=line, field="id")
            seen[sample.id] = line
        yield (line, sample) if with_lines else sample
    if plain_text:
        print(_plain_text_note(path, plain_text), file=sys.stderr)


class DatasetStream:
    """A dataset file read anew, as a stream, each time it is iterated: what a run takes instead of a list, so a
    file of any size is never held whole. Iterating gives Samples; `with_lines()` gives (line, sample) pairs for
    the run store, whose key refuses duplicate ids with both lines named."""

    def __init__(self, path: str | Path, *, require: Iterable[str] = ("question",),
                 chatlog: ChatLogConfig | None = None, fmt: str = "auto"):
        self.path, self.require, self.chatlog, self.fmt = Path(path), tuple(require), chatlog, fmt

    def __iter__(self) -> Iterator[Sample]:
        return iter_samples(self.path, require=self.require, chatlog=self.chatlog, check_duplicates=False,
                            fmt=self.fmt)

    def with_lines(self) -> Iterator[tuple[int | None, Sample]]:
        return iter_samples(self.path, require=self.require, chatlog=self.chatlog, check_duplicates=False,
                            with_lines=True, fmt=self.fmt)


class LineTally:
    """Lines noted for one message: how many, and the first few (bounded memory on a file of any size)."""

    SHOWN = 5

    def __init__(self) -> None:
        self.count = 0
        self.first: list[int] = []
        self._last: int | None = None

    def append(self, line: int) -> None:
        if line == self._last:
            return                       # the same row again (several list fields given as plain text)
        self._last = line
        self.count += 1
        if len(self.first) < self.SHOWN:
            self.first.append(line)

    def __bool__(self) -> bool:
        return self.count > 0


def _plain_text_note(path: Path, lines: LineTally) -> str:
    shown = ", ".join(map(str, lines.first)) + (", …" if lines.count > len(lines.first) else "")
    return (f"note: {path}: {lines.count} row(s) give contexts as plain text (lines {shown}); each is read as one "
            'context. For several passages write a JSON list in the cell: ["passage 1", "passage 2"]')


def samples_to_frame(samples: list[Sample]) -> pd.DataFrame:
    import pandas as pd  # reading a dataset for a run does not need pandas

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


def read_conversations(path: str | Path) -> list[Conversation]:
    """Every conversation in a dataset file (JSONL, JSON list, or a chat-log export/config)."""
    samples = read_dataset(path, require=())
    single = [s.id for s in samples if s.conversation is None]
    if single:
        raise DatasetError(f"{len(single)} row(s) are single-turn samples, not conversations (first: {single[0]})",
                           file=str(path), hint="a conversation needs a turns, messages or user_input list")
    return [s.conversation for s in samples if s.conversation is not None]
