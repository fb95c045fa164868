"""The judge calls behind the LLM metrics, and how one sample's metrics share them.

Ragas asks one question per metric (and per statement batch, per context, per generated question): 14 calls
for the five classic metrics on a 5-context sample. Here the metrics of a sample share at most four calls, in two
rounds, each cut into requests as call_modes.py decides for the judge:

  round 1  extract_statements   statements of the answer (from a prompt showing the question and the answer) and of
                                the ground truth (question and ground truth): two requests, or one showing both
                                (`extraction: merged`); every statement must then pass the grounding check
                                (grounding.py). Reused by answer_correctness, faithfulness and context_recall
           reverse_questions    the answer alone → N questions back + a noncommittal flag (answer_relevancy);
                                a separate call because the judge must not see the original question
  round 2  judge_contexts       the contexts → per-context relevance (context_precision) / use
                                (context_utilization), per answer statement support (faithfulness), per
                                ground-truth statement attribution (context_recall): all contexts in one request,
                                or one request per context (`context_calls: per_context`), combined
           classify_statements  answer vs ground-truth statements → TP / FP / FN (answer_correctness)
           + one embedding request for every text that needs a vector

Every output is a JSON schema (structured output), so nothing has to be re-asked unless the judge breaks it;
then it is re-asked once with the problems listed. Kinds, plan and outcomes: call_plan.py; rendering: requests.py.
"""
from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field

from rubriceval.core.verdict import Usage
from rubriceval.data.sample import Sample
from rubriceval.judge.ask import ask, json_reader
from rubriceval.standard_metrics.call_modes import CallModes, call_modes, judge_model_of
from rubriceval.standard_metrics.call_plan import (
    CALLS_VERSION,
    EMBEDDING,
    ROUND_1,
    ROUND_2,
    VERDICT_LABELS,
    CacheLookup,
    CallKind,
    CallOutcome,
    CallPlan,
    EmbeddingOutcome,
    JudgeRequest,
    Need,
    PlannedCall,
)
from rubriceval.standard_metrics.grounding import ground, sentences, text_supports, uncovered_sentences
from rubriceval.standard_metrics.protocols import Embedder, EmbeddingReply, Judge
from rubriceval.standard_metrics.requests import RequestBuilder, check_examples
from rubriceval.standard_metrics.schemas import validate

__all__ = ["CALLS_VERSION", "EMBEDDING", "VERDICT_LABELS", "CacheLookup", "CallKind", "CallOutcome", "CallPlan",
           "EmbeddingOutcome", "JudgeRequest", "Need", "PlannedCall", "RequestBuilder", "SampleRun",
           "check_examples", "plan_requests", "stand_in_statements"]

STATEMENT_KEYS = ("answer_statements", "ground_truth_statements")


@dataclass
class StatementState:
    """Statement lists as far as they are known: None = not asked for, or the extraction failed."""

    answer: list[str] | None = None
    ground_truth: list[str] | None = None

    @classmethod
    def from_extraction(cls, outcome: CallOutcome | None) -> StatementState:
        if outcome is None or not outcome.ok:
            return cls()
        data = outcome.data or {}
        return cls(answer=data.get("answer_statements"), ground_truth=data.get("ground_truth_statements"))


def with_modes(plan: CallPlan, options, judge_model: str | None) -> CallPlan:
    """The plan with the request cut this judge uses (call_modes.py)."""
    modes = call_modes(options, judge_model)
    return plan if plan.modes == modes else dataclasses.replace(plan, modes=modes)


def round_1_requests(kind: CallKind, plan: CallPlan, builder: RequestBuilder) -> list[JudgeRequest]:
    if kind is CallKind.EXTRACT:
        answer, truth = plan.wants(Need.ANSWER_STATEMENTS), plan.wants(Need.GROUND_TRUTH_STATEMENTS)
        if plan.modes.extraction == "merged":
            return [builder.extract(want_answer=answer, want_ground_truth=truth)]
        return ([builder.extract(True, False, part="answer")] if answer else []) + \
               ([builder.extract(False, True, part="ground_truth")] if truth else [])
    if kind is CallKind.REVERSE:
        return [builder.reverse()]
    if kind is CallKind.VALIDITY:
        return [builder.validity()]
    if kind is CallKind.USEFULNESS:
        return [builder.usefulness()]
    raise ValueError(f"{kind} is not a round-1 call")


