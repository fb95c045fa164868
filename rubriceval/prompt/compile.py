"""Rubric + sample → the exact chat messages the judge receives (Jinja2 templates, zh and en)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import jinja2
from jinja2 import meta
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.judge.options import CallOptions
from rubriceval.prompt.environment import (
    TextOrigin,
    is_template_source,
    prompt_environment,
    render_messages,
    render_untrusted_source,
)
from rubriceval.prompt.prompt_options import level_order, shown_examples
from rubriceval.rubric.schema import ChecklistItem, JudgeItem, Rubric
from rubriceval.rubric.yaml_lines import field_label, load_yaml_with_lines

TEMPLATE_DIR = Path(__file__).parent / "templates"

# The judge's reply: feedback before score, so the model reasons before it commits to a number.
VERDICT_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "feedback": {"type": "string"},
        "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
    },
    "required": ["feedback", "score"],
    "additionalProperties": False,
}

FIELD_LABELS = {
    "zh": {"question": "用户问题", "answer": "机器人回答", "contexts": "参考资料", "ground_truth": "标准答案",
           "reference_contexts": "标准参考资料", "intent": "用户意图", "tags": "标签"},
    "en": {"question": "USER QUESTION", "answer": "CHATBOT ANSWER", "contexts": "RETRIEVED CONTEXTS",
           "ground_truth": "REFERENCE ANSWER", "reference_contexts": "REFERENCE CONTEXTS", "intent": "INTENT",
           "tags": "TAGS"},
}
# Placeholders a criterion may use.
CRITERION_VARIABLES = {"sample", "rubric"}


class CompiledPrompt(BaseModel):
    rubric_id: str
    item_id: str
    messages: list[dict[str, str]]
    json_schema: dict | None
    cache_tag: str              # rubric version + hash (its knowledge file's too): an edited rubric never gets a stale
                                # cached verdict
    options: CallOptions | None = None   # per-call options (checklist questions: yes/no with logprobs)
    schema_name: str = "verdict"         # the structured answer's name in the request (the scorer sends it)


def environment(template_dir: str | None = None) -> ImmutableSandboxedEnvironment:
    """The rubric prompt templates: `template_dir` first (a team's replacement), then the built-ins."""
    return prompt_environment(template_dir, TEMPLATE_DIR)


def criterion_placeholders(text: str) -> set[str]:
    env = environment()
    return meta.find_undeclared_variables(env.parse(text))


def _criterion_origin(rubric: Rubric, item: JudgeItem | ChecklistItem) -> TextOrigin:
    """File, line and field of the criterion an item is judged by (the item's own, else the rubric's)."""
    path: tuple = ("criterion",)
    if item.criterion:
        path = ("items", rubric.items.index(item), "criterion")
    line = None
    if rubric.source_file and Path(rubric.source_file).is_file():
        try:
            line = load_yaml_with_lines(rubric.source_file)[1].get(path)
        except RubricEvalError:   # the file changed since loading: the field still names the place
            line = None
    return TextOrigin(file=rubric.source_file, line=line,
                      field=field_label(path, {"items": [{"id": i.id} for i in rubric.items]}) or "criterion")


def render_criterion(rubric: Rubric, item: JudgeItem | ChecklistItem, sample: Sample | None) -> str:
    """The criterion with its placeholders filled, rendered in the sandbox: rubric text is template source."""
    text = item.criterion or rubric.criterion
    if not is_template_source(text):
        return text.strip()
    try:
        return render_untrusted_source(text, TextOrigin(field="criterion"),
                                       sample=sample or Sample(id="", question=""), rubric=rubric).strip()
    except RubricEvalError as exc:     # only now look up where the text was written
        origin = _criterion_origin(rubric, item)
        raise type(exc)(exc.message, file=origin.file, line=origin.line, field=origin.field, hint=exc.hint) from None


def knowledge_text(rubric: Rubric) -> str:
    """The rubric's knowledge file as its judge prompts show it (zh|en/knowledge.j2), "" without one. Shown whatever
    `judge_sees` says: that lists the sample's fields, and the knowledge file is the rubric's own material."""
    knowledge = rubric.knowledge_base()
    return knowledge.text if knowledge is not None else ""


def contexts_label(fields: Sequence[tuple[str, str, str]]) -> str:
    """The label of the retrieved contexts among the shown fields ("" when not shown), for the knowledge block's note
    telling the two apart."""
    return next((label for name, label, _ in fields if name == "contexts"), "")


def field_value(sample: Sample, name: str, lang: str) -> str:
    value = getattr(sample, name)
    if isinstance(value, list):
        if not value:
            return "（无）" if lang == "zh" else "(none)"
        return "\n".join(f"[{i}] {v}" for i, v in enumerate(value, start=1))
    return value if value else ("（无）" if lang == "zh" else "(none)")


def verdict_schema(feedback_max_chars: int | None = None) -> dict:
    if feedback_max_chars is None:
        return VERDICT_SCHEMA
    schema = json.loads(json.dumps(VERDICT_SCHEMA))
    schema["properties"]["feedback"]["maxLength"] = feedback_max_chars
    return schema


def compile_item(rubric: Rubric, item: JudgeItem, sample: Sample, *, structured: bool = True,
                 template_dir: str | None = None, feedback_max_chars: int | None = None) -> CompiledPrompt:
    lang = rubric.language
    levels = item.score_descriptions or rubric.score_descriptions
    criterion = render_criterion(rubric, item, sample)
    labels = FIELD_LABELS[lang]
    fields = [(name, labels[name], field_value(sample, name, lang)) for name in rubric.judge_sees]
    listed = [(lvl, " ".join(levels[lvl].split())) for lvl in sorted(levels)]
    messages = render_messages(environment(template_dir), lang, "judge", rubric=rubric, item_id=item.id,
                               criterion=criterion, examples=shown_examples(rubric), fields=fields,
                               structured=structured, levels=level_order(rubric, sample.id, listed),
                               knowledge=knowledge_text(rubric), contexts_label=contexts_label(fields))
    return CompiledPrompt(
        rubric_id=rubric.id, item_id=item.id, messages=messages,
        json_schema=verdict_schema(feedback_max_chars) if structured else None,
        cache_tag=f"{rubric.id}/{item.id}/{rubric.version_tag}",
    )


def reask_template(lang: str, template_dir: str | None = None) -> jinja2.Template:
    """The one bounded re-ask after a reply no score could be read from; renders with `problems`, `structured`."""
    return environment(template_dir).get_template(f"{lang}/reask.j2")
