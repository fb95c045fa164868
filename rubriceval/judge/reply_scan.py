"""Finding the verdict's markers in a reply: blank <think> drafts, mark quoted material and echoed fields, match the
marker patterns, and pick the final result section (rules 2–6 in parser.py)."""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rubriceval.judge.reply_markers import (
    CHINESE_NUMERALS,
    LEVEL_DESCRIPTION_FOLLOWS,
    MAX_SECTION_GAP_WORD_CHARS,
    REFERENCE_HEADING_BEFORE,
    TO_ASCII,
    Marker,
)

# Reasoning-model drafts; an unclosed block (reply cut off while thinking) runs to the end.
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)

# The prompt fences the material under review as <<<字段>>> … <<<END 字段>>>; a judge that echoes such a block is quoting.
_FIELD_OPEN = re.compile(r"<<<(?!END\b)([^<>\n]{1,40})>>>")
_FIELD_CLOSE = re.compile(r"<<<END ([^<>\n]{1,40})>>>")

# Opening → closing typographic quotes; these are unambiguous, so they may span lines.
_PAIRED_QUOTES = {"“": "”", "「": "」", "『": "』"}
# Straight quotes and inline code open and close with the same character; paired within one line only, so a stray
# inch mark cannot turn the rest of the reply into a "quotation".
_SAME_CHAR_QUOTES = ('"', "`")
_CODE_FENCE_RUN = re.compile(r"`{3,}")


@dataclass
class Candidate:
    form: str
    tier: int
    start: int
    end: int
    groups: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """What two markers must share to agree: the number (4 and 4/5 agree; 4 and 4.0 agree) or the letter."""
        raw = self.groups.get("num") or ""
        if raw in CHINESE_NUMERALS:
            return str(CHINESE_NUMERALS[raw])
        try:
            return repr(float(raw))
        except ValueError:
            return raw.upper()


@dataclass
class Scan:
    """The reply prepared for matching: normalised text plus what must not be read as a verdict."""

    visible: str                         # original with <think> blocks blanked (same length)
    text: str                            # visible, normalised to ASCII forms (same length)
    quoted: Spans                     # quoted material: markers in here are never verdicts
    hides_json: Spans                 # the part of it that can also hide a whole JSON object
    had_reasoning: bool


def prepare(text: str) -> Scan:
    visible = _THINK_BLOCK.sub(lambda m: " " * len(m.group()), text)
    had_reasoning = visible != text
    # Quotes wrapping the whole reply are the judge copying the format line literally, not a quotation: blank them.
    stripped = visible.strip()
    if len(stripped) >= 2 and (_PAIRED_QUOTES.get(stripped[0]) == stripped[-1] or stripped[0] == stripped[-1] == '"'):
        first, last = visible.index(stripped[0]), visible.rindex(stripped[-1])
        visible = visible[:first] + " " + visible[first + 1:last] + " " + visible[last + 1:]
    normalised = visible.translate(TO_ASCII)
    strong, straight = _quoted_spans(normalised)
    return Scan(visible=visible, text=normalised, quoted=Spans(strong + straight), hides_json=Spans(strong),
                 had_reasoning=had_reasoning)


class Spans:
    """Open intervals (start, end), merged and sorted so membership is a binary search."""

    def __init__(self, spans: list[tuple[int, int]]):
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    def contains(self, position: int) -> bool:
        i = bisect.bisect_left(self._starts, position) - 1
        return i >= 0 and position < self._ends[i]


