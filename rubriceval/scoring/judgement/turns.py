"""One judgement question about one turn, through the one judge path (`ask`) and the one prompt environment.

The prompt is the whole transcript, then the turn, the policy passages retrieved for it, the item's examples and
the question (zh|en/judgement_turn.j2): every question about one conversation — of every item, card and rubric —
shares the system message and the transcript, so the judge server processes the transcript once and each further
question costs its own last lines (measured: Usage.cached_prompt_tokens). Questions go out one after the other, so
the first has filled the slot's cache when the next arrives. Turns, passages and examples are fenced variables,
never template source. p(yes) is read from the answer token's logprobs as checklist questions read it."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rubriceval.core.verdict import Usage
from rubriceval.data.conversation import Conversation
from rubriceval.judge.ask import JudgeRequest, TemplateReask, ask
from rubriceval.judge.options import choices_schema
from rubriceval.prompt.checklist import CHOICES, SCHEMA_NAME, call_options
from rubriceval.prompt.compile import CompiledPrompt, environment
from rubriceval.prompt.environment import render_text, templates_fingerprint
from rubriceval.prompt.transcript import render_transcript
from rubriceval.rubric.calibration import ItemExample
from rubriceval.scoring.turn_questions import ROLE_NAMES
from rubriceval.scoring.yes_no import read_yes_no

TEMPLATES = ("judgement_turn_system", "judgement_turn", "checklist_reask")


class TurnAnswer(BaseModel):
    """The judge's answer about one turn: p(yes), or why there is none."""

    turn: int
    p_yes: float | None = None
    unscored_kind: str | None = None
    reason: str | None = None


def compile_judgement_turn(conversation: Conversation, turn: int, question: str, lang: str = "zh", *,
                           passages: list[str] | tuple[str, ...] = (), examples: list[ItemExample] | tuple = (),
                           template_dir: str | None = None) -> CompiledPrompt:
    """The messages for one judgement question about turn `turn` (from 1) of the whole conversation."""
    env = environment(template_dir)
    said = conversation.turns[turn - 1]
    user = render_text(env, lang, "judgement_turn", transcript=render_transcript(conversation, lang), turn=turn,
                       role=ROLE_NAMES[lang].get(said.role, said.role), content=said.content,
                       passages=list(passages), examples=list(examples), question=question)
    messages = [{"role": "system", "content": render_text(env, lang, "judgement_turn_system")},
                {"role": "user", "content": user}]
    fingerprint = templates_fingerprint(env, [f"{lang}/{name}.j2" for name in TEMPLATES])
    return CompiledPrompt(rubric_id="", item_id=f"turn{turn}", messages=messages, json_schema=choices_schema(CHOICES),
                          options=call_options(), schema_name=SCHEMA_NAME,
                          cache_tag=f"judgement_turn/{fingerprint}")


class TurnAsker:
    """Asks one conversation's per-turn judgement questions, keeping each answer (per question, turn, passages and
    examples) and what the calls cost."""

    def __init__(self, judge: Any, conversation: Conversation, lang: str = "zh", template_dir: str | None = None):
        self.judge, self.conversation, self.lang, self.template_dir = judge, conversation, lang, template_dir
        self.usage = Usage()
        self.last_usage = Usage()          # the last answer's calls (none when it was already known)
        self._answers: dict[tuple, TurnAnswer] = {}

    async def answer(self, question: str, turn: int, passages: list[str] | tuple[str, ...] = (),
                     examples: list[ItemExample] | tuple = ()) -> TurnAnswer:
        key = (question, turn, tuple(passages), tuple(e.model_dump_json() for e in examples))
        self.last_usage = Usage()
        if key in self._answers:
            return self._answers[key]
        prompt = compile_judgement_turn(self.conversation, turn, question, self.lang, passages=passages,
                                        examples=examples, template_dir=self.template_dir)
        request = JudgeRequest(messages=prompt.messages, json_schema=prompt.json_schema, schema_name=SCHEMA_NAME,
                               cache_tag=prompt.cache_tag, options=prompt.options)
        reask = TemplateReask(template=environment(self.template_dir).get_template(f"{self.lang}/checklist_reask.j2"))
        asked = await ask(self.judge, request, read_yes_no, reask=reask,
                          max_input_tokens=self.judge.config.max_input_tokens)
        self.usage, self.last_usage = self.usage + asked.usage, asked.usage
        if asked.ok and asked.value is not None:
            found = TurnAnswer(turn=turn, p_yes=round(asked.value.p_yes, 4))
        else:
            found = TurnAnswer(turn=turn, unscored_kind=asked.unscored_kind, reason=asked.reason)
        self._answers[key] = found
        return found


def judge_name(judge: Any) -> str | None:
    """The judge a calibration names: the embedded judge's model file, else the configured model."""
    if judge is None:
        return None
    if judge.config.is_local:
        from rubriceval.judge.embedded_model import embedded_judge_identity

        return embedded_judge_identity()
    return judge.config.model
