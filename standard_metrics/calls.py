"""The judge calls behind the LLM metrics, and how one sample's metrics share them.

Ragas asks one question per metric (and per statement batch, per context, per generated question): 14 calls
for the five classic metrics on a 5-context sample. Here a sample needs at most four, in two rounds:

  round 1  extract_statements   question + answer + ground truth → atomic statements of both (reused by
                                answer_correctness, faithfulness and context_recall)
           reverse_questions    the answer alone → N questions back + a noncommittal flag (answer_relevancy);
                                a separate call because the judge must not see the original question
  round 2  judge_contexts       ALL contexts at once → per-context relevance (context_precision) / use
                                (context_utilization), per answer statement support (faithfulness), per
                                ground-truth statement attribution (context_recall)
           classify_statements  answer vs ground-truth statements → TP / FP / FN (answer_correctness)
           + one embedding request for every text that needs a vector

Every output is a JSON schema (structured output), so nothing has to be re-asked unless the judge breaks it;
then it is re-asked once with the problems listed.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable

from pydantic import BaseModel, Field

from rubriceval.data.sample import Sample
from rubriceval.judge.ask import JudgeRequest as AskRequest
from rubriceval.judge.ask import TemplateReask, ask, json_reader
from rubriceval.scoring.verdict import UnscoredKind, Usage
from standard_metrics.options import MetricOptions
from standard_metrics.prompts import PromptLibrary
from standard_metrics.protocols import Embedder, EmbeddingReply, Judge
from standard_metrics.schemas import BOOLEAN, STRING, array_of, keyed, obj, validate, verdict_item

CALLS_VERSION = "1"


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

    @property
    def ok(self) -> bool:
        return self.data is not None


class EmbeddingOutcome(BaseModel):
    vectors: dict[str, list[float]] | None = None
    error: str | None = None
    error_kind: UnscoredKind | None = None
    usage: Usage = Field(default_factory=Usage)


def _prune(verdict: dict, flags: tuple[str, ...]) -> dict:
    return {"reason": verdict["reason"], **{f: verdict[f] for f in flags}}


def _verdicts_schema(*flags: str) -> dict:
    return array_of(verdict_item(*flags))


def check_examples(data: dict, lang: str) -> list[str]:
    """Shape problems of a few-shot examples file (a team's replacement must keep the built-in shape)."""
    strings = array_of(STRING)

    def labelled(kind: CallKind, shown: dict[str, dict]) -> dict:
        verdict = {"type": "string", "enum": list(VERDICT_LABELS[kind.value][lang])}
        return array_of(obj({"question": STRING, **shown, "reason": STRING, "verdict": verdict}))

    schema = obj({
        CallKind.EXTRACT.value: obj({"question": STRING, "answer": STRING, "ground_truth": STRING,
                                     "answer_statements": strings, "ground_truth_statements": strings}),
        CallKind.REVERSE.value: array_of(obj({"answer": STRING, "questions": strings, "noncommittal": BOOLEAN})),
        CallKind.CONTEXTS.value: obj({
            "question": STRING, "contexts": strings, "ground_truth": STRING, "answer": STRING,
            "answer_statements": strings, "ground_truth_statements": strings,
            "context_verdicts": _verdicts_schema("relevant", "used"),
            "answer_statement_verdicts": _verdicts_schema("supported"),
            "ground_truth_statement_verdicts": _verdicts_schema("attributed")}),
        CallKind.CLASSIFY.value: obj({
            "question": STRING, "answer_statements": strings, "ground_truth_statements": strings,
            "answer_statement_verdicts": _verdicts_schema("in_ground_truth"),
            "ground_truth_statement_verdicts": _verdicts_schema("in_answer")}),
        CallKind.VALIDITY.value: labelled(CallKind.VALIDITY, {"answer": STRING}),
        CallKind.USEFULNESS.value: labelled(CallKind.USEFULNESS, {"contexts": strings}),
    })
    _, problems = validate(data, schema)
    if problems:
        return problems
    pairs = [(CallKind.CONTEXTS.value, "contexts", "context_verdicts"),
             (CallKind.CONTEXTS.value, "answer_statements", "answer_statement_verdicts"),
             (CallKind.CONTEXTS.value, "ground_truth_statements", "ground_truth_statement_verdicts"),
             (CallKind.CLASSIFY.value, "answer_statements", "answer_statement_verdicts"),
             (CallKind.CLASSIFY.value, "ground_truth_statements", "ground_truth_statement_verdicts")]
    problems = [f"{kind}.{verdicts}: {len(data[kind][verdicts])} verdicts for {len(data[kind][items])} {items}"
                for kind, items, verdicts in pairs if len(data[kind][items]) != len(data[kind][verdicts])]
    problems += [f"{CallKind.REVERSE.value}[{i}].questions: needs 5 questions, has {len(ex['questions'])}"
                 for i, ex in enumerate(data[CallKind.REVERSE.value]) if len(ex["questions"]) < 5]
    return problems


class RequestBuilder:
    """Renders each call's messages and JSON schema for one sample, in one language."""

    def __init__(self, sample: Sample, language: str, options: MetricOptions, library: PromptLibrary):
        self.sample = sample
        self.lang = language
        self.options = options
        self.library = library
        self.examples = library.examples(language, check=check_examples)

    def _request(self, kind: CallKind, schema: dict, **variables: Any) -> JudgeRequest:
        return JudgeRequest(kind=kind.value, messages=self.library.render(kind.value, self.lang, **variables),
                            json_schema=schema, schema_name=kind.value,
                            cache_tag=f"standard_metrics/{kind.value}/v{CALLS_VERSION}")

    def extract(self, want_answer: bool, want_ground_truth: bool) -> JudgeRequest:
        ex = self.examples["extract_statements"]
        props: dict[str, dict] = {}
        example_output: dict[str, Any] = {}
        if want_answer:
            props["answer_statements"] = array_of(STRING)
            example_output["answer_statements"] = ex["answer_statements"]
        if want_ground_truth:
            props["ground_truth_statements"] = array_of(STRING)
            example_output["ground_truth_statements"] = ex["ground_truth_statements"]
        return self._request(CallKind.EXTRACT, obj(props), want_answer=want_answer,
                             want_ground_truth=want_ground_truth, example={**ex, "output": example_output},
                             question=self.sample.question, answer=self.sample.answer,
                             ground_truth=self.sample.ground_truth)

    def reverse(self) -> JudgeRequest:
        n = self.options.relevancy_questions
        examples = [{"answer": ex["answer"],
                     "output": {"questions": {f"q{i + 1}": q for i, q in enumerate(ex["questions"][:n])},
                                "noncommittal": ex["noncommittal"]}}
                    for ex in self.examples["reverse_questions"]]
        schema = obj({"questions": keyed("q", n, STRING), "noncommittal": BOOLEAN})
        return self._request(CallKind.REVERSE, schema, n=n, examples=examples, answer=self.sample.answer)

    def contexts(self, *, want_relevance: bool, want_use: bool, answer_statements: list[str],
                 ground_truth_statements: list[str]) -> JudgeRequest | None:
        """None when nothing is left to ask (e.g. both statement lists came back empty)."""
        if not (want_relevance or want_use or answer_statements or ground_truth_statements):
            return None
        ex = self.examples["judge_contexts"]
        flags = tuple(f for f, on in (("relevant", want_relevance), ("used", want_use)) if on)

        def shown(x: dict, answer_stmts: list[str], gt_stmts: list[str]) -> dict:
            # The reference text is shown only when no reference statements stand for it; same for the answer.
            return {"question": x["question"], "contexts": x["contexts"],
                    "ground_truth": x["ground_truth"] if want_relevance and not gt_stmts else "",
                    "answer": x["answer"] if want_use and not answer_stmts else "",
                    "answer_statements": answer_stmts, "ground_truth_statements": gt_stmts}

        current = shown({"question": self.sample.question, "contexts": self.sample.contexts,
                         "ground_truth": self.sample.ground_truth, "answer": self.sample.answer},
                        answer_statements, ground_truth_statements)
        example = shown(ex, ex["answer_statements"] if answer_statements else [],
                        ex["ground_truth_statements"] if ground_truth_statements else [])
        props: dict[str, dict] = {}
        example_output: dict[str, Any] = {}
        if flags:
            props["contexts"] = keyed("c", len(self.sample.contexts), verdict_item(*flags))
            example_output["contexts"] = {f"c{i + 1}": _prune(v, flags)
                                          for i, v in enumerate(ex["context_verdicts"])}
        if answer_statements:
            props["answer_statements"] = keyed("s", len(answer_statements), verdict_item("supported"))
            example_output["answer_statements"] = {f"s{i + 1}": _prune(v, ("supported",))
                                                   for i, v in enumerate(ex["answer_statement_verdicts"])}
        if ground_truth_statements:
            props["ground_truth_statements"] = keyed("g", len(ground_truth_statements), verdict_item("attributed"))
            example_output["ground_truth_statements"] = {
                f"g{i + 1}": _prune(v, ("attributed",)) for i, v in enumerate(ex["ground_truth_statement_verdicts"])}
        return self._request(CallKind.CONTEXTS, obj(props), want_relevance=want_relevance, want_use=want_use,
                             contexts=self.sample.contexts, answer_statements=answer_statements,
                             ground_truth_statements=ground_truth_statements, current=current,
                             example={**example, "output": example_output})

    def classify(self, answer_statements: list[str], ground_truth_statements: list[str]) -> JudgeRequest | None:
        """None when either side is empty: then every statement's class is known without asking."""
        if not answer_statements or not ground_truth_statements:
            return None
        ex = self.examples["classify_statements"]
        schema = obj({"answer_statements": keyed("s", len(answer_statements), verdict_item("in_ground_truth")),
                      "ground_truth_statements": keyed("g", len(ground_truth_statements),
                                                       verdict_item("in_answer"))})
        example_output = {
            "answer_statements": {f"s{i + 1}": _prune(v, ("in_ground_truth",))
                                  for i, v in enumerate(ex["answer_statement_verdicts"])},
            "ground_truth_statements": {f"g{i + 1}": _prune(v, ("in_answer",))
                                        for i, v in enumerate(ex["ground_truth_statement_verdicts"])}}
        current = {"question": self.sample.question, "answer_statements": answer_statements,
                   "ground_truth_statements": ground_truth_statements}
        return self._request(CallKind.CLASSIFY, schema, current=current, example={**ex, "output": example_output})

    def _labelled(self, kind: CallKind, **variables: Any) -> JudgeRequest:
        labels = VERDICT_LABELS[kind.value][self.lang]
        examples = [{**ex, "output": {"reason": ex["reason"], "verdict": ex["verdict"]}}
                    for ex in self.examples[kind.value]]
        schema = obj({"reason": STRING, "verdict": {"type": "string", "enum": list(labels)}})
        return self._request(kind, schema, examples=examples, **variables)

    def validity(self) -> JudgeRequest:
        return self._labelled(CallKind.VALIDITY, question=self.sample.question, answer=self.sample.answer)

    def usefulness(self) -> JudgeRequest:
        return self._labelled(CallKind.USEFULNESS, question=self.sample.question, contexts=self.sample.contexts)

    def reask(self) -> TemplateReask:
        """The one re-ask after output that breaks the schema (`<lang>/reask.j2`, listing the problems)."""
        return TemplateReask(template=self.library.template("reask", self.lang))


@dataclass
class StatementState:
    """Statement lists as far as they are known: None = not asked for, or the extraction failed."""

    answer: list[str] | None = None
    ground_truth: list[str] | None = None

    @classmethod
    def from_extraction(cls, outcome: CallOutcome | None) -> "StatementState":
        if outcome is None or not outcome.ok:
            return cls()
        data = outcome.data or {}
        return cls(answer=data.get("answer_statements"), ground_truth=data.get("ground_truth_statements"))


def round_2_request(kind: CallKind, plan: CallPlan, builder: RequestBuilder,
                    statements: StatementState) -> JudgeRequest | None:
    """The request of a statement-dependent call, given what extraction returned; None = skip."""
    answer_stmts = statements.answer or []
    gt_stmts = statements.ground_truth or []
    if kind is CallKind.CONTEXTS:
        return builder.contexts(
            want_relevance=plan.wants(Need.CONTEXT_RELEVANCE), want_use=plan.wants(Need.CONTEXT_USE),
            answer_statements=answer_stmts if plan.wants(Need.ANSWER_SUPPORT) else [],
            ground_truth_statements=gt_stmts if plan.wants(Need.GROUND_TRUTH_ATTRIBUTION) else [])
    if kind is CallKind.CLASSIFY:
        return builder.classify(answer_stmts, gt_stmts)
    raise ValueError(f"{kind} is not a round-2 call")


def round_1_request(kind: CallKind, plan: CallPlan, builder: RequestBuilder) -> JudgeRequest:
    if kind is CallKind.EXTRACT:
        return builder.extract(
            want_answer=plan.wants(Need.ANSWER_STATEMENTS),
            want_ground_truth=plan.wants(Need.GROUND_TRUTH_STATEMENTS))
    if kind is CallKind.REVERSE:
        return builder.reverse()
    if kind is CallKind.VALIDITY:
        return builder.validity()
    if kind is CallKind.USEFULNESS:
        return builder.usefulness()
    raise ValueError(f"{kind} is not a round-1 call")


async def ask_call(judge: Judge, request: JudgeRequest, builder: RequestBuilder, *, reask: bool) -> CallOutcome:
    """One metric call through the one judge path; on output that breaks the schema, one re-ask listing the
    problems."""
    asked = await ask(judge, request, json_reader(lambda data: validate(data, request.json_schema)),
                      reask=builder.reask() if reask else None)
    outcome = CallOutcome(kind=request.kind, data=asked.value, usage=asked.usage, attempts=asked.attempts,
                          requests=asked.requests, error_kind=asked.unscored_kind)
    if asked.problems:
        outcome.error = f"{request.kind}: the judge's output did not match the schema: {asked.reason}"
    elif not asked.ok:
        outcome.error = f"{request.kind}: {asked.reason}"
    return outcome


def embedding_texts(plan: CallPlan, sample: Sample, reverse: CallOutcome | None) -> list[str]:
    texts: list[str] = []
    if plan.wants(Need.EMBED_ANSWER_AND_GROUND_TRUTH):
        texts += [sample.answer, sample.ground_truth]
    if plan.wants(Need.EMBED_QUESTIONS) and reverse is not None and reverse.ok:
        texts += [sample.question, *reverse.data["questions"].values()]
    return list(dict.fromkeys(texts))   # one vector per distinct text


async def embed(embedder: Embedder, texts: list[str]) -> EmbeddingOutcome:
    reply: EmbeddingReply = await embedder.embed(texts)
    cached = bool(getattr(reply, "cached", False))
    usage = Usage(embedding_cache_hits=1) if cached else Usage(embedding_calls=1)
    if getattr(reply, "error", None):
        return EmbeddingOutcome(error=f"embedding: {reply.error}", usage=usage,
                                error_kind=getattr(reply, "error_kind", None) or "provider_error")
    vectors = reply.vectors
    if vectors is None or len(vectors) != len(texts):
        got = "no vectors" if vectors is None else f"{len(vectors)} vectors"
        return EmbeddingOutcome(error=f"embedding: asked for {len(texts)} vectors, got {got}", usage=usage,
                                error_kind="invalid_output")
    return EmbeddingOutcome(vectors=dict(zip(texts, vectors)), usage=usage)


@dataclass
class SampleRun:
    """Executes a plan for one sample: round 1 in parallel, then round 2 and the embedding in parallel."""

    plan: CallPlan
    sample: Sample
    builder: RequestBuilder | None     # None when the plan has no judge call (embedding only)
    judge: Judge | None
    embedder: Embedder | None
    outcomes: dict[str, CallOutcome] = field(default_factory=dict)
    embedding: EmbeddingOutcome | None = None

    async def _call(self, request: JudgeRequest | None) -> None:
        if request is not None and self.builder is not None:
            self.outcomes[request.kind] = await ask_call(self.judge, request, self.builder,
                                                         reask=self.builder.options.reask_invalid)

    async def _embed(self) -> None:
        texts = embedding_texts(self.plan, self.sample, self.outcomes.get(CallKind.REVERSE.value))
        if texts:
            self.embedding = await embed(self.embedder, texts)

    async def execute(self) -> None:
        calls = self.plan.judge_calls
        if self.builder is None:
            calls = []
        first = [round_1_request(k, self.plan, self.builder) for k in ROUND_1 if k in calls]
        contexts_early = CallKind.CONTEXTS in calls and not self.plan.contexts_wait_for_statements
        if contexts_early:   # nothing to wait for: do not pay a round of latency
            first.append(round_2_request(CallKind.CONTEXTS, self.plan, self.builder, StatementState()))
        await asyncio.gather(*(self._call(r) for r in first))
        statements = StatementState.from_extraction(self.outcomes.get(CallKind.EXTRACT.value))
        second = [round_2_request(k, self.plan, self.builder, statements)
                  for k in ROUND_2 if k in calls and not (k is CallKind.CONTEXTS and contexts_early)]
        jobs = [self._call(r) for r in second]
        if self.plan.needs_embedding:
            jobs.append(self._embed())
        await asyncio.gather(*jobs)


_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)\s+")


