"""What the shared metric calls are: their kinds, what each metric needs from them, the plan of one sample's
calls, and the typed request/outcome of a call. How they are cut into requests: call_modes.py; rendered:
requests.py; run and planned: calls.py.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel, Field

from rubriceval.core.verdict import UnscoredKind, Usage
from rubriceval.judge.ask import JudgeRequest as AskRequest
from rubriceval.standard_metrics.call_modes import CallModes
from rubriceval.standard_metrics.grounding import DroppedStatement

# 3: skipped answer sentences are added. 2: statements are grounded in their source (grounding.py); extraction/contexts
# may be cut into several requests.
CALLS_VERSION = "3"


class CallKind(str, Enum):
    EXTRACT = "extract_statements"
    REVERSE = "reverse_questions"
    CONTEXTS = "judge_contexts"
    CLASSIFY = "classify_statements"
    VALIDITY = "answer_validity"
    USEFULNESS = "context_usefulness"


EMBEDDING = "embedding"   # the per-sample embedding request, attributed like a judge call

# Calls in the order they are issued; round 1 needs nothing from another call.
ROUND_1 = (CallKind.EXTRACT, CallKind.REVERSE, CallKind.VALIDITY, CallKind.USEFULNESS)
ROUND_2 = (CallKind.CONTEXTS, CallKind.CLASSIFY)


class Need(str, Enum):
    """One piece of judge (or embedder) output a metric consumes."""

    ANSWER_STATEMENTS = "answer_statements"
    GROUND_TRUTH_STATEMENTS = "ground_truth_statements"
    REVERSE_QUESTIONS = "reverse_questions"
    CONTEXT_RELEVANCE = "context_relevance"
    CONTEXT_USE = "context_use"
    ANSWER_SUPPORT = "answer_support"
    GROUND_TRUTH_ATTRIBUTION = "ground_truth_attribution"
    CLASSIFICATION = "classification"
    ANSWER_VALIDITY = "answer_validity"
    CONTEXT_USEFULNESS = "context_usefulness"
    EMBED_ANSWER_AND_GROUND_TRUTH = "embed_answer_and_ground_truth"
    EMBED_QUESTIONS = "embed_questions"


CALL_OF_NEED: dict[Need, str] = {
    Need.ANSWER_STATEMENTS: CallKind.EXTRACT.value,
    Need.GROUND_TRUTH_STATEMENTS: CallKind.EXTRACT.value,
    Need.REVERSE_QUESTIONS: CallKind.REVERSE.value,
    Need.CONTEXT_RELEVANCE: CallKind.CONTEXTS.value,
    Need.CONTEXT_USE: CallKind.CONTEXTS.value,
    Need.ANSWER_SUPPORT: CallKind.CONTEXTS.value,
    Need.GROUND_TRUTH_ATTRIBUTION: CallKind.CONTEXTS.value,
    Need.CLASSIFICATION: CallKind.CLASSIFY.value,
    Need.ANSWER_VALIDITY: CallKind.VALIDITY.value,
    Need.CONTEXT_USEFULNESS: CallKind.USEFULNESS.value,
    Need.EMBED_ANSWER_AND_GROUND_TRUTH: EMBEDDING,
    Need.EMBED_QUESTIONS: EMBEDDING,
}

VERDICT_LABELS: dict[str, dict[str, tuple[str, str]]] = {
    # (positive, negative) labels, as the seeds' naive testers answer.
    CallKind.VALIDITY.value: {"zh": ("有效回答", "无效回答"), "en": ("valid answer", "invalid answer")},
    CallKind.USEFULNESS.value: {"zh": ("参考信息有用", "参考信息无用"), "en": ("useful contexts", "useless contexts")},
}


@dataclass(frozen=True)
class CallPlan:
    """Which calls a sample needs, and which metrics consume each (in the order the metrics were asked for)."""

    needs_by_metric: dict[str, frozenset[Need]]
    modes: CallModes = field(default_factory=CallModes)

    def wants(self, need: Need) -> bool:
        return any(need in needs for needs in self.needs_by_metric.values())

    def consumers(self, call: str) -> list[str]:
        return [name for name, needs in self.needs_by_metric.items()
                if any(CALL_OF_NEED[n] == call for n in needs)]

    @property
    def judge_calls(self) -> list[CallKind]:
        """The judge calls made when every call succeeds; required fields are checked before planning, so
        the only run-time skips are a statement list coming back empty (then fewer calls, never more)."""
        wanted = {CALL_OF_NEED[n] for needs in self.needs_by_metric.values() for n in needs}
        return [kind for kind in (*ROUND_1, *ROUND_2) if kind.value in wanted]

    def request_count(self, n_contexts: int) -> int:
        """Judge requests when every call succeeds: a split extraction asks once per text it extracts from, a
        per-context judgment once per context."""
        count = 0
        for kind in self.judge_calls:
            if kind is CallKind.EXTRACT and self.modes.extraction == "split":
                count += self.wants(Need.ANSWER_STATEMENTS) + self.wants(Need.GROUND_TRUTH_STATEMENTS)
            elif kind is CallKind.CONTEXTS and self.modes.context_calls == "per_context":
                count += n_contexts
            else:
                count += 1
        return count

    @property
    def needs_embedding(self) -> bool:
        return self.wants(Need.EMBED_ANSWER_AND_GROUND_TRUTH) or self.wants(Need.EMBED_QUESTIONS)

    @property
    def contexts_wait_for_statements(self) -> bool:
        return self.wants(Need.ANSWER_SUPPORT) or self.wants(Need.GROUND_TRUTH_ATTRIBUTION)


class JudgeRequest(AskRequest):
    """A metric call's request: always structured, named by its call kind."""

    kind: str
    json_schema: dict


class CallOutcome(BaseModel):
    """A judge call's validated output, or why there is none, and what it cost (re-ask included)."""

    kind: str
    data: dict | None = None
    error: str | None = None
    error_kind: UnscoredKind | None = None
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 0
    requests: list[JudgeRequest] = Field(default_factory=list)
    # A call cut into several requests (call_modes.py) that partly failed: the output key → why it is missing.
    part_errors: dict[str, str] = Field(default_factory=dict)
    part_error_kinds: dict[str, UnscoredKind] = Field(default_factory=dict)
    # Extraction: statements the grounding check dropped (grounding.py), per output key.
    dropped: dict[str, list[DroppedStatement]] = Field(default_factory=dict)
    # Extraction: answer sentences no extracted statement covered, added as statements (grounding.py).
    added: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.data is not None


class EmbeddingOutcome(BaseModel):
    vectors: dict[str, list[float]] | None = None
    error: str | None = None
    error_kind: UnscoredKind | None = None
    usage: Usage = Field(default_factory=Usage)


class PlannedCall(BaseModel):
    kind: str
    messages: list[dict[str, str]]
    json_schema: dict
    schema_name: str
    cache_tag: str
    consumers: list[str]
    depends_on: list[str] = Field(default_factory=list)
    exact: bool = True     # False: rendered with stand-in statements (the extraction's output is not known yet)


CacheLookup = Callable[[JudgeRequest], dict | None]

