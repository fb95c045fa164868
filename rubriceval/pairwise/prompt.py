"""Rubric item + two answers to the same question → the messages of one pairwise A/B call (templates
`<lang>/pairwise_system.j2`, `<lang>/pairwise.j2`, re-ask `<lang>/pairwise_reask.j2`, in the rubric prompt
environment: a team's template folder may replace them).

What both answers share (the question, the reference answer …, as the rubric's `judge_sees` lists them) comes once;
what belongs to one answer (the answer, its retrieved contexts) comes under that answer's label. Every value is
fenced: answers are hostile input.
"""
from __future__ import annotations

from collections.abc import Sequence

import jinja2
from pydantic import BaseModel

from rubriceval.data.sample import Sample
from rubriceval.prompt.compile import FIELD_LABELS, environment, field_value, render_criterion
from rubriceval.prompt.environment import render_messages, templates_fingerprint
from rubriceval.rubric.schema import JudgeItem, Rubric

CALL, SYSTEM, REASK = "pairwise", "pairwise_system", "pairwise_reask"
SCHEMA_NAME = "pairwise_verdict"
# The fields each answer has for itself; every other field the rubric's judge sees is shared.
PER_ANSWER = ("answer", "contexts")
RESPONSE_LABELS = {
    "zh": {"answer": "回答 {side}", "contexts": "回答 {side} 的参考资料"},
    "en": {"answer": "RESPONSE {side}", "contexts": "RESPONSE {side} CONTEXTS"},
}


def pairwise_schema(feedback_max_chars: int | None = None) -> dict:
    """The structured reply: feedback first, then the choice."""
    feedback: dict = {"type": "string"}
    if feedback_max_chars is not None:
        feedback["maxLength"] = feedback_max_chars
    return {"type": "object", "properties": {"feedback": feedback, "winner": {"type": "string",
                                                                               "enum": ["A", "B", "tie"]}},
            "required": ["feedback", "winner"], "additionalProperties": False}


class PairwisePrompt(BaseModel):
    messages: list[dict[str, str]]
    json_schema: dict | None
    cache_tag: str


def pairwise_fingerprint(lang: str, template_dir: str | None = None) -> str:
    """Hash of the pairwise templates (the re-ask's too): part of every call's cache tag."""
    return templates_fingerprint(environment(template_dir), [f"{lang}/{name}.j2" for name in (SYSTEM, CALL, REASK)])


def _response_fields(sample: Sample, side: str, names: Sequence[str], lang: str) -> list[tuple[str, str, str]]:
    """The answer (always: it is what is compared) and, when the judge sees them, its own contexts."""
    fields = ["answer"] + (["contexts"] if "contexts" in names else [])
    return [(name, RESPONSE_LABELS[lang][name].format(side=side), field_value(sample, name, lang))
            for name in fields]


def compile_pairwise(rubric: Rubric, item: JudgeItem, first: Sample, second: Sample, *, structured: bool = True,
                     feedback_max_chars: int | None = None, template_dir: str | None = None) -> PairwisePrompt:
    """`first` is shown as Response A, `second` as Response B; shared fields come from `first` (the caller
    passes versions of the same question)."""
    lang = rubric.language
    levels = item.score_descriptions or rubric.score_descriptions
    labels = FIELD_LABELS[lang]
    shared = [(name, labels[name], field_value(first, name, lang)) for name in rubric.judge_sees
              if name not in PER_ANSWER]
    responses = [_response_fields(first, "A", rubric.judge_sees, lang),
                 _response_fields(second, "B", rubric.judge_sees, lang)]
    messages = render_messages(environment(template_dir), lang, CALL, system=SYSTEM, rubric=rubric,
                               item_id=item.id, criterion=render_criterion(rubric, item, first),
                               levels=[(lvl, " ".join(levels[lvl].split())) for lvl in sorted(levels)],
                               shared=shared, responses=responses, structured=structured)
    return PairwisePrompt(messages=messages, json_schema=pairwise_schema(feedback_max_chars) if structured else None,
                          cache_tag=f"pairwise/{rubric.id}/{item.id}/{rubric.version_tag}/"
                                    f"{pairwise_fingerprint(lang, template_dir)}")


def pairwise_reask_template(lang: str, template_dir: str | None = None) -> jinja2.Template:
    return environment(template_dir).get_template(f"{lang}/{REASK}.j2")
