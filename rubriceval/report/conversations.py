"""Conversations in reports: one row per conversation, the turn where it first fails, and where in conversations
each rubric's rules fail.

A rule fails at a turn when a verdict's evidence names that turn and did not pass: a cross-turn or per-turn check
(`before` at the turn that revealed too early, `max_count` at the first turn over the limit, `escalate_after` at
the turn that should have handed over, `final_turn` at the last reply, per-turn checks at each failing turn), or a
per-turn judge score below the rubric's threshold (scope assistant_turn). Each (conversation, rubric, turn) counts
once. The judge's free-text citations ("第3轮", "turn 3", "[3]") are read too, but only to show which turns the
judge talks about (`feedback_turns`); they do not count as failures, since the feedback may cite a turn to praise it.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Evidence, Verdict
from rubriceval.data.sample import Sample

# Relative position of a turn in its conversation, in equal buckets from start to end (see position_bucket).
POSITION_BUCKETS = ("0–25%", "25–50%", "50–75%", "75–100%")

_NUMBER_LIST = r"\d+(?:\s*(?:[、,，/]|和|及|与|至|到|and|&|to|-|–|~)\s*\d+)*"
_CITATIONS = (re.compile(rf"第\s*({_NUMBER_LIST})\s*轮"),
              re.compile(rf"\bturns?\s+({_NUMBER_LIST})", re.IGNORECASE),
              re.compile(r"\[(\d+)\]"))
_RANGE = re.compile(r"(\d+)\s*(?:至|到|to|-|–|~)\s*(\d+)")


def feedback_turns(text: str, n_turns: int) -> list[int]:
    """Turn numbers a judge's feedback cites — 第3轮, 第 2、4 轮, 第2至4轮, turn 3, turns 2 and 5, [3] — that exist
    in a conversation of n_turns turns, in order of first mention."""
    found: list[tuple[int, int]] = []                     # (where in the text, turn)
    for pattern in _CITATIONS:
        for match in pattern.finditer(text or ""):
            listed = match.group(1)
            numbers = [int(n) for n in re.findall(r"\d+", _RANGE.sub("", listed))]
            for low, high in _RANGE.findall(listed):
                if int(high) - int(low) <= n_turns:          # "第1至3轮" expands; "1-800" is not a range of turns
                    numbers += range(int(low), int(high) + 1)
            found += [(match.start(), n) for n in numbers if 1 <= n <= n_turns]
    return list(dict.fromkeys(n for _, n in sorted(found, key=lambda pair: pair[0])))


def failing_turns(verdict: Verdict) -> list[tuple[int, Evidence]]:
    """(turn, evidence) of each evidence of a verdict that failed at a named turn, in turn order."""
    at_turn = [(e.turn, e) for e in verdict.evidence if e.turn is not None and e.passed is False]
    return sorted(at_turn, key=lambda pair: pair[0])


def failing_evidence(verdict: Verdict) -> list[Evidence]:
    """The evidence of a verdict that failed at a named turn, in turn order."""
    return [e for _, e in failing_turns(verdict)]


def first_failing_turn(verdict: Verdict) -> int | None:
    failing = failing_evidence(verdict)
    return failing[0].turn if failing else None


def answer_at(sample: Sample, turn: int | None) -> str:
    """What to show as a sample's answer: for a conversation with a failing turn, that turn ("[4] …"); else the
    answer (a conversation's last agent turn)."""
    if sample.conversation is None or turn is None or not 1 <= turn <= len(sample.conversation.turns):
        return sample.answer
    return f"[{turn}] {sample.conversation.turns[turn - 1].content}"


def failing_checks(verdict: Verdict) -> list[str]:
    """Check items (not judge scores) that failed, each once, in the order the verdict lists them."""
    per_turn_judge = {e.item for e in verdict.evidence if e.turn is not None and e.score is not None}
    return list(dict.fromkeys(e.item for e in verdict.evidence
                              if e.passed is False and e.score is None and e.item not in per_turn_judge))


class RubricCell(BaseModel):
    score: float | None = None
    unscored_kind: str | None = None
    passed: bool | None = None
    first_failing_turn: int | None = None
    failing_checks: list[str] = Field(default_factory=list)


class ConversationRow(BaseModel):
    """One conversation: its size, each conversation rubric's result, and where it first went wrong."""

    conversation_id: str
    n_turns: int
    n_assistant_turns: int
    tags: list[str] = Field(default_factory=list)
    intent: str = ""
    rubrics: dict[str, RubricCell] = Field(default_factory=dict)     # rubric id → its result on this conversation
    first_failing_turn: int | None = None                             # over all rubrics
    first_failing_rubric: str | None = None
    failing_checks: list[str] = Field(default_factory=list)          # "rubric/check", over all rubrics


class PositionCounts(BaseModel):
    """Where one rubric fails: failing turns per relative-position bucket and per absolute turn number."""

    scorer: str
    by_bucket: list[int]
    by_turn: dict[int, int] = Field(default_factory=dict)
    n_conversations_failing: int = 0


class ConversationReport(BaseModel):
    rows: list[ConversationRow]
    rubrics: list[str]                        # conversation rubric ids, in report order
    positions: list[PositionCounts]
    buckets: list[str] = Field(default_factory=lambda: list(POSITION_BUCKETS))

    @property
    def empty(self) -> bool:
        return not self.rows


def position_bucket(turn: int, n_turns: int, n_buckets: int = len(POSITION_BUCKETS)) -> int:
    """The bucket of a turn's relative position (turn − 1) / (n_turns − 1), 0 at the first turn and 1 at the last:
    8 turns in 4 buckets → turns 1–2, 3–4, 5–6, 7–8; the first turn is always at the start, the last at the end."""
    if n_turns <= 1:
        return 0
    return min(n_buckets - 1, max(0, math.floor((turn - 1) * n_buckets / (n_turns - 1))))


def _cell(verdict: Verdict) -> RubricCell:
    return RubricCell(score=verdict.score, unscored_kind=verdict.unscored_kind, passed=verdict.passed,
                      first_failing_turn=first_failing_turn(verdict), failing_checks=failing_checks(verdict))


def _by_sample(samples: Iterable[Sample], verdicts: Iterable[Verdict]
               ) -> tuple[dict[str, Sample], dict[str, dict[str, Verdict]]]:
    """The conversation samples by id and their rubric verdicts by sample and rubric."""
    conversations = {s.id: s for s in samples if s.conversation is not None}
    by_sample: dict[str, dict[str, Verdict]] = {}
    for v in verdicts:
        if v.kind == "rubric" and v.sample_id in conversations:
            by_sample.setdefault(v.sample_id, {})[v.scorer] = v
    return conversations, by_sample


class PositionTally:
    """Where each rubric fails, counted a chunk of conversations at a time (bounded state: a counter per rubric,
    bucket and turn number), and the rubrics in order of first appearance."""

    def __init__(self) -> None:
        self.positions: dict[str, PositionCounts] = {}
        self.n_conversations = 0

    def add(self, samples: Iterable[Sample], verdicts: Iterable[Verdict]) -> None:
        conversations, by_sample = _by_sample(samples, verdicts)
        self.n_conversations += len(conversations)
        for sample_id, cells in by_sample.items():
            conversation = conversations[sample_id].conversation
            assert conversation is not None          # _by_sample keeps the conversation samples only
            n_turns = len(conversation.turns)
            for rubric, verdict in cells.items():
                counts = self.positions.setdefault(
                    rubric, PositionCounts(scorer=rubric, by_bucket=[0] * len(POSITION_BUCKETS)))
                turns = sorted({e.turn for e in failing_evidence(verdict) if e.turn is not None})
                counts.n_conversations_failing += bool(turns)
                for turn in turns:
                    counts.by_bucket[position_bucket(turn, n_turns)] += 1
                    counts.by_turn[turn] = counts.by_turn.get(turn, 0) + 1

    def rubrics(self, rubric_order: Sequence[str] = ()) -> list[str]:
        seen = list(self.positions)
        return [r for r in rubric_order if r in seen] + [r for r in seen if r not in rubric_order]

    def ordered(self, rubrics: Sequence[str]) -> list[PositionCounts]:
        return [self.positions[r] for r in rubrics]


def conversation_rows(samples: Iterable[Sample], verdicts: Iterable[Verdict], rubrics: Sequence[str]
                      ) -> Iterator[tuple[ConversationRow, Sample]]:
    """One row per conversation sample (in the samples' order) with its sample, given the report's rubrics."""
    conversations, by_sample = _by_sample(samples, verdicts)
    for sample_id, sample in conversations.items():
        conversation = sample.conversation
        assert conversation is not None
        row = ConversationRow(conversation_id=sample_id, n_turns=len(conversation.turns),
                              n_assistant_turns=len(conversation.assistant_turns), tags=list(sample.tags),
                              intent=sample.intent)
        for rubric in rubrics:
            verdict = by_sample.get(sample_id, {}).get(rubric)
            if verdict is None:
                continue
            cell = row.rubrics[rubric] = _cell(verdict)
            row.failing_checks += [f"{rubric}/{item}" for item in cell.failing_checks]
            if cell.first_failing_turn is not None and (row.first_failing_turn is None
                                                        or cell.first_failing_turn < row.first_failing_turn):
                row.first_failing_turn, row.first_failing_rubric = cell.first_failing_turn, rubric
        yield row, sample


def conversation_report(samples: Iterable[Sample], verdicts: Sequence[Verdict],
                        rubric_order: Sequence[str] = ()) -> ConversationReport:
    """Rows and failure positions for the conversation samples of a run (rubric verdicts only), all in memory:
    for a small run; stored runs are streamed (report/conversation_stream.py) through the same two steps."""
    samples = list(samples)
    tally = PositionTally()
    tally.add(samples, verdicts)
    rubrics = tally.rubrics(rubric_order)
    rows = [row for row, _ in conversation_rows(samples, verdicts, rubrics)]
    return ConversationReport(rows=rows, rubrics=rubrics, positions=tally.ordered(rubrics))


def rubric_names(scorers: Sequence[Mapping]) -> dict[str, str]:
    """Rubric id → display name, from `RunStore.scorers` rows."""
    return {s["scorer"]: str((s.get("definition") or {}).get("name") or s["scorer"]) for s in scorers}