def stand_in_statements(text: str) -> list[str]:
    """Sentences of a text: what a dry run shows in place of statements the judge has not extracted yet."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


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


def plan_requests(plan: CallPlan, builder: RequestBuilder, lookup: CacheLookup | None = None) -> list[PlannedCall]:
    """The requests a run would send, in order. Statement-dependent requests are exact when the extraction's
    reply is found through `lookup` (e.g. in the judge cache), else rendered with sentence stand-ins."""
    planned: list[PlannedCall] = []
    calls = plan.judge_calls
    extraction: dict | None = None
    for kind in ROUND_1:
        if kind in calls:
            request = round_1_request(kind, plan, builder)
            planned.append(PlannedCall(**request.model_dump(), consumers=plan.consumers(kind.value)))
            if kind is CallKind.EXTRACT and lookup is not None:
                hit = lookup(request)
                if hit and hit.get("data") is not None:
                    data, problems = validate(hit["data"], request.json_schema)
                    extraction = None if problems else data
    sample = builder.sample
    if extraction is not None:
        statements = StatementState(answer=extraction.get("answer_statements"),
                                    ground_truth=extraction.get("ground_truth_statements"))
    else:
        statements = StatementState(
            answer=stand_in_statements(sample.answer) if plan.wants(Need.ANSWER_STATEMENTS) else None,
            ground_truth=stand_in_statements(sample.ground_truth) if plan.wants(Need.GROUND_TRUTH_STATEMENTS)
            else None)
    for kind in ROUND_2:
        if kind not in calls:
            continue
        depends = kind is CallKind.CLASSIFY or plan.contexts_wait_for_statements
        request = round_2_request(kind, plan, builder, statements if depends else StatementState())
        if request is None:
            continue
        planned.append(PlannedCall(**request.model_dump(), consumers=plan.consumers(kind.value),
                                   depends_on=[CallKind.EXTRACT.value] if depends else [],
                                   exact=not depends or extraction is not None))
    return planned
