"""What a metric's `compute` reads: the sample, the options, and the typed outputs of the shared calls.

Accessors raise `Unscorable` when the output they stand for is missing (its call failed, or the embedder did),
so a metric body is only its formula and its own edge cases.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Evidence, UnscoredKind
from rubriceval.data.sample import Sample
from rubriceval.standard_metrics.call_plan import VERDICT_LABELS, CallKind, CallOutcome, EmbeddingOutcome
from rubriceval.standard_metrics.grounding import DroppedStatement
from rubriceval.standard_metrics.options import MetricOptions


class Unscorable(Exception):
    """This metric cannot give a score for this sample; `kind` and `reason` become the unscored verdict."""

    def __init__(self, kind: UnscoredKind, reason: str, details: dict[str, Any] | None = None):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.details = details or {}


class MetricResult(BaseModel):
    score: float
    feedback: str = ""
    evidence: list[Evidence] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


class StatementVerdict(BaseModel):
    id: str               # s1… for answer statements, g1… for ground-truth statements
    statement: str
    verdict: bool
    reason: str = ""


class ContextVerdict(BaseModel):
    id: str               # c1…, in retrieval order
    context: str
    reason: str
    relevant: bool | None = None   # helps arrive at the ground truth (context_precision)
    used: bool | None = None       # the answer used it (context_utilization)


class ReverseQuestions(BaseModel):
    questions: list[str]
    noncommittal: bool


class LabelVerdict(BaseModel):
    label: str
    positive: bool
    reason: str


class MetricContext:
    def __init__(self, sample: Sample, options: MetricOptions, language: str,
                 outcomes: dict[str, CallOutcome] | None = None, embedding: EmbeddingOutcome | None = None):
        self.sample = sample
        self.options = options
        self.language = language
        self.outcomes = outcomes or {}
        self.embedding = embedding

    def text(self, zh: str, en: str) -> str:
        """A message in the sample's language."""
        return zh if self.language == "zh" else en

    def _data(self, kind: CallKind, key: str | None = None) -> Any:
        outcome = self.outcomes.get(kind.value)
        if outcome is None:
            raise Unscorable("error", f"{kind.value} was not called")
        if not outcome.ok:
            raise Unscorable(outcome.error_kind or "error", outcome.error or f"{kind.value} failed")
        if key is None:
            return outcome.data
        if key not in outcome.data:
            if key in outcome.part_errors:
                raise Unscorable(outcome.part_error_kinds.get(key, "error"), outcome.part_errors[key])
            raise Unscorable("error", f"{kind.value} was not asked for {key}")
        return outcome.data[key]

    def answer_statements(self) -> list[str]:
        return list(self._data(CallKind.EXTRACT, "answer_statements"))

    def ground_truth_statements(self) -> list[str]:
        return list(self._data(CallKind.EXTRACT, "ground_truth_statements"))

    def dropped_statements(self, which: str) -> list[DroppedStatement]:
        """Statements the judge extracted from the answer ("answer_statements") or the ground truth
        ("ground_truth_statements") that the grounding check dropped (grounding.py)."""
        outcome = self.outcomes.get(CallKind.EXTRACT.value)
        return list(outcome.dropped.get(which, [])) if outcome is not None else []

    def added_statements(self, which: str) -> list[str]:
        """Sentences of the text the extraction skipped, added as statements (grounding.uncovered_sentences)."""
        outcome = self.outcomes.get(CallKind.EXTRACT.value)
        return list(outcome.added.get(which, [])) if outcome is not None else []

    def dropped_evidence(self, which: str) -> tuple[list[Evidence], dict[str, Any]]:
        """The dropped statements as evidence items (neither passed nor failed: not counted) and as details."""
        dropped = self.dropped_statements(which)
        label = self.text("未计入（{}）", "not counted ({})")
        reasons = {"question": self.text("是问题", "a question"), "greeting": self.text("是客套话", "a greeting"),
                   "not_in_source": self.text("原文中找不到", "not found in its source text")}
        evidence = [Evidence(item=d.statement, passed=None, detail=label.format(reasons[d.reason]))
                    for d in dropped]
        return evidence, ({"dropped_statements": [d.model_dump(exclude_none=True) for d in dropped]}
                          if dropped else {})

    def dropped_note(self, which: str) -> str:
        """What an unscored "no statements" reason adds when the grounding check dropped everything."""
        n = len(self.dropped_statements(which))
        return self.text(f"（另有 {n} 条被剔除：是问题、客套话或原文中找不到）",
                         f" ({n} more dropped: questions, greetings or not found in the text)") if n else ""

    def reverse_questions(self) -> ReverseQuestions:
        data = self._data(CallKind.REVERSE)
        return ReverseQuestions(questions=list(data["questions"].values()), noncommittal=data["noncommittal"])

    @staticmethod
    def _keyed(prefix: str, items: list[str], verdicts: dict, flag: str) -> list[StatementVerdict]:
        return [StatementVerdict(id=f"{prefix}{i}", statement=text, verdict=verdicts[f"{prefix}{i}"][flag],
                                 reason=verdicts[f"{prefix}{i}"]["reason"])
                for i, text in enumerate(items, start=1)]

    def context_verdicts(self) -> list[ContextVerdict]:
        verdicts = self._data(CallKind.CONTEXTS, "contexts")
        return [ContextVerdict(id=f"c{i}", context=text, reason=verdicts[f"c{i}"]["reason"],
                               relevant=verdicts[f"c{i}"].get("relevant"), used=verdicts[f"c{i}"].get("used"))
                for i, text in enumerate(self.sample.contexts, start=1)]

    def answer_support(self) -> list[StatementVerdict]:
        """Per answer statement: can it be inferred from the retrieved contexts?"""
        return self._keyed("s", self.answer_statements(),
                           self._data(CallKind.CONTEXTS, "answer_statements"), "supported")

    def ground_truth_attribution(self) -> list[StatementVerdict]:
        """Per ground-truth statement: can it be found in the retrieved contexts?"""
        return self._keyed("g", self.ground_truth_statements(),
                           self._data(CallKind.CONTEXTS, "ground_truth_statements"), "attributed")

    def answer_in_ground_truth(self) -> list[StatementVerdict]:
        return self._keyed("s", self.answer_statements(),
                           self._data(CallKind.CLASSIFY, "answer_statements"), "in_ground_truth")

    def ground_truth_in_answer(self) -> list[StatementVerdict]:
        return self._keyed("g", self.ground_truth_statements(),
                           self._data(CallKind.CLASSIFY, "ground_truth_statements"), "in_answer")

    def _label(self, kind: CallKind) -> LabelVerdict:
        data = self._data(kind)
        positive_label = VERDICT_LABELS[kind.value][self.language][0]
        return LabelVerdict(label=data["verdict"], positive=data["verdict"] == positive_label, reason=data["reason"])

    def answer_validity(self) -> LabelVerdict:
        return self._label(CallKind.VALIDITY)

    def context_usefulness(self) -> LabelVerdict:
        return self._label(CallKind.USEFULNESS)

    def vector(self, text: str) -> list[float]:
        if self.embedding is None:
            raise Unscorable("error", "no embedding was requested")
        if self.embedding.vectors is None:
            raise Unscorable(self.embedding.error_kind or "error", self.embedding.error or "embedding failed")
        return self.embedding.vectors[text]
