"""Score one sample with one rubric: deterministic checks + judge items → one Verdict."""
from __future__ import annotations

from rubriceval.checks import run_check
from rubriceval.data.sample import Sample
from rubriceval.judge.client import JudgeClient
from rubriceval.judge.parser import parse_judge_output
from rubriceval.judge.tokens import estimate_messages_tokens
from rubriceval.prompt.compile import compile_item, retry_message
from rubriceval.rubric.schema import JudgeItem, Rubric
from rubriceval.scoring.combine import ItemScore, combine
from rubriceval.verdict import Evidence, Usage, Verdict

MAX_REASKS = 1   # one bounded re-ask after an unparseable reply


class ItemOutcome:
    def __init__(self, item: JudgeItem):
        self.item = item
        self.score: int | None = None
        self.feedback = ""
        self.unscored_kind: str | None = None
        self.reason: str | None = None
        self.usage = Usage()
        self.raw: str | None = None


def _add_usage(usage: Usage, response) -> Usage:
    """What this run spent: a cached answer is a cache hit with no tokens or cost (as for the metrics' calls)."""
    if response.cached:
        return usage + Usage(cache_hits=1)
    return usage + Usage(calls=1, prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens,
                         cost_usd=response.cost_usd, latency_s=response.latency_s)


def missing_fields(rubric: Rubric, sample: Sample) -> list[str]:
    needed = [f for f in rubric.judge_sees if f in ("question", "answer", "ground_truth")] if rubric.judge_items else []
    return [f for f in needed if not (getattr(sample, f) or "").strip()]


async def judge_item(rubric: Rubric, item: JudgeItem, sample: Sample, judge: JudgeClient) -> ItemOutcome:
    outcome = ItemOutcome(item)
    structured = judge.config.structured == "json_schema"
    prompt = compile_item(rubric, item, sample, structured=structured,
                          feedback_max_chars=judge.config.feedback_max_chars)
    messages = list(prompt.messages)
    estimated = estimate_messages_tokens(messages)
    if estimated > judge.config.max_input_tokens:
        outcome.unscored_kind = "input_too_long"
        outcome.reason = (f"prompt is ~{estimated} tokens, over the judge's input limit of "
                          f"{judge.config.max_input_tokens} (max_input_tokens); shorten the answer/contexts")
        return outcome
    for attempt in range(MAX_REASKS + 1):
        response = await judge.complete(messages, json_schema=prompt.json_schema, cache_tag=prompt.cache_tag)
        outcome.usage = _add_usage(outcome.usage, response)
        if not response.ok:
            outcome.unscored_kind = response.error_kind if response.error_kind in ("timeout",) else "provider_error"
            outcome.reason = response.error
            return outcome
        parsed = parse_judge_output(response.text or "", data=response.data)
        outcome.raw = response.text
        if parsed.score is not None:
            outcome.score, outcome.feedback = parsed.score, parsed.feedback
            outcome.unscored_kind = outcome.reason = None
            return outcome
        outcome.unscored_kind = "parse_error"
        outcome.reason = f"{parsed.error} (after {attempt + 1} judge repl{'y' if attempt == 0 else 'ies'})"
        outcome.feedback = parsed.feedback
        messages = prompt.messages + [{"role": "assistant", "content": response.text or ""},
                                      retry_message(rubric.language, parsed.error or "no score", structured)]
    return outcome


async def score_rubric(rubric: Rubric, sample: Sample, judge: JudgeClient | None) -> Verdict:
    base = dict(sample_id=sample.id, scorer=rubric.id, scorer_version=rubric.version_tag, kind="rubric")
    evidence: list[Evidence] = [run_check(item, sample) for item in rubric.check_items]
    missing = missing_fields(rubric, sample)
    if missing:
        return Verdict(
            **base, unscored_kind="missing_field", evidence=evidence,
            unscored_reason=f"sample has no {', '.join(missing)}, which the rubric's judge needs")
    outcomes: list[ItemOutcome] = []
    for item in rubric.judge_items:
        if judge is None:
            raise ValueError(f"rubric '{rubric.id}' has judge items but no judge is configured")
        outcomes.append(await judge_item(rubric, item, sample, judge))
    usage = sum((o.usage for o in outcomes), Usage())
    for o in outcomes:
        evidence.append(Evidence(item=o.item.id, score=o.score, passed=None if o.score is None else
                                 o.score >= rubric.threshold, detail=o.feedback or (o.reason or "")))
    failed = [o for o in outcomes if o.score is None]
    if failed:
        first = failed[0]
        return Verdict(**base, unscored_kind=first.unscored_kind, evidence=evidence, usage=usage,
                       unscored_reason=f"judge item '{first.item.id}': {first.reason}",
                       feedback=first.feedback, details={"raw_reply": first.raw})
    item_scores = [ItemScore(item_id=o.item.id, kind="judge", weight=o.item.weight, must=o.item.must, score=o.score)
                   for o in outcomes]
    item_scores += [ItemScore(item_id=item.id, kind=item.type, weight=item.weight, must=item.must, passed=ev.passed)
                    for item, ev in zip(rubric.check_items, evidence)]
    score, how = combine(item_scores, rubric.combine)
    feedback_parts = [o.feedback for o in outcomes if o.feedback]
    failed_checks = [f"✗ {ev.item}: {ev.detail}" for ev in evidence[:len(rubric.check_items)] if ev.passed is False]
    feedback = "\n".join(feedback_parts + failed_checks)
    return Verdict(**base, score=float(score), feedback=feedback, evidence=evidence, usage=usage,
                   passed=score >= rubric.threshold, details={"combine": how,
                                                              "item_scores": {i.item_id: i.score if i.kind == "judge"
                                                                              else i.passed for i in item_scores}})