def round_2_requests(kind: CallKind, plan: CallPlan, builder: RequestBuilder,
                     statements: StatementState) -> list[JudgeRequest]:
    """The requests of a statement-dependent call, given what extraction returned; [] = skip."""
    answer_stmts = statements.answer or []
    gt_stmts = statements.ground_truth or []
    if kind is CallKind.CONTEXTS:
        indexes = range(len(builder.sample.contexts)) if plan.modes.context_calls == "per_context" else [None]
        requests = [builder.contexts(
            want_relevance=plan.wants(Need.CONTEXT_RELEVANCE), want_use=plan.wants(Need.CONTEXT_USE),
            answer_statements=answer_stmts if plan.wants(Need.ANSWER_SUPPORT) else [],
            ground_truth_statements=gt_stmts if plan.wants(Need.GROUND_TRUTH_ATTRIBUTION) else [], index=i)
            for i in indexes]
        return [r for r in requests if r is not None]
    if kind is CallKind.CLASSIFY:
        request = builder.classify(answer_stmts, gt_stmts)
        return [request] if request is not None else []
    raise ValueError(f"{kind} is not a round-2 call")


async def ask_call(judge: Judge, request: JudgeRequest, builder: RequestBuilder, *, reask: bool) -> CallOutcome:
    """One metric request through the one judge path; on output that breaks the schema, one re-ask listing the
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


def _spent(kind: CallKind, parts: list[CallOutcome], data: dict | None, **fields) -> CallOutcome:
    usage = sum((p.usage for p in parts), Usage())
    failed = next((p for p in parts if not p.ok), None)
    return CallOutcome(kind=kind.value, data=data, usage=usage, attempts=sum(p.attempts for p in parts),
                       requests=[r for p in parts for r in p.requests],
                       error=failed.error if failed and data is None else None,
                       error_kind=failed.error_kind if failed and data is None else None, **fields)


def combine_extraction(parts: list[CallOutcome]) -> CallOutcome:
    """One extraction outcome from its requests: the lists that came back, and why the others did not."""
    if len(parts) == 1:
        return parts[0]
    data: dict = {}
    errors, kinds = {}, {}
    for part in parts:
        key = "answer_statements" if part.kind.endswith("/answer") else "ground_truth_statements"
        if part.ok:
            data[key] = part.data[key]
        else:
            errors[key], kinds[key] = part.error or "extraction failed", part.error_kind or "error"
    return _spent(CallKind.EXTRACT, parts, data or None, part_errors=errors, part_error_kinds=kinds)


def combine_contexts(parts: list[CallOutcome]) -> CallOutcome:
    """One contexts outcome from one request per context: context cK's verdicts from request K; a statement is
    supported (attributed) when some context alone supports it, with that context's reason."""
    if len(parts) == 1 and "/" not in parts[0].kind:
        return parts[0]
    if any(not p.ok for p in parts):
        return _spent(CallKind.CONTEXTS, parts, None)
    data: dict = {}
    if "contexts" in parts[0].data:
        data["contexts"] = {f"c{i}": p.data["contexts"]["c1"] for i, p in enumerate(parts, start=1)}
    for key, flag in (("answer_statements", "supported"), ("ground_truth_statements", "attributed")):
        if key not in parts[0].data:
            continue
        data[key] = {}
        for item in parts[0].data[key]:
            verdicts = [(i, p.data[key][item]) for i, p in enumerate(parts, start=1)]
            hit = next(((i, v) for i, v in verdicts if v[flag]), None)
            i, chosen = hit or verdicts[0]
            data[key][item] = {"reason": f"c{i}: {chosen['reason']}" if hit else chosen["reason"],
                               flag: hit is not None}
    return _spent(CallKind.CONTEXTS, parts, data)


NOT_IN_TEXT = {"zh": "但资料原文中找不到这句的依据（数字或字词不符），不计为有依据",
               "en": "but no context's text bears it out (numbers or words differ): not counted as supported"}


def text_checked(outcome: CallOutcome, sample: Sample, statements: StatementState, modes: CallModes,
                 lang: str) -> CallOutcome:
    """With `support: judge_and_text`, a supported / attributed verdict stands only when the contexts' text
    bears the statement out (grounding.text_supports); the judge's reason is kept, with why it was overruled."""
    if modes.support != "judge_and_text" or not outcome.ok:
        return outcome
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in outcome.data.items()}
    for key, prefix, flag, items in (("answer_statements", "s", "supported", statements.answer),
                                     ("ground_truth_statements", "g", "attributed", statements.ground_truth)):
        for i, text in enumerate(items or [], start=1) if key in data else ():
            verdict = data[key].get(f"{prefix}{i}")
            if verdict and verdict.get(flag) and not text_supports(text, sample.contexts, sample.question):
                overruled = NOT_IN_TEXT.get(lang, NOT_IN_TEXT["en"])
                data[key][f"{prefix}{i}"] = {**verdict, flag: False, "reason": f"{verdict['reason']}；{overruled}"}
    return outcome.model_copy(update={"data": data})


