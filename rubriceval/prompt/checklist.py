"""The prompts of checklist items: one yes/no question per call, the sample first and the question last, so every
question about one sample shares its whole prompt but the last lines (the judge server's prefix cache reuses it).
How answers become a level is scoring/checklist.py's."""
from __future__ import annotations

import json

from rubriceval.data.sample import Sample
from rubriceval.judge.options import CallOptions, choices_schema
from rubriceval.judge.tokens import estimate_tokens
from rubriceval.prompt.compile import (
    FIELD_LABELS,
    CompiledPrompt,
    contexts_label,
    environment,
    field_value,
    knowledge_text,
    render_criterion,
)
from rubriceval.prompt.environment import render_text, templates_fingerprint
from rubriceval.rubric.schema import ChecklistItem, ChecklistQuestion, Rubric

CHOICES = ["yes", "no"]
TOP_LOGPROBS = 10
SCHEMA_NAME = "checklist_answer"
TEMPLATES = ("checklist_system", "checklist", "checklist_reask", "knowledge")


def call_options() -> CallOptions:
    return CallOptions(max_tokens=8, logprobs=True, top_logprobs=TOP_LOGPROBS, choices=list(CHOICES))


def choice_answer_tokens(options: CallOptions, constraint: str) -> int:
    """Completion tokens a constrained answer takes, for the dry run: the longest choice as the reply is written —
    bare under a grammar or no constraint (llama.cpp: "yes" is one token), else `{"answer": "…"}` — plus the end
    of the turn, within the call's max_tokens. The embedded judge measured ~2 per question (docs/benchmarks.md)."""
    longest = max(options.choices or [""], key=len)
    reply = longest if constraint in ("grammar", "none") else json.dumps({"answer": longest}, ensure_ascii=False)
    expected = estimate_tokens(reply) + 1
    return min(expected, options.max_tokens) if options.max_tokens else expected


def compile_question(rubric: Rubric, item: ChecklistItem, question: ChecklistQuestion, sample: Sample, *,
                     template_dir: str | None = None) -> CompiledPrompt:
    """The messages for one question: identical to every other question of this sample but for the last lines."""
    lang = rubric.language
    env = environment(template_dir)
    transcript = ""
    fields: list[tuple[str, str, str]] = []
    if rubric.is_conversation and sample.conversation is not None:
        from rubriceval.prompt.transcript import render_transcript

        transcript = render_transcript(sample.conversation, lang)
    else:
        labels = FIELD_LABELS[lang]
        fields = [(name, labels[name], field_value(sample, name, lang)) for name in rubric.judge_sees]
    # Only the item's own criterion is shown (after the sample): the rubric's would break the prefix that every
    # rubric's questions about this sample share, and the questions carry the rubric's meaning themselves.
    criterion = render_criterion(rubric, item, sample) if item.criterion else ""
    variables = dict(rubric=rubric, criterion=criterion, fields=fields, transcript=transcript,
                     question=question.ask, knowledge=knowledge_text(rubric), contexts_label=contexts_label(fields))
    messages = [{"role": "system", "content": render_text(env, lang, "checklist_system")},
                {"role": "user", "content": render_text(env, lang, "checklist", **variables)}]
    fingerprint = templates_fingerprint(env, [f"{lang}/{name}.j2" for name in TEMPLATES])
    return CompiledPrompt(rubric_id=rubric.id, item_id=f"{item.id}.{question.id}", messages=messages,
                          json_schema=choices_schema(CHOICES), options=call_options(), schema_name=SCHEMA_NAME,
                          # No rubric version here: the messages (criterion, sample, question) are in the cache key
                          # already, so a version that only changes the rule or the fitted weights reuses the answers.
                          cache_tag=f"{rubric.id}/{item.id}/{question.id}/{fingerprint}")


def compile_checklist(rubric: Rubric, item: ChecklistItem, sample: Sample) -> list[CompiledPrompt]:
    return [compile_question(rubric, item, q, sample) for q in item.questions]
