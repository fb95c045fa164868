"""Load .txt/.md documents and split them into chunks that respect sections, paragraphs and sentences.

Why not fixed windows: a question generated from half a sentence is unanswerable, so chunks end on sentence
boundaries (Chinese 。！？； and Western .!? alike) and a Markdown heading always starts a new chunk. Overlap carries
whole trailing sentences (up to `overlap` characters) into the next chunk of the same section, never a cut word.
Sizes are counted in characters, the natural unit for Chinese.
"""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from rubriceval.common.errors import DatasetError

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown")

# A sentence ends after a terminator plus any closing quotes/brackets; a Western full stop only counts when
# whitespace or the end follows, so "oa.example.com" and "3.5" stay whole. Newlines end sentences too.
_SENTENCE_END = re.compile(
    r"(?:[。！？；!?…]+[”’」』）)\]\"']*|\.(?=\s|$)[”’」』）)\]\"']*|\n)\s*"
)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


class Document(BaseModel):
    source: str          # path relative to the folder given (or the file name), used in metadata
    text: str


class Chunk(BaseModel):
    source: str
    index: int           # position of the chunk within its document, from 0
    text: str
    heading: str = ""    # Markdown heading path, e.g. "报销流程 > 审批"


def load_documents(path: str | Path) -> list[Document]:
    """Read one .txt/.md file or every such file under a folder (recursively, sorted; dotfiles skipped).

    PDF and other types are not supported: convert them to text first (e.g. `pdftotext file.pdf`).
    """
    root = Path(path)
    if not root.exists():
        raise DatasetError("documents path not found", file=str(root))
    if root.is_file():
        files, base = [root], root.parent
    else:
        files = sorted(p for p in root.rglob("*")
                       if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
        base = root
    documents: list[Document] = []
    for file in files:
        _check_supported(file)
        raw = file.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"not valid UTF-8 (byte {exc.start})", file=str(file),
                               hint="re-save the document as UTF-8") from None
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if text.strip():
            documents.append(Document(source=file.relative_to(base).as_posix(), text=text))
    if not documents:
        raise DatasetError("no non-empty .txt or .md documents found", file=str(root))
    return documents


def _check_supported(file: Path) -> None:
    suffix = file.suffix.lower()
    if suffix in SUPPORTED_SUFFIXES:
        return
    if suffix == ".pdf":
        raise DatasetError("PDF documents are not supported", file=str(file),
                           hint="convert it to text first, e.g. `pdftotext -layout file.pdf file.txt`")
    raise DatasetError(f"unsupported document type '{suffix or '(no extension)'}'", file=str(file),
                       hint="only .txt and .md documents are read; convert or remove this file")


def split_sentences(text: str) -> list[str]:
    """Sentences with their trailing punctuation and whitespace, so that ''.join(result) == text."""
    pieces: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > start:
            pieces.append(text[start:end])
            start = end
    if start < len(text):
        pieces.append(text[start:])
    return pieces


class _Unit(BaseModel):
    """A piece that is never split further: a whole paragraph, or a sentence of a long one."""

    text: str
    starts_paragraph: bool


def _paragraph_units(paragraph: str, chunk_size: int) -> list[_Unit]:
    if len(paragraph) <= chunk_size:
        return [_Unit(text=paragraph, starts_paragraph=True)]
    units: list[_Unit] = []
    for sentence in split_sentences(paragraph):
        # A single sentence longer than a chunk is cut hard; rare, and better than an oversized chunk.
        for offset in range(0, len(sentence), chunk_size):
            units.append(_Unit(text=sentence[offset:offset + chunk_size], starts_paragraph=not units))
    return units


def _sections(text: str) -> list[tuple[str, str | None, list[str]]]:
    """(heading path, heading line or None, paragraphs) per section, in document order."""
    sections: list[tuple[str, str | None, list[str]]] = []
    path: list[tuple[int, str]] = []
    heading_line: str | None = None
    paragraphs: list[str] = []
    current: list[str] = []

    def end_paragraph() -> None:
        if current and "".join(current).strip():
            paragraphs.append("\n".join(current).strip())
        current.clear()

    def end_section() -> None:
        end_paragraph()
        if paragraphs or heading_line:
            sections.append((" > ".join(title for _, title in path), heading_line, list(paragraphs)))
        paragraphs.clear()

    for line in text.split("\n"):
        heading = _HEADING.match(line)
        if heading:
            end_section()
            level, title = len(heading.group(1)), heading.group(2)
            path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, title)]
            heading_line = line.strip()
        elif not line.strip():
            end_paragraph()
        else:
            current.append(line.rstrip())
    end_section()
    return sections


def _joined(units: list[_Unit]) -> str:
    out = ""
    for unit in units:
        if out and unit.starts_paragraph:
            out = out.rstrip() + "\n\n"
        out += unit.text
    return out.strip()


def _overlap_tail(units: list[_Unit], overlap: int) -> list[_Unit]:
    """The longest run of trailing units that fits in `overlap` characters (whole sentences only)."""
    carried: list[_Unit] = []
    size = 0
    for unit in reversed(units):
        if size + len(unit.text) > overlap:
            break
        carried.insert(0, unit)
        size += len(unit.text)
    return carried


def _pack_section(prefix: str, paragraphs: list[str], chunk_size: int, overlap: int) -> list[str]:
    """Chunk texts for one section; `prefix` (its heading lines) opens the first chunk and counts toward its size."""
    texts: list[str] = []
    current: list[_Unit] = []
    for paragraph in paragraphs:
        for unit in _paragraph_units(paragraph, chunk_size):
            if current and len(prefix) + len(_joined(current + [unit])) > chunk_size:
                texts.append((prefix + _joined(current)).strip())
                prefix = ""
                current = _overlap_tail(current, overlap)
                if len(_joined(current + [unit])) > chunk_size:
                    current = []
            current.append(unit)
    if current:   # always ends with a unit not yet emitted, so this never repeats the overlap alone
        texts.append((prefix + _joined(current)).strip())
    return texts


def split_text(text: str, *, chunk_size: int = 500, overlap: int = 50) -> list[tuple[str, str]]:
    """(heading path, chunk text) pairs, each at most chunk_size characters (headings included).

    A chunk exceeds it only when its opening heading lines plus a single sentence already do.
    """
    if chunk_size < 20:
        raise ValueError("chunk_size must be at least 20 characters")
    if not 0 <= overlap < chunk_size:
        raise ValueError("overlap must be ≥ 0 and smaller than chunk_size")
    chunks: list[tuple[str, str]] = []
    pending_headings = ""   # headings of sections with no text of their own open the next chunk
    for heading_path, heading_line, paragraphs in _sections(text):
        # The heading opens the section's first chunk so the chunk says what it is about.
        prefix = pending_headings + (heading_line + "\n" if heading_line else "")
        if not paragraphs:
            pending_headings = prefix
            continue
        pending_headings = ""
        chunks.extend((heading_path, chunk) for chunk in _pack_section(prefix, paragraphs, chunk_size, overlap))
    if pending_headings.strip():
        chunks.append(("", pending_headings.strip()))
    return chunks


def chunk_documents(documents: list[Document], *, chunk_size: int = 500, overlap: int = 50) -> list[Chunk]:
    chunks: list[Chunk] = []
    for document in documents:
        for index, (heading, text) in enumerate(split_text(document.text, chunk_size=chunk_size, overlap=overlap)):
            chunks.append(Chunk(source=document.source, index=index, text=text, heading=heading))
    return chunks
