"""Generate a question/answer test set from documents, keeping only pairs a critique judge rates well.

Two judge calls per sampled chunk:
1. generation — a factual, search-style question and its answer, as JSON {question, answer};
2. critique — ONE call scoring groundedness, standalone clarity and usefulness for the domain, each as
   {feedback, score 1–5} with the feedback written before the score (reasoning first steadies the score).

Every sampled chunk ends as exactly one outcome: kept (all three scores ≥ threshold), dropped (the criteria below
threshold, with score and feedback), or unscored (the judge failed or its output was invalid, with the reason).
A pair is never kept without three valid scores, and nothing is dropped silently.
"""
from __future__ import annotations

import asyncio
import copy
import random
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from tqdm import tqdm

from rubriceval.core.verdict import UnscoredKind, Usage
from rubriceval.data.io import write_dataset
from rubriceval.data.sample import Sample
from rubriceval.generate.chunking import Chunk, chunk_documents, load_documents
from rubriceval.judge.ask import Judge, JudgeRequest, ask, json_reader
from rubriceval.prompt.environment import prompt_environment, render_messages

CRITERIA: tuple[str, ...] = ("groundedness", "standalone", "usefulness")
Language = Literal["zh", "en"]

TEMPLATE_DIR = Path(__file__).parent / "templates"

QA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"],
    "additionalProperties": False,
}
# Property order matters to constrained decoders: feedback is generated before score.
_CRITERION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"feedback": {"type": "string"}, "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
    "required": ["feedback", "score"],
    "additionalProperties": False,
}
CRITIQUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {name: _CRITERION_SCHEMA for name in CRITERIA},
    "required": list(CRITERIA),
    "additionalProperties": False,
}

# Questions that lean on the source text are useless as test questions; the prompt forbids them, and a reply that
# uses them anyway breaks the generation contract.
_PASSAGE_REFERENCE = re.compile(
    r"根据(?:上下文|上文|段落|本段|该段|文本|原文|材料|资料|给定|所给|以上|上述)|上下文中|文中|本文|上述(?:内容|段落|资料|材料)"
    r"|according to the (?:passage|context|text|document|article)|in the (?:given |above )?(?:passage|context|text)\b"
    r"|the (?:above|given) (?:passage|context|text)",
    re.IGNORECASE,
)


class CriterionScore(BaseModel):
    feedback: str
    score: int


class DropReason(BaseModel):
    criterion: str
    score: int
    threshold: int
    feedback: str


class PairOutcome(BaseModel):
    """What happened to one sampled chunk."""

    id: str
    source: str
    chunk_index: int
    heading: str = ""
    language: Language
    status: Literal["kept", "dropped", "unscored"]
    question: str = ""
    answer: str = ""
    scores: dict[str, CriterionScore] = Field(default_factory=dict)
    drop_reasons: list[DropReason] = Field(default_factory=list)
    stage: Literal["generation", "critique"] | None = None     # where an unscored pair failed
    unscored_kind: UnscoredKind | None = None
    unscored_reason: str | None = None


class GenerateSummary(BaseModel):
    out_path: str
    documents: int
    chunks_total: int
    requested: int
    attempted: int                 # sampled chunks = min(requested, chunks_total)
    kept: int
    dropped: int
    unscored: int
    thresholds: dict[str, int]
    drops_by_criterion: dict[str, int]
    outcomes: list[PairOutcome]
    usage: Usage = Field(default_factory=Usage)

    def describe(self) -> str:
        """Human-readable account: kept/total, then why each non-kept pair was not kept."""
        lines = [f"kept {self.kept}/{self.attempted} pairs (dropped {self.dropped}, unscored {self.unscored}) "
                 f"from {self.chunks_total} chunks in {self.documents} document(s) → {self.out_path}"]
        if self.attempted < self.requested:
            lines.append(f"note: {self.requested} pairs requested but the documents have only "
                         f"{self.chunks_total} chunks (one pair per chunk)")
        for outcome in self.outcomes:
            where = f"{outcome.source}#{outcome.chunk_index}"
            if outcome.status == "dropped":
                why = "; ".join(f"{r.criterion} {r.score} < {r.threshold}: {r.feedback}" for r in outcome.drop_reasons)
                lines.append(f"dropped {where} «{outcome.question}» — {why}")
            elif outcome.status == "unscored":
                lines.append(f"unscored {where} ({outcome.stage}, {outcome.unscored_kind}) — {outcome.unscored_reason}")
        return "\n".join(lines)


