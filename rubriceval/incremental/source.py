"""A growing source read from where the last increment stopped: a folder of exports (a file unchanged since, with no
conversation left open in it, is not opened), or one appended JSONL file (read from the byte offset where the last
increment stopped, plus the lines of conversations then still open). A file that shrank or whose head changed was
rewritten: it is read again from the start, and the watermark tells its unchanged conversations apart.

Other formats (CSV, Excel, chat-log configs) are read whole when they changed (a chat-log export groups its rows).
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from rubriceval.common.errors import DatasetError
from rubriceval.data.sample import Sample
from rubriceval.incremental.state import FileState

SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".xlsx", ".xls", ".yaml", ".yml")
HEAD = 4096                  # bytes whose hash tells a rewritten file from an appended one


class Place(NamedTuple):
    """Where an item is (see Item), kept between the two passes instead of the sample."""

    file: str
    where: int
    line: int | None


class Item(NamedTuple):
    """One conversation (or single-turn sample) read: where it is (JSONL: the byte offset of its line; other files:
    its position in the file from 1), its line when known, and the sample."""

    file: str
    where: int
    line: int | None
    sample: Sample


def source_files(source: Path) -> list[Path]:
    """The files of a source: the file itself, or a folder's data files in name order (daily exports sort by date);
    hidden and editor lock files (~$x.xlsx) are skipped."""
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise DatasetError("the source is neither a file nor a folder", file=str(source))
    return sorted(p for p in source.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES
                  and not p.name.startswith((".", "~$")))


def _head_hash(path: Path, size: int) -> str:
    with path.open("rb") as fh:
        return hashlib.sha256(fh.read(min(HEAD, size))).hexdigest()[:16]


def _line_sample(raw: bytes, path: Path, line: int | None) -> Sample | None:
    """A JSONL line → Sample as the dataset reader reads it (data/io.py); a growing source needs explicit ids."""
    from rubriceval.data.conversation_io import conversation_sample, is_conversation_record, parse_conversation
    from rubriceval.data.io import single_turn_sample
    from rubriceval.data.stream import jsonl_record

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DatasetError("not valid UTF-8", file=str(path), line=line, hint="re-save the file as UTF-8") from None
    record = jsonl_record(text, path, line)
    if record is None:
        return None
    if record.get("id") in (None, ""):
        raise DatasetError("a growing source needs an id on every conversation (the watermark is kept by id)",
                           file=str(path), line=line, field="id")
    if is_conversation_record(record):
        return conversation_sample(parse_conversation(record, file=str(path), line=line or 0, position=0))
    return single_turn_sample(record, path=path, line=line or 0, require=("question",), position=0)


def changed_state(path: Path, previous: FileState | None) -> tuple[FileState, bool] | None:
    """The file's state now and whether it must be read from the start; None: nothing to read in it."""
    stat = path.stat()
    now = FileState(path=str(path), size=stat.st_size, mtime_ns=stat.st_mtime_ns)
    if stat.st_size == 0:
        return None
    now.head_hash = _head_hash(path, stat.st_size)
    if previous is None or path.suffix.lower() in (".yaml", ".yml"):
        return now, True             # a chat-log config names its export elsewhere: read it each time (watermark)
    rewritten = stat.st_size < previous.read_to or (previous.read_to and now.head_hash != previous.head_hash
                                                     and previous.read_to >= HEAD)
    if rewritten:
        return now, True
    if (stat.st_size, stat.st_mtime_ns) == (previous.size, previous.mtime_ns) and not previous.pending:
        return None
    return now, False


def read_file(path: Path, previous: FileState | None, now: FileState, from_start: bool) -> Iterator[Item]:
    """Every item to consider in one file; fills now.read_to / read_lines as it goes (pending is the caller's)."""
    if path.suffix.lower() != ".jsonl":
        from rubriceval.data.io import iter_samples

        for position, (line, sample) in enumerate(iter_samples(path, with_lines=True, check_duplicates=False), 1):
            yield Item(str(path), position, line, sample)
        now.read_to, now.read_lines = now.size, 0
        return
    pending = [] if from_start or previous is None else previous.pending
    with path.open("rb") as fh:
        for offset, line in pending:                 # conversations still open last time: read again
            fh.seek(offset)
            sample = _line_sample(fh.readline(), path, line)
            if sample is not None:
                yield Item(str(path), offset, line, sample)
        offset = 0 if from_start or previous is None else previous.read_to
        line = 0 if from_start or previous is None else previous.read_lines
        fh.seek(offset)
        while True:
            raw = fh.readline()
            if not raw or not raw.endswith(b"\n"):       # a line still being written waits for the next increment
                break
            line += 1
            sample = _line_sample(raw, path, line)
            if sample is not None:
                yield Item(str(path), offset, line, sample)
            offset += len(raw)
    now.read_to, now.read_lines = offset, line


def reread(items: list[Place]) -> Iterator[tuple[int | None, Sample]]:
    """The selected items again, in the order given (a second pass: the first kept only ids and hashes, so the
    increment's memory does not grow with what is new)."""
    from rubriceval.data.io import iter_samples

    by_file: dict[str, list[Place]] = {}
    for item in items:
        by_file.setdefault(item.file, []).append(item)
    for file, chosen in by_file.items():
        path = Path(file)
        if path.suffix.lower() == ".jsonl":
            with path.open("rb") as fh:
                for item in chosen:
                    fh.seek(item.where)
                    sample = _line_sample(fh.readline(), path, item.line)
                    if sample is not None:
                        yield item.line, sample
        else:
            wanted = {item.where for item in chosen}
            for position, (line, sample) in enumerate(iter_samples(path, with_lines=True, check_duplicates=False), 1):
                if position in wanted:
                    yield line, sample
