"""One pairwise judgement: the same question's two answers, judged by one rubric item in BOTH orders (each
version once as Response A), through the one judge path (`rubriceval.judge.ask`).

Why both orders: judges, small ones especially, prefer whichever answer they read first (or second). A choice
that flips when the answers swap places is position bias, not a preference, and counts as a tie. The outcome is
a version only when both orders name it; a tie when both say tie or they differ. When either order stays
unreadable after the one re-ask, or the provider fails, the judgement is unscored with the reason — counted in
reports, never read as a tie.
"""
from __future__ import annotations

import asyncio
from typing import Any, Literal

from rubriceval.core.verdict import Usage
from rubriceval.data.sample import Sample
from rubriceval.judge.ask import Judge, JudgeRequest, Reading, TemplateReask, ask
from rubriceval.judge.parser import ParsedPreference, parse_pairwise_output
from rubriceval.pairwise.models import Choice, OrderReading, PairwiseVerdict, Preferred
from rubriceval.pairwise.prompt import SCHEMA_NAME, compile_pairwise, pairwise_reask_template
from rubriceval.rubric.schema import JudgeItem, Rubric

CHOICES = ("A", "B", "tie")


def read_preference(reply: Any) -> Reading[ParsedPreference]:
    """A JSON {"feedback", "winner"} reply, or the text form "Feedback: … [RESULT] A|B|tie"."""
    if reply.data is not None:
        winner, feedback = reply.data.get("winner"), reply.data.get("feedback")
        if winner not in CHOICES:
            return Reading(problems=[f"'winner' must be one of A, B, tie; got {winner!r}"], kind="invalid_output",
                           feedback=str(feedback or ""))
        return Reading(value=ParsedPreference(winner=winner, feedback=str(feedback or "")), feedback=str(feedback or ""))
    parsed = parse_pairwise_output(reply.text or "", allow_tie=True)
    if parsed.winner is None:
        return Reading(problems=[parsed.error or "no choice"], kind="parse_error", feedback=parsed.feedback)
    return Reading(value=parsed, feedback=parsed.feedback)


def as_version(choice: Choice, first: Literal["a", "b"]) -> Preferred:
    """The judge's A/B in terms of versions a/b, given which version was shown first."""
    if choice == "tie":
        return "tie"
    shown_first = choice == "A"
    return first if shown_first else ("b" if first == "a" else "a")


async def judge_order(rubric: Rubric, item: JudgeItem, first: Sample, second: Sample, judge: Judge, *,
                      first_version: Literal["a", "b"]) -> tuple[OrderReading, Usage]:
    config = judge.config  # type: ignore[attr-defined]  # JudgeClient and ScriptedJudge carry their config
    structured = config.structured == "json_schema"
    prompt = compile_pairwise(rubric, item, first, second, structured=structured,
                              feedback_max_chars=config.feedback_max_chars)
    request = JudgeRequest(messages=prompt.messages, json_schema=prompt.json_schema, schema_name=SCHEMA_NAME,
                           cache_tag=prompt.cache_tag)
    reask = TemplateReask(template=pairwise_reask_template(rubric.language), variables={"structured": structured})
    asked = await ask(judge, request, read_preference, reask=reask, max_input_tokens=config.max_input_tokens)
    reading = OrderReading(first=first_version, feedback=asked.feedback)
    if asked.ok and asked.value is not None:
        reading.choice = asked.value.winner
        reading.preferred = as_version(asked.value.winner, first_version)
    else:
        reading.unscored_kind = asked.unscored_kind
        reading.reason = asked.reason
        if asked.unscored_kind == "parse_error":
            reading.reason = f"{asked.reason} (after {asked.attempts} judge repl{'y' if asked.attempts == 1 else 'ies'})"
    return reading, asked.usage


def combine_orders(orders: list[OrderReading]) -> tuple[Preferred | None, bool | None]:
    """(outcome, consistent) from the two orders' readings; (None, None) when either is unscored."""
    preferred = [o.preferred for o in orders]
    if any(p is None for p in preferred):
        return None, None
    if len(set(preferred)) == 1:
        return preferred[0], True
    return "tie", False


async def judge_pair(rubric: Rubric, item: JudgeItem, sample_a: Sample, sample_b: Sample, judge: Judge, *,
                     scorer: str, version_a: str, version_b: str) -> PairwiseVerdict:
    """Versions a and b of one sample, judged with a first and with b first."""
    base: dict[str, Any] = dict(sample_id=sample_a.id, scorer=scorer, scorer_version=rubric.version_tag,
                                version_a=version_a, version_b=version_b)
    missing = [label for label, s in ((version_a, sample_a), (version_b, sample_b)) if not (s.answer or "").strip()]
    if missing:
        return PairwiseVerdict(**base, unscored_kind="missing_field",
                               unscored_reason=f"no answer in version {', '.join(missing)}")
    results = await asyncio.gather(
        judge_order(rubric, item, sample_a, sample_b, judge, first_version="a"),
        judge_order(rubric, item, sample_b, sample_a, judge, first_version="b"))
    orders = [reading for reading, _ in results]
    usage = sum((u for _, u in results), Usage())
    outcome, consistent = combine_orders(orders)
    if outcome is None:
        failed = next(o for o in orders if o.preferred is None)
        shown = version_a if failed.first == "a" else version_b
        return PairwiseVerdict(**base, orders=orders, usage=usage, unscored_kind=failed.unscored_kind,
                               unscored_reason=f"order with {shown} first: {failed.reason}")
    return PairwiseVerdict(**base, outcome=outcome, consistent=consistent, orders=orders, usage=usage)
