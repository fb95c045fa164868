"""Judge items of conversation rubrics: one score for the whole dialogue, or one per assistant turn.

`scope: conversation` — one call over the numbered transcript; the judge cites turn numbers in its feedback.
`scope: assistant_turn` — ONE structured call returns {"turns": [{turn, feedback, score}]}, read strictly (every
judged turn exactly once); when that reply still cannot be read after its re-ask, or the judge has no structured
output, each turn is judged on its own with the transcript up to it. Per-turn scores become the item's score by the
rubric's `turn_aggregate` and are kept as evidence (one entry per turn, with its turn number).

A transcript over the judge's `max_input_tokens` is unscored `input_too_long`, never truncated.
"""
from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Evidence, Usage
from rubriceval.data.sample import Sample
from rubriceval.judge.ask import Asked, JudgeRequest, TemplateReask, ask, json_reader
from rubriceval.judge.client import JudgeClient
from rubriceval.judge.options import CallOptions
from rubriceval.prompt.compile import CompiledPrompt, environment, reask_template
from rubriceval.prompt.transcript import TURNS_SCHEMA_NAME, Mode, compile_conversation_item, judged_turns
from rubriceval.rubric.schema import JudgeItem, Rubric, TurnAggregate
from rubriceval.scoring.combine import round_half_up
from rubriceval.scoring.item_outcome import JudgeItemOutcome, read_verdict
from rubriceval.scoring.score_probs import holistic_options

# Replies that the per-turn fallback can fix; a provider error or timeout would only repeat per turn.
UNREADABLE = ("parse_error", "invalid_output")


class TurnJudgement(BaseModel):
    """The judge's score and feedback for one assistant turn (an expert's verdict on a turn is the store's
    ExpertTurnVerdict)."""

    turn: int
    score: int = Field(ge=1, le=5)
    feedback: str = ""


def read_turn_judgements(judged: list[int]):
    """A reader for {"turns": [...]}: every judged turn exactly once, integer scores 1–5."""
    def check(data: dict) -> tuple[list[TurnJudgement] | None, list[str]]:
        entries = data.get("turns")
        if not isinstance(entries, list):
            return None, ["no 'turns' list in the reply"]
        problems: list[str] = []
        verdicts: dict[int, TurnJudgement] = {}
        for entry in entries:
            turn = entry.get("turn") if isinstance(entry, dict) else None
            score = entry.get("score") if isinstance(entry, dict) else None
            if not isinstance(turn, int) or turn not in judged:
                problems.append(f"turn {turn!r} is not one of the assistant turns to judge {judged}")
            elif turn in verdicts:
                problems.append(f"turn {turn} is judged more than once")
            elif not isinstance(score, int) or isinstance(score, bool) or not 1 <= score <= 5:
                problems.append(f"turn {turn}: score {score!r} is not an integer 1–5")
            else:
                verdicts[turn] = TurnJudgement(turn=turn, score=score, feedback=str(entry.get("feedback") or ""))
        missing = [n for n in judged if n not in verdicts]
        if missing:
            problems.append(f"turn(s) {', '.join(map(str, missing))} not judged")
        return [verdicts[n] for n in judged if n in verdicts], problems
    return json_reader(check)


def aggregate_turns(verdicts: list[TurnJudgement], rule: TurnAggregate) -> tuple[int, str]:
    """The item score from its turns' scores, and how it was reached (see TurnAggregate)."""
    scores = [v.score for v in verdicts]
    if rule.rule == "min":
        worst = min(verdicts, key=lambda v: v.score)
        return worst.score, f"min over {len(scores)} turn(s): turn {worst.turn}"
    if rule.rule == "mean":
        mean = sum(scores) / len(scores)
        return round_half_up(mean), f"mean over {len(scores)} turn(s) {mean:.2f}"
    share = sum(1 for s in scores if s >= rule.threshold) / len(scores)
    return round_half_up(1 + 4 * share), (f"{share:.0%} of {len(scores)} turn(s) score ≥ {rule.threshold} → "
                                          f"1 + 4·{share:.2f}")


def _request(prompt: CompiledPrompt, schema_name: str = "verdict", options: CallOptions | None = None
             ) -> JudgeRequest:
    return JudgeRequest(messages=prompt.messages, json_schema=prompt.json_schema, schema_name=schema_name,
                        cache_tag=prompt.cache_tag, options=options)


def _structured(judge: JudgeClient) -> bool:
    return judge.config.structured == "json_schema"