def _quoted_spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(echoed field blocks, typographic quotes and inline code; straight double quotes) as (start, end) pairs."""
    spans = _echoed_field_blocks(text)
    straight: list[tuple[int, int]] = []
    opened: dict[str, list[int]] = {}
    closing_to_opening = {close: open_ for open_, close in _PAIRED_QUOTES.items()}
    for i, ch in enumerate(text):
        if ch in _PAIRED_QUOTES:
            opened.setdefault(ch, []).append(i)
        elif ch in closing_to_opening and opened.get(closing_to_opening[ch]):
            spans.append((opened[closing_to_opening[ch]].pop(), i))
    without_fences = _CODE_FENCE_RUN.sub(lambda m: " " * len(m.group()), text)
    line_start = 0
    for line in without_fences.split("\n"):
        for quote in _SAME_CHAR_QUOTES:
            open_at: int | None = None
            for j, ch in enumerate(line):
                if ch == quote and not (j and line[j - 1] == "\\"):
                    if open_at is None:
                        open_at = j
                    else:
                        (straight if quote == '"' else spans).append((line_start + open_at, line_start + j))
                        open_at = None
        line_start += len(line) + 1
    return spans, straight


def _echoed_field_blocks(text: str) -> list[tuple[int, int]]:
    """<<<字段>>> … <<<END 字段>>> spans, each opener paired with the first matching END after it."""
    closes: dict[str, list[tuple[int, int]]] = {}
    for m in _FIELD_CLOSE.finditer(text):
        closes.setdefault(m.group(1), []).append((m.start(), m.end()))
    blocks: list[tuple[int, int]] = []
    for m in _FIELD_OPEN.finditer(text):
        ends = closes.get(m.group(1), [])
        i = bisect.bisect_left(ends, (m.end(), 0))
        if i < len(ends):
            blocks.append((m.start(), ends[i][1]))
    return blocks


def _is_rubric_echo(scan: Scan, candidate: Candidate) -> bool:
    if LEVEL_DESCRIPTION_FOLLOWS.match(scan.text, candidate.end):
        return True
    return bool(REFERENCE_HEADING_BEFORE.search(scan.text[max(0, candidate.start - 40):candidate.start]))


@dataclass
class Found:
    candidates: list[Candidate]     # readable markers, in text order
    quoted: int = 0                  # markers ignored as quotations
    echoes: int = 0                  # markers ignored as rubric echoes


def find_markers(scan: Scan, markers: tuple[Marker, ...], excluded: Spans) -> Found:
    matches = [(marker, m) for marker in markers for m in marker.pattern.finditer(scan.text)]
    # Strongest first, then earliest: "[Result] Score: 2" is one result_tag, not also a score_label.
    matches.sort(key=lambda pair: (pair[0].tier, pair[1].start()))
    kept: list[tuple[Marker, re.Match[str]]] = []   # in text order; spans never overlap, so checking the
    kept_starts: list[int] = []                       # neighbour on each side of an insertion point suffices
    for marker, m in matches:
        i = bisect.bisect_left(kept_starts, m.start())
        before = kept[i - 1][1] if i > 0 else None
        after = kept[i][1] if i < len(kept) else None
        if (before is None or before.end() <= m.start()) and (after is None or m.end() <= after.start()):
            kept_starts.insert(i, m.start())
            kept.insert(i, (marker, m))
    found = Found(candidates=[])
    for marker, m in kept:
        candidate = Candidate(marker.form, marker.tier, m.start(), m.end(), m.groupdict())
        if scan.quoted.contains(m.start()) or excluded.contains(m.start()):
            found.quoted += 1
        elif marker.may_be_rubric_echo and _is_rubric_echo(scan, candidate):
            found.echoes += 1
        else:
            found.candidates.append(candidate)
    return found


def _word_chars(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def final_section(candidates: list[Candidate], text: str) -> list[Candidate]:
    """The verdict (last of the strongest tier) and the same-tier markers right before it."""
    top_tier = min(c.tier for c in candidates)
    same_tier = [c for c in candidates if c.tier == top_tier]
    section = [same_tier[-1]]
    for earlier in reversed(same_tier[:-1]):
        if _word_chars(text[earlier.end:section[-1].start]) > MAX_SECTION_GAP_WORD_CHARS:
            break
        section.append(earlier)
    return section


def disagreement(section: list[Candidate], describe: Callable[[Candidate], str]) -> str | None:
    """Why the final result section is ambiguous, or None when all its markers agree with the verdict."""
    values = list(dict.fromkeys(describe(c) for c in reversed(section) if c.key != section[0].key))
    if not values:
        return None
    return (f"ambiguous: the final result section gives different results "
            f"({', '.join(values + [describe(section[0])])}); the last marker is not clearly the verdict")