def grounded(outcome: CallOutcome, sample: Sample, enabled: bool = True) -> CallOutcome:
    """The extraction with every statement not found in its own text dropped and listed (grounding.py)."""
    if not outcome.ok or not enabled:
        return outcome
    sources = {"answer_statements": sample.answer, "ground_truth_statements": sample.ground_truth}
    data, dropped, added = dict(outcome.data), {}, {}
    for key in STATEMENT_KEYS:
        if key in data:
            result = ground(data[key], sources[key], sample.question)
            data[key], dropped[key] = result.kept, result.dropped
    if data.get("answer_statements"):   # every claim of the answer is checked, also those the judge skipped
        # (none kept: a refusal or a greeting, as the judge read it — nothing is added to it)
        added["answer_statements"] = uncovered_sentences(data["answer_statements"], sample.answer, sample.question)
        data["answer_statements"] = data["answer_statements"] + added["answer_statements"]
    return outcome.model_copy(update={"data": data, "dropped": dropped, "added": added})


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
    statements: StatementState = field(default_factory=StatementState)   # as extracted (grounded)

    async def _call(self, kind: CallKind, requests: list[JudgeRequest]) -> None:
        if not requests or self.builder is None:
            return
        parts = list(await asyncio.gather(*(ask_call(self.judge, r, self.builder,
                                                     reask=self.builder.options.reask_invalid) for r in requests)))
        if kind is CallKind.EXTRACT:
            outcome = grounded(combine_extraction(parts), self.sample,
                               self.builder.options.statement_grounding)
        elif kind is CallKind.CONTEXTS:
            outcome = text_checked(combine_contexts(parts), self.sample, self.statements, self.plan.modes,
                                   self.builder.lang)
        else:
            outcome = parts[0]
        self.outcomes[kind.value] = outcome

    async def _embed(self) -> None:
        texts = embedding_texts(self.plan, self.sample, self.outcomes.get(CallKind.REVERSE.value))
        if texts:
            self.embedding = await embed(self.embedder, texts)

    async def execute(self) -> None:
        if self.builder is not None:
            self.plan = with_modes(self.plan, self.builder.options, judge_model_of(self.judge))
        calls = self.plan.judge_calls if self.builder is not None else []
        first = [(k, round_1_requests(k, self.plan, self.builder)) for k in ROUND_1 if k in calls]
        contexts_early = CallKind.CONTEXTS in calls and not self.plan.contexts_wait_for_statements
        if contexts_early:   # nothing to wait for: do not pay a round of latency
            first.append((CallKind.CONTEXTS,
                          round_2_requests(CallKind.CONTEXTS, self.plan, self.builder, StatementState())))
        await asyncio.gather(*(self._call(k, r) for k, r in first))
        self.statements = statements = StatementState.from_extraction(self.outcomes.get(CallKind.EXTRACT.value))
        second = [(k, round_2_requests(k, self.plan, self.builder, statements))
                  for k in ROUND_2 if k in calls and not (k is CallKind.CONTEXTS and contexts_early)]
        jobs = [self._call(k, r) for k, r in second]
        if self.plan.needs_embedding:
            jobs.append(self._embed())
        await asyncio.gather(*jobs)


def stand_in_statements(text: str) -> list[str]:
    """Sentences of a text: what a dry run shows in place of statements the judge has not extracted yet."""
    return sentences(text)


def _cached_extraction(requests: list[JudgeRequest], lookup: CacheLookup, sample: Sample,
                       grounding: bool) -> dict | None:
    """The extraction's (grounded) statements when every one of its requests is in the cache, else None."""
    parts = []
    for request in requests:
        hit = lookup(request)
        if not hit or hit.get("data") is None:
            return None
        data, problems = validate(hit["data"], request.json_schema)
        if problems:
            return None
        parts.append(CallOutcome(kind=request.kind, data=data))
    return grounded(combine_extraction(parts), sample, grounding).data


def plan_requests(plan: CallPlan, builder: RequestBuilder, lookup: CacheLookup | None = None, *,
                  judge_model: str | None = None) -> list[PlannedCall]:
    """The requests a run would send, in order, cut as `judge_model` is cut (call_modes.py). Statement-dependent
    requests are exact when the extraction's replies are found through `lookup` (e.g. in the judge cache), else
    rendered with sentence stand-ins."""
    plan = with_modes(plan, builder.options, judge_model)
    planned: list[PlannedCall] = []
    calls = plan.judge_calls
    extraction: dict | None = None
    sample = builder.sample
    for kind in ROUND_1:
        if kind in calls:
            requests = round_1_requests(kind, plan, builder)
            planned += [PlannedCall(**r.model_dump(), consumers=plan.consumers(kind.value)) for r in requests]
            if kind is CallKind.EXTRACT and lookup is not None:
                extraction = _cached_extraction(requests, lookup, sample,
                                                builder.options.statement_grounding)
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
        for request in round_2_requests(kind, plan, builder, statements if depends else StatementState()):
            planned.append(PlannedCall(**request.model_dump(), consumers=plan.consumers(kind.value),
                                       depends_on=[CallKind.EXTRACT.value] if depends else [],
                                       exact=not depends or extraction is not None))
    return planned

