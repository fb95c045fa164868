"""From a chosen marker or JSON object to a checked integer score and clean feedback (rule 7 in parser.py)."""
from __future__ import annotations

import json
import math
import re
from typing import Any

from rubriceval.judge.parsed import ParsedOutput
from rubriceval.judge.reply_markers import CHINESE_NUMERALS, TO_ASCII
from rubriceval.judge.reply_scan import Candidate, Scan

# What is stripped from feedback: code fence lines, a leading "Feedback:" label, trailing markup.
_FENCE_LINE = re.compile(r"^[ \t]*```[\w+-]*[ \t]*$\n?", re.M)
_FEEDBACK_LABEL = re.compile(r"^\s*(?:#+\s*)?[*_]*(?:feedback|reason(?:ing)?|explanation|反馈|评语|评价|理由|说明)[*_]*\s*"
                             r"[:：][*_]*\s*", re.I)
_TRAILING_MARKUP = " \t\r\n*_#>"
_LEADING_PUNCTUATION = " \t\r\n。.,，;；:：)）]】*_"

# Where a JSON object can start, and how many starts to try: a judge reply holds a handful; thousands of unclosed
# braces would otherwise cost quadratic decoding time.
_JSON_OBJECT_START = re.compile(r"\{\s*[\"'}]")
_MAX_JSON_DECODE_ATTEMPTS = 200

# Key names accepted in a judge's JSON object (the schema asks for feedback/score; text-mode JSON varies).
_SCORE_KEYS = ("score", "rating", "得分", "分数", "评分")
_FEEDBACK_KEYS = ("feedback", "reasoning", "rationale", "explanation", "反馈", "评语", "理由")


# ── feedback ─────────────────────────────────────────────────────────────────────────────────────────────────────────

def clean_feedback(text: str) -> str:
    text = _FENCE_LINE.sub("", text).strip()
    text = _FEEDBACK_LABEL.sub("", text, count=1)
    return text.rstrip(_TRAILING_MARKUP).strip()


def feedback_around(scan: Scan, section: list[Candidate]) -> str:
    """The text before the final result section; a judge that put the score first explains after it."""
    before = clean_feedback(scan.visible[:section[-1].start])
    return before or clean_feedback(scan.visible[section[0].end:].lstrip(_LEADING_PUNCTUATION))


# ── score values ─────────────────────────────────────────────────────────────────────────────────────────────────────

def score_from_marker(candidate: Candidate, min_score: int, max_score: int) -> tuple[int | None, str | None]:
    g = candidate.groups
    shown = marker_text(candidate)
    if g.get("alt"):
        return None, f"ambiguous: '{shown}' gives a range, not one score"
    scale = g.get("den") or g.get("full")
    if scale is not None and int(scale) != max_score:
        return None, (f"score '{shown}' is on a 0–{int(scale)} scale, expected an integer {min_score}–{max_score} "
                      "(not rescaled)")
    return checked_integer(g["num"], min_score, max_score)


def marker_text(candidate: Candidate) -> str:
    g = candidate.groups
    text = str(g.get("num"))
    if g.get("den"):
        text += f"/{g['den']}"
    if g.get("alt"):
        text += g["alt"].strip()
    return text


def checked_integer(raw: Any, min_score: int, max_score: int) -> tuple[int | None, str | None]:
    """An integer score within range from an int, an integral float, or a string such as "4", "４", "4分", "四"."""
    value: float
    if isinstance(raw, bool):
        return None, f"score must be an integer, got {json.dumps(raw)}"
    if raw is None:
        return None, "score is null"
    if isinstance(raw, (int, float)):
        value = raw
    elif isinstance(raw, str):
        text = raw.translate(TO_ASCII).strip().removesuffix("分").strip()
        if text in CHINESE_NUMERALS:
            value = CHINESE_NUMERALS[text]
        elif re.fullmatch(r"[-+]?\d+(?:\.\d+)?", text):
            value = float(text)
        else:
            return None, f"score {raw!r} is not an integer"
    else:
        return None, f"score must be an integer, got {type(raw).__name__}"
    if not math.isfinite(value) or value != int(value):
        return None, f"score {raw} is not an integer"
    score = int(value)
    if not min_score <= score <= max_score:
        return None, f"score {score} is outside the {min_score}–{max_score} range"
    return score, None


# ── structured output ────────────────────────────────────────────────────────────────────────────────────────────────

def _field(obj: dict, names: tuple[str, ...]) -> tuple[bool, Any]:
    by_casefold = {str(k).casefold(): k for k in obj}
    for name in names:
        if name in by_casefold:
            return True, obj[by_casefold[name]]
    return False, None


def from_object(obj: Any, min_score: int, max_score: int) -> ParsedOutput:
    if not isinstance(obj, dict):
        return ParsedOutput(error=f"structured output is a {type(obj).__name__}, not a JSON object", form="json")
    has_feedback, feedback = _field(obj, _FEEDBACK_KEYS)
    has_score, raw_score = _field(obj, _SCORE_KEYS)
    feedback_text = feedback.strip() if isinstance(feedback, str) else ""
    missing = [name for name, present in (("feedback", has_feedback), ("score", has_score)) if not present]
    if missing:
        return ParsedOutput(feedback=feedback_text, form="json",
                            error=" and ".join(f"missing field '{name}'" for name in missing))
    if not isinstance(feedback, str):
        return ParsedOutput(error=f"field 'feedback' is a {type(feedback).__name__}, not a string", form="json")
    score, error = checked_integer(raw_score, min_score, max_score)
    return ParsedOutput(score=score, error=error, feedback=feedback_text, form="json")


def judge_objects(scan: Scan) -> list[Candidate]:
    """Top-level JSON objects in the reply that carry a judge field (score or feedback), outside quotations."""
    decoder = json.JSONDecoder()
    objects: list[Candidate] = []
    position = 0
    for _ in range(_MAX_JSON_DECODE_ATTEMPTS):
        start_match = _JSON_OBJECT_START.search(scan.visible, position)
        if start_match is None:
            break
        start = start_match.start()
        try:
            obj, end = decoder.raw_decode(scan.visible, start)
        except (json.JSONDecodeError, RecursionError):
            position = start + 1
            continue
        if isinstance(obj, dict) and (_field(obj, _SCORE_KEYS)[0] or _field(obj, _FEEDBACK_KEYS)[0]):
            # Its own "…" strings are straight-quoted, so only typographic quotes and echoed blocks hide an object.
            if not scan.hides_json.contains(start):
                objects.append(Candidate("json", 0, start, end, {"obj": obj, "num": str(_field(obj, _SCORE_KEYS)[1])}))
            position = end       # anything nested in its strings is its content, never a second verdict
        else:
            position = start + 1  # a wrapper such as {"result": {...}}: look inside
    return objects


_FEEDBACK_FRAGMENT = re.compile(r"[\"'](?:feedback|反馈|评语)[\"']\s*:\s*\"((?:[^\"\\]|\\.)*)", re.I)


def feedback_from_fragment(visible: str) -> str | None:
    """The feedback string of JSON that did not decode, unescaped when possible."""
    m = _FEEDBACK_FRAGMENT.search(visible)
    if not m:
        return None
    try:
        return json.loads(f'"{m.group(1)}"').strip()
    except json.JSONDecodeError:
        return m.group(1).strip()