def detect_language(text: str) -> Language:
    """'zh' when CJK characters make up at least a fifth of the letters, else 'en'."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "zh" if cjk and cjk >= 0.2 * (cjk + latin) else "en"


def build_generation_messages(chunk: Chunk, language: Language, domain: str = "") -> list[dict]:
    return render_messages(prompt_environment(TEMPLATE_DIR), language, "qa_generation", system=None,
                           chunk=chunk.text, heading=chunk.heading, domain=domain)


def build_critique_messages(chunk: Chunk, question: str, answer: str, language: Language,
                            domain: str = "") -> list[dict]:
    return render_messages(prompt_environment(TEMPLATE_DIR), language, "critique", system=None,
                           chunk=chunk.text, heading=chunk.heading, domain=domain, question=question, answer=answer)


def check_generation(data: dict) -> tuple[tuple[str, str] | None, list[str]]:
    """(question, answer) from a generation reply, or the problem: a missing field or a passage reference."""
    values = []
    for key in ("question", "answer"):
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            return None, [f"'{key}' is missing or empty in the reply {data!r:.200}"]
        values.append(value.strip())
    question, answer = values
    found = _PASSAGE_REFERENCE.search(question)
    if found:
        return None, [f"the question refers to the source text ('{found.group(0)}'), which the prompt forbids: "
                      f"{question!r}"]
    return (question, answer), []


def _as_score(value: Any) -> int | None:
    """An integer 1–5 (also 4.0 or "4"); None for anything else — never clamped."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and 1 <= value <= 5 else None


def check_critique(data: dict) -> tuple[dict[str, CriterionScore] | None, list[str]]:
    """All three criterion scores, or the first criterion that is missing or out of range."""
    scores: dict[str, CriterionScore] = {}
    for name in CRITERIA:
        item = data.get(name)
        if not isinstance(item, dict):
            return None, [f"criterion '{name}' is missing from the critique {data!r:.200}"]
        score = _as_score(item.get("score"))
        if score is None:
            return None, [f"criterion '{name}' has no integer score 1–5 (got {item.get('score')!r})"]
        feedback = item.get("feedback")
        scores[name] = CriterionScore(feedback=feedback.strip() if isinstance(feedback, str) else "", score=score)
    return scores, []


def _thresholds(threshold: int | Mapping[str, int]) -> dict[str, int]:
    if isinstance(threshold, Mapping):
        unknown = set(threshold) - set(CRITERIA)
        if unknown:
            raise ValueError(f"unknown critique criteria {sorted(unknown)}; known: {list(CRITERIA)}")
        return {name: int(threshold.get(name, 3)) for name in CRITERIA}
    return {name: int(threshold) for name in CRITERIA}


def _judge_with_seed(judge: Judge, seed: int) -> Judge:
    """The judge with its sampling seed set to `seed` when it is a JudgeClient (the OpenAI API takes `seed`).

    A shallow copy shares the HTTP client, cache, semaphore and counters; only the config differs, and the seed is
    part of the cache key, so cached answers for another seed are not reused.
    """
    config = getattr(judge, "config", None)
    if isinstance(config, BaseModel) and "seed" in type(config).model_fields \
            and config.model_dump(include={"seed"})["seed"] != seed:
        seeded = copy.copy(judge)
        # the Judge protocol has no config; this judge has one (read above)
        seeded.config = config.model_copy(update={"seed": seed})  # type: ignore[attr-defined]
        return seeded
    return judge