async def _ask_verdict(rubric: Rubric, item: JudgeItem, sample: Sample, judge: JudgeClient, *, mode: Mode,
                       turn: int | None = None) -> Asked:
    """One score with feedback, as for a single-turn judge item (same reader, same re-ask). The whole-conversation
    judgment also asks for the score token's logprobs, as single-turn items do (P(level), expected score, tie:
    rubriceval/scoring/score_probs.py); a turn judged on its own (the per-turn fallback of `scope: assistant_turn`)
    does not (`holistic_options` says why)."""
    structured = _structured(judge)
    prompt = compile_conversation_item(rubric, item, sample, mode=mode, turn=turn, structured=structured,
                                       feedback_max_chars=judge.config.feedback_max_chars)
    reask = TemplateReask(template=reask_template(rubric.language), variables={"structured": structured})
    return await ask(judge, _request(prompt, options=holistic_options(rubric, judge.config)), read_verdict, reask=reask,
                     max_input_tokens=judge.config.max_input_tokens)


async def _ask_turns(rubric: Rubric, item: JudgeItem, sample: Sample, judge: JudgeClient,
                     judged: list[int]) -> Asked:
    prompt = compile_conversation_item(rubric, item, sample, mode="turns", structured=True,
                                       feedback_max_chars=judge.config.feedback_max_chars)
    reask = TemplateReask(template=environment().get_template(f"{rubric.language}/conversation_reask.j2"),
                          variables={"judged": judged})
    return await ask(judge, _request(prompt, TURNS_SCHEMA_NAME), read_turn_judgements(judged), reask=reask,
                     max_input_tokens=judge.config.max_input_tokens)


def _turn_evidence(item: JudgeItem, rubric: Rubric, verdicts: list[TurnJudgement]) -> list[Evidence]:
    return [Evidence(item=item.id, turn=v.turn, score=v.score, passed=v.score >= rubric.threshold, detail=v.feedback)
            for v in verdicts]


async def judge_turn_by_turn(rubric: Rubric, item: JudgeItem, sample: Sample, judge: JudgeClient,
                             judged: list[int]) -> tuple[list[TurnJudgement], list[tuple[int, Asked]], Usage]:
    """The fallback: each judged turn on its own, with the transcript up to it. Returns the verdicts read, the
    turns that stayed unscored, and what all calls cost."""
    asked = await asyncio.gather(*(_ask_verdict(rubric, item, sample, judge, mode="turn", turn=n) for n in judged))
    usage = sum((a.usage for a in asked), Usage())
    verdicts = [TurnJudgement(turn=n, score=a.value.score, feedback=a.value.feedback)
                for n, a in zip(judged, asked) if a.ok and a.value is not None]
    return verdicts, [(n, a) for n, a in zip(judged, asked) if not a.ok], usage


async def judge_assistant_turns(rubric: Rubric, item: JudgeItem, sample: Sample, judge: JudgeClient) -> JudgeItemOutcome:
    if sample.conversation is None:      # runs give assistant_turn rubrics conversations only (rubric/applies.py)
        raise ValueError(f"sample {sample.id}: a scope: assistant_turn rubric judges a conversation")
    judged = judged_turns(sample.conversation)
    if not judged:
        return JudgeItemOutcome(item=item, usage=Usage(), unscored_kind="missing_field",
                                reason="no assistant turn says anything to the customer (only tool calls)")
    usage = Usage()
    details: dict[str, Any] = {"judged_turns": judged}
    verdicts: list[TurnJudgement] | None = None
    if _structured(judge):
        asked = await _ask_turns(rubric, item, sample, judge, judged)
        usage = usage + asked.usage
        if asked.ok:
            verdicts, details["per_turn_path"] = asked.value, "one_call"
        elif asked.unscored_kind not in UNREADABLE:
            return JudgeItemOutcome.from_asked(item, asked)
        else:
            details["one_call_failed"] = f"{asked.reason} (after {asked.attempts} judge replies)"
            details["one_call_raw"] = asked.raw
    if verdicts is None:
        verdicts, failed, spent = await judge_turn_by_turn(rubric, item, sample, judge, judged)
        usage, details["per_turn_path"] = usage + spent, "per_turn"
        if failed:
            turn, first = failed[0]
            outcome = JudgeItemOutcome.from_asked(item, first)
            return outcome.model_copy(update={
                "usage": usage, "reason": f"turn {turn}: {outcome.reason}", "details": details,
                "turn_evidence": _turn_evidence(item, rubric, verdicts)})
    score, how = aggregate_turns(verdicts, rubric.aggregate)
    details["turn_aggregate"] = how
    details["turn_scores"] = {str(v.turn): v.score for v in verdicts}
    feedback = "\n".join(f"[{v.turn}] {v.score}/5 {v.feedback}".rstrip() for v in verdicts) + f"\n({how})"
    return JudgeItemOutcome(item=item, score=score, feedback=feedback, usage=usage, details=details,
                            turn_evidence=_turn_evidence(item, rubric, verdicts))


async def judge_conversation_item(rubric: Rubric, item: JudgeItem, sample: Sample, judge: JudgeClient) -> JudgeItemOutcome:
    """A conversation rubric's judge item, by its scope."""
    if rubric.scope == "assistant_turn":
        return await judge_assistant_turns(rubric, item, sample, judge)
    return JudgeItemOutcome.from_asked(item, await _ask_verdict(rubric, item, sample, judge, mode="conversation"))
