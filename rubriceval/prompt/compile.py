"""Rubric + sample → the exact chat messages the judge receives (Jinja2 templates, zh and en)."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2 import meta
from pydantic import BaseModel

from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import JudgeItem, Rubric

TEMPLATE_DIR = Path(__file__).parent / "templates"
SPLIT_MARKER = "=====USER====="

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
    cache_tag: str              # rubric version + hash: an edited rubric never gets a stale cached verdict


def fence(value: str, label: str = "") -> str:
    """Neutralise delimiter look-alikes inside untrusted text so an answer cannot close its own block."""
    return str(value).replace("<<<", "‹‹‹").replace(">>>", "›››")


def _tojson(value) -> str:
    return json.dumps(value, ensure_ascii=False)


@lru_cache(maxsize=None)
def environment(template_dir: str | None = None) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(template_dir or str(TEMPLATE_DIR)),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)
    env.filters["fence"] = fence
    env.filters["tojson"] = _tojson
    return env


def criterion_placeholders(text: str) -> set[str]:
    env = environment()
    return meta.find_undeclared_variables(env.parse(text))


def _render_criterion(text: str, rubric: Rubric, sample: Sample | None) -> str:
    if "{{" not in text and "{%" not in text:
        return text.strip()
    template = environment().from_string(text)
    return template.render(sample=sample or Sample(id="", question=""), rubric=rubric).strip()


def _field_value(sample: Sample, name: str, lang: str) -> str:
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
    criterion = _render_criterion(item.criterion or rubric.criterion, rubric, sample)
    labels = FIELD_LABELS[lang]
    fields = [(name, labels[name], _field_value(sample, name, lang)) for name in rubric.judge_sees]
    template = environment(template_dir).get_template(f"judge_{lang}.j2")
    text = template.render(rubric=rubric, item_id=item.id, criterion=criterion,
                           levels=[(lvl, " ".join(levels[lvl].split())) for lvl in sorted(levels)],
                           examples=rubric.examples, fields=fields, structured=structured)
    system, user = text.split(SPLIT_MARKER, 1)
    return CompiledPrompt(
        rubric_id=rubric.id, item_id=item.id,
        messages=[{"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()}],
        json_schema=verdict_schema(feedback_max_chars) if structured else None,
        cache_tag=f"{rubric.id}/{item.id}/{rubric.version_tag}",
    )


def compile_rubric(rubric: Rubric, sample: Sample, *, structured: bool = True,
                   feedback_max_chars: int | None = None) -> list[CompiledPrompt]:
    return [compile_item(rubric, item, sample, structured=structured, feedback_max_chars=feedback_max_chars)
            for item in rubric.judge_items]


def retry_message(lang: str, reason: str, structured: bool) -> dict[str, str]:
    """The one bounded re-ask after an unparseable reply."""
    if lang == "zh":
        fmt = '一个 JSON 对象 {"feedback": "...", "score": 1-5 的整数}' if structured else "Feedback: <评语>\n[RESULT] <1-5 的整数>"
        text = f"你的上一条回复无法解析（{reason}）。请重新评估，并严格只输出：{fmt}"
    else:
        fmt = 'one JSON object {"feedback": "...", "score": integer 1-5}' if structured else "Feedback: <feedback>\n[RESULT] <integer 1-5>"
        text = f"Your previous reply could not be parsed ({reason}). Judge again and output exactly: {fmt}"
    return {"role": "user", "content": text}
