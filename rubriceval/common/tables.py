"""Plain-text and Markdown tables shared by every text report (CJK-aware column widths)."""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def display_width(text: str) -> int:
    """Terminal columns: CJK and other wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * max(0, width - display_width(text))
    return gap + text if right else text + gap


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right_align: Sequence[int] = ()) -> str:
    """A plain-text table whose columns line up even with Chinese text."""
    widths = [display_width(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], display_width(cell))
    lines = ["  ".join(_pad(h, widths[i], i in right_align) for i, h in enumerate(headers)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(_pad(cell, widths[i], i in right_align) for i, cell in enumerate(row)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def _md_cell(text: str) -> str:
    # A pipe or newline in a rubric name or reason would break the table.
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
