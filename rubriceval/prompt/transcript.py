"""Conversation rubric + conversation → the exact chat messages the judge receives.

The transcript comes first in the user message and the system message names no rubric, so every rubric judged on
the same conversation sends the same prefix (a provider's or llama.cpp's prefix cache reuses it). Three modes:

* conversation — the whole numbered transcript, one score (`scope: conversation`);
* turns        — one structured call scoring every assistant turn: {"turns": [{turn, feedback, score}]}
                 (`scope: assistant_turn`);
* turn         — one assistant turn with the transcript up to it (`scope: assistant_turn` fallback, and the path
                 when the judge has no structured output).

Turn numbers count every message from 1, as in check evidence. Assistant turns that only call tools are not judged
on their own (the customer reads nothing there); their calls show in the transcript.
"""
from __future__ import annotations

from typing import Literal

from rubriceval.data.conversation import Conversation, Turn
from rubriceval.data.sample import Sample
from rubriceval.prompt.compile import CompiledPrompt, environment, knowledge_text, render_criterion, verdict_schema
from rubriceval.prompt.environment import render_messages
from rubriceval.rubric.schema import JudgeItem, Rubric

Mode = Literal["conversation", "turns", "turn"]
TURNS_SCHEMA_NAME = "turn_verdicts"
SCORES = [1, 2, 3, 4, 5]
# Continuation lines of a message are indented, so no line inside a message can pass for a new "[n] …" turn.
CONTINUATION = "\n    "


def dialogue_of(sample: Sample) -> Conversation:
    """The sample's conversation. Runs only give conversation rubrics conversations (rubric/applies.py); a
    single-turn sample here is a preview (`rubriceval compile` without a dataset): one user and one assistant turn."""
    if sample.conversation is not None:
        return sample.conversation
    return Conversation(id=sample.id, turns=[Turn(role="user", content=sample.question),
                                             Turn(role="assistant", content=sample.answer or "…")])


def judged_turns(conversation: Conversation) -> list[int]:
    """The assistant turns a per-turn rubric scores: those that say something to the customer."""
    return [n for n, turn in conversation.numbered("assistant") if turn.content.strip()]


def transcript_turns(conversation: Conversation, upto: int | None = None) -> list[dict]:
    """The transcript template's input: number, role, content (continuation lines indented), tool-call signatures."""
    return [{"number": n, "role": turn.role, "content": CONTINUATION.join(turn.content.strip().splitlines()),
             "tool_calls": [call.signature() for call in turn.tool_calls]}
            for n, turn in conversation.numbered() if upto is None or n <= upto]


def render_transcript(conversation: Conversation, lang: str = "zh", upto: int | None = None) -> str:
    """The numbered transcript alone, exactly as the judge reads it (for compile previews, reports, the audit app)."""
    template = environment().get_template(f"{lang}/transcript.j2")
    return template.render(turns=transcript_turns(conversation, upto)).strip()


def turns_schema(judged: list[int], feedback_max_chars: int | None = None) -> dict:
    """Every judged turn exactly once: the turn numbers are an enum and the list has exactly that many entries (the
    reader re-checks, for judges that ignore the schema)."""
    feedback: dict = {"type": "string"}
    if feedback_max_chars is not None:
        feedback["maxLength"] = feedback_max_chars
    entry = {"type": "object", "properties": {"turn": {"type": "integer", "enum": judged}, "feedback": feedback,
                                              "score": {"type": "integer", "enum": SCORES}},
             "required": ["turn", "feedback", "score"], "additionalProperties": False}
    return {"type": "object",
            "properties": {"turns": {"type": "array", "items": entry, "minItems": len(judged),
                                     "maxItems": len(judged)}},
            "required": ["turns"], "additionalProperties": False}


def compile_conversation_item(rubric: Rubric, item: JudgeItem, sample: Sample, *, mode: Mode, turn: int | None = None,
                              structured: bool = True, feedback_max_chars: int | None = None,
                              template_dir: str | None = None) -> CompiledPrompt:
    conversation = dialogue_of(sample)
    upto = turn if mode == "turn" else None
    levels = item.score_descriptions or rubric.score_descriptions
    contexts = [(n, t.contexts) for n, t in conversation.numbered("assistant")
                if t.contexts and (upto is None or n <= upto)] if "contexts" in rubric.judge_sees else []
    judged = judged_turns(conversation)
    env = environment(template_dir)
    user = render_messages(env, rubric.language, "conversation", system=None, mode=mode, turn=turn, judged=judged,
                           turns=transcript_turns(conversation, upto), contexts=contexts,
                           reference_outcome=conversation.reference_outcome if "ground_truth" in rubric.judge_sees
                           else "", rubric=rubric, item_id=item.id, criterion=render_criterion(rubric, item, sample),
                           levels=[(lvl, " ".join(levels[lvl].split())) for lvl in sorted(levels)],
                           examples=rubric.examples, structured=structured, knowledge=knowledge_text(rubric))
    # Its own system message (render_messages' is the single-turn one), identical for every conversation rubric.
    system = env.get_template(f"{rubric.language}/conversation_system.j2").render().strip()
    schema: dict | None
    if mode == "turns":
        schema = turns_schema(judged, feedback_max_chars)
    else:
        schema = verdict_schema(feedback_max_chars) if structured else None
    return CompiledPrompt(rubric_id=rubric.id, item_id=item.id,
                          messages=[{"role": "system", "content": system}, *user], json_schema=schema,
                          schema_name=TURNS_SCHEMA_NAME if mode == "turns" else "verdict",
                          cache_tag=f"{rubric.id}/{item.id}/{rubric.version_tag}/{mode}" + (f"@{turn}" if turn else ""))


def compile_conversation_rubric(rubric: Rubric, sample: Sample, *, structured: bool = True,
                                feedback_max_chars: int | None = None) -> list[CompiledPrompt]:
    """The prompts a run sends when every reply can be read: per judge item, one call over the whole conversation,
    or for assistant_turn one structured call — or, without structured output, one call per judged turn."""
    prompts = []
    for item in rubric.judge_items:
        if rubric.scope == "conversation":
            prompts.append(compile_conversation_item(rubric, item, sample, mode="conversation", structured=structured,
                                                     feedback_max_chars=feedback_max_chars))
        elif structured:
            prompts.append(compile_conversation_item(rubric, item, sample, mode="turns", structured=structured,
                                                     feedback_max_chars=feedback_max_chars))
        else:
            prompts += [compile_conversation_item(rubric, item, sample, mode="turn", turn=n, structured=structured,
                                                  feedback_max_chars=feedback_max_chars)
                        for n in judged_turns(dialogue_of(sample))]
    return prompts