async def _process_chunk(chunk: Chunk, *, judge: Judge, language: Language, domain: str,
                         thresholds: dict[str, int]) -> tuple[PairOutcome, Usage]:
    outcome = PairOutcome(id=f"gen-{Path(chunk.source).with_suffix('').as_posix()}-{chunk.index}", source=chunk.source,
                          chunk_index=chunk.index, heading=chunk.heading, language=language, status="unscored")
    # Not re-asked (no `reask`): an unusable pair is reported as unscored, and other chunks are tried.
    generation = await ask(judge, JudgeRequest(
        messages=build_generation_messages(chunk, language, domain), json_schema=QA_SCHEMA, schema_name="qa_pair",
        cache_tag="generate.qa.v1"), json_reader(check_generation))
    if not generation.ok or generation.value is None:
        outcome.stage, outcome.unscored_kind, outcome.unscored_reason = (
            "generation", generation.unscored_kind, generation.reason)
        return outcome, generation.usage
    outcome.question, outcome.answer = generation.value
    critique = await ask(judge, JudgeRequest(
        messages=build_critique_messages(chunk, outcome.question, outcome.answer, language, domain),
        json_schema=CRITIQUE_SCHEMA, schema_name="qa_critique", cache_tag="generate.critique.v1"),
        json_reader(check_critique))
    usage = generation.usage + critique.usage
    if not critique.ok or critique.value is None:
        outcome.stage, outcome.unscored_kind, outcome.unscored_reason = (
            "critique", critique.unscored_kind, critique.reason)
        return outcome, usage
    outcome.scores = critique.value
    outcome.drop_reasons = [
        DropReason(criterion=name, score=s.score, threshold=thresholds[name], feedback=s.feedback)
        for name, s in outcome.scores.items() if s.score < thresholds[name]
    ]
    outcome.status = "dropped" if outcome.drop_reasons else "kept"
    return outcome, usage


async def generate(docs_path: str | Path, out_path: str | Path, *, judge: Judge, n: int,
                   chunk_size: int = 500, overlap: int = 50, threshold: int | Mapping[str, int] = 3,
                   language: Literal["auto", "zh", "en"] = "auto", seed: int = 0, domain: str = "",
                   concurrency: int = 4, progress: bool = True) -> GenerateSummary:
    """Write a test set of up to `n` critique-filtered question/answer pairs generated from `docs_path`.

    docs_path: a .txt/.md file or a folder of them (PDF is not supported — convert to text first; any other file
    type raises DatasetError naming the file). One pair per sampled chunk; chunks are sampled with `seed`, which is
    also passed to the judge as its sampling seed. `threshold` applies to each criterion (or give a mapping per
    criterion); a pair is kept only when every score ≥ its threshold. `language="auto"` picks zh/en prompts per
    chunk. The output (JSONL/CSV/XLSX by suffix) has question, ground_truth=answer, reference_contexts=[chunk] and
    metadata with the source file, chunk index, heading and the critique scores with feedback.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    thresholds = _thresholds(threshold)
    chunks = chunk_documents(load_documents(docs_path), chunk_size=chunk_size, overlap=overlap)
    sampled = random.Random(seed).sample(chunks, min(n, len(chunks)))
    seeded_judge = _judge_with_seed(judge, seed)
    spent: list[Usage] = []
    limit = asyncio.Semaphore(max(1, concurrency))
    bar = tqdm(total=len(sampled), desc="generate", unit="pair", disable=not progress)
    tally: Counter = Counter()

    async def run(chunk: Chunk) -> PairOutcome:
        async with limit:
            chunk_language: Language = detect_language(chunk.text) if language == "auto" else language
            outcome, usage = await _process_chunk(chunk, judge=seeded_judge, language=chunk_language,
                                                  domain=domain, thresholds=thresholds)
        spent.append(usage)
        tally[outcome.status] += 1
        bar.set_postfix(kept=tally["kept"], dropped=tally["dropped"], unscored=tally["unscored"], refresh=False)
        bar.update(1)
        return outcome

    try:
        outcomes = await asyncio.gather(*(run(chunk) for chunk in sampled))
    finally:
        bar.close()

    by_key = {(c.source, c.index): c for c in sampled}
    kept_samples = [_to_sample(o, by_key[(o.source, o.chunk_index)]) for o in outcomes if o.status == "kept"]
    write_dataset(kept_samples, out_path)
    drops = Counter(reason.criterion for o in outcomes for reason in o.drop_reasons)
    return GenerateSummary(
        out_path=str(out_path), documents=len({c.source for c in chunks}), chunks_total=len(chunks), requested=n,
        attempted=len(sampled), kept=tally["kept"], dropped=tally["dropped"], unscored=tally["unscored"],
        thresholds=thresholds, drops_by_criterion={name: drops.get(name, 0) for name in CRITERIA},
        outcomes=list(outcomes), usage=sum(spent, Usage()))


def _to_sample(outcome: PairOutcome, chunk: Chunk) -> Sample:
    return Sample(
        id=outcome.id, question=outcome.question, ground_truth=outcome.answer, reference_contexts=[chunk.text],
        metadata={
            "source": chunk.source, "chunk_index": chunk.index, "heading": chunk.heading,
            "language": outcome.language, "generated_by": "rubriceval.generate",
            "critique": {name: score.model_dump() for name, score in outcome.scores.items()},
        })
