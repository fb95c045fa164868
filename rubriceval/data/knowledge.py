"""A knowledge file of policies (what the company grants: 7 天无理由退货, 运费险, 补偿标准 …), read as the context
that chat exports lack: `unless_context` / `only_if_context` conditions search it besides the retrieved contexts,
and judge prompts show it before the sample or transcript: per-turn questions, holistic judge items and checklist
questions (rubriceval/prompt/templates/<lang>/knowledge.j2).

Formats, by extension:
  .md / .markdown   one passage per section (a `#` heading starts one) or paragraph (blank line)
  .txt              one passage per paragraph (blank line)
  .jsonl            one passage per line: {"text": …} (or "content"; an optional "title" is prefixed)
A rubric names it with `knowledge: policies.md` (relative to the rubric file); `rubriceval run --knowledge FILE`
gives every rubric of the run one. A file that cannot be read is a DatasetError naming file, line and field.
"""
from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from rubriceval.common.errors import DatasetError

MAX_PASSAGE_CHARS = 2000       # a passage is quoted in evidence and shown to the judge: keep each one short


class Knowledge(BaseModel):
    source: str
    passages: list[str]

    @property
    def text(self) -> str:
        """All passages, as the judge reads them."""
        return "\n\n".join(self.passages)

    @property
    def digest(self) -> str:
        """The passages' hash, for a scorer's version: a policy edit is a new version, moving the file is not."""
        return hashlib.sha256(json.dumps(self.passages, ensure_ascii=False).encode()).hexdigest()


def _paragraphs(text: str, markdown: bool) -> list[str]:
    blocks: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        starts_section = markdown and re.match(r"^\s{0,3}#{1,6}\s", line)
        if (not line.strip() or starts_section) and current:
            blocks.append("\n".join(current).strip())
            current = []
        if line.strip():
            current.append(line.rstrip())
    if current:
        blocks.append("\n".join(current).strip())
    # A heading alone is joined to the paragraph under it.
    merged: list[str] = []
    for block in blocks:
        if merged and markdown and re.fullmatch(r"\s{0,3}#{1,6}\s.*", merged[-1]):
            merged[-1] = merged[-1] + "\n" + block
        else:
            merged.append(block)
    return merged


def _jsonl(path: Path) -> list[str]:
    passages = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"not a JSON object: {exc.msg}", file=str(path), line=number) from None
        text = row.get("text", row.get("content")) if isinstance(row, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise DatasetError("a knowledge line needs a non-empty string 'text' (or 'content')", file=str(path),
                               line=number, field="text")
        title = row.get("title")
        passages.append(f"{title}\n{text.strip()}" if isinstance(title, str) and title.strip() else text.strip())
    return passages


@lru_cache(maxsize=16)
def _load(path: str, mtime_ns: int, size: int) -> Knowledge:
    # Keyed on (nanosecond mtime, size): an edit within one coarse clock tick still reads the new text.
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in (".jsonl", ".md", ".markdown", ".txt"):
        raise DatasetError("a knowledge file is .md, .txt or .jsonl", file=path, field="knowledge")
    try:
        passages = _jsonl(file) if suffix == ".jsonl" else _paragraphs(file.read_text(encoding="utf-8"),
                                                                      markdown=suffix != ".txt")
    except UnicodeDecodeError as exc:       # a binary or non-UTF-8 file: say where the first bad byte is
        line = file.read_bytes()[:exc.start].count(b"\n") + 1
        raise DatasetError(f"not UTF-8 text (byte {exc.start})", file=path, line=line, field="knowledge") from None
    except OSError as exc:                  # a folder, no permission …
        raise DatasetError(f"cannot read the knowledge file: {exc.strerror or exc}", file=path,
                           field="knowledge") from None
    long = next((i for i, p in enumerate(passages, start=1) if len(p) > MAX_PASSAGE_CHARS), None)
    if long is not None:
        raise DatasetError(f"passage {long} is over {MAX_PASSAGE_CHARS} characters; split it (blank line or "
                           "heading)", file=path, field="knowledge")
    if not passages:
        raise DatasetError("the knowledge file is empty", file=path, field="knowledge")
    return Knowledge(source=path, passages=passages)


def _located(path: str | Path, relative_to: str | Path | None) -> Path:
    file = Path(path)
    if not file.is_absolute() and relative_to is not None:
        beside = Path(relative_to).parent / file
        file = beside if beside.exists() or not file.exists() else file
    return file


def knowledge_stamp(path: str | Path, relative_to: str | Path | None = None) -> tuple | None:
    """(file, mtime, size) of the knowledge file `load_knowledge` would read, None when there is none: a cached
    version hash keyed on it sees an edit of the file."""
    file = _located(path, relative_to)
    try:
        stat = file.stat()
    except OSError:
        return None
    return str(file), stat.st_mtime_ns, stat.st_size


def load_knowledge(path: str | Path, relative_to: str | Path | None = None) -> Knowledge:
    """The knowledge file at `path` (relative to the file `relative_to`, e.g. the rubric, when not absolute)."""
    file = _located(path, relative_to)
    if not file.exists():
        raise DatasetError("knowledge file not found", file=str(file), field="knowledge")
    stat = file.stat()
    return _load(str(file), stat.st_mtime_ns, stat.st_size)
