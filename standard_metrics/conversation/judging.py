"""The judge calls of the conversation metrics: one prompt environment, one judge path (`rubriceval.judge.ask`).

Templates live in `standard_metrics/templates/agent/<lang>/` (the shared `_macros.j2` and `<lang>/reask.j2` come
from `standard_metrics/templates/`). A team replaces one by dropping `agent/zh/topics_answered.j2` into the folder
given as `MetricOptions.template_dir` (or $RUBRICEVAL_METRIC_TEMPLATES); the fingerprint of whatever is found is
part of each LLM conversation metric's version, so edited prompts never reuse old verdicts.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import jinja2

from rubriceval.judge.ask import JudgeRequest, TemplateReask, ask, json_reader
from rubriceval.prompt.environment import prompt_environment, render_messages, template_source
from rubriceval.standard_metrics.calls import CacheLookup, PlannedCall
from rubriceval.standard_metrics.context import Unscorable
from rubriceval.standard_metrics.conversation.spec import ConversationContext
from rubriceval.standard_metrics.prompts import TEMPLATE_DIR_ENV
from rubriceval.standard_metrics.schemas import validate

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
AGENT_TEMPLATES = TEMPLATES / "agent"
CALLS = ("goal_with_reference", "goal_without_reference", "topics_answered", "topics_in_reference")
CALLS_VERSION = "1"


def environment(template_dir: str | None) -> jinja2.Environment:
    """A team's folder (option, else $RUBRICEVAL_METRIC_TEMPLATES) first — its agent/, then its shared files —
    then the built-ins."""
    template_dir = template_dir or os.environ.get(TEMPLATE_DIR_ENV) or None
    team = [Path(template_dir) / "agent", Path(template_dir)] if template_dir else []
    return prompt_environment(*team, AGENT_TEMPLATES, TEMPLATES)


def fingerprint(template_dir: str | None, lang: str) -> str:
    env = environment(template_dir)
    digest = hashlib.sha256()
    names = ["_macros.j2", f"{lang}/system.j2", f"{lang}/reask.j2", f"{lang}/_transcript.j2"]
    for name in names + [f"{lang}/{call}.j2" for call in CALLS]:
        digest.update(name.encode())
        digest.update(template_source(env, name)[0].encode())
    return digest.hexdigest()[:10]


def request(ctx: ConversationContext, call: str, schema: dict, **variables: Any) -> JudgeRequest:
    env = environment(ctx.options.template_dir)
    messages = render_messages(env, ctx.language, call, turns=ctx.conversation.turns, **variables)
    return JudgeRequest(messages=messages, json_schema=schema, schema_name=call,
                        cache_tag=f"standard_metrics/agent/{call}/v{CALLS_VERSION}")


def planned(ctx: ConversationContext, call: str, schema: dict, consumer: str, *, depends_on: tuple[str, ...] = (),
            exact: bool = True, **variables: Any) -> PlannedCall:
    """A call as a dry run lists it; `exact=False` when it was rendered with stand-ins for an earlier answer."""
    sent = request(ctx, call, schema, **variables)
    return PlannedCall(kind=call, messages=sent.messages, json_schema=schema, schema_name=call,
                       cache_tag=sent.cache_tag, consumers=[consumer], depends_on=list(depends_on), exact=exact)


def cached_answer(lookup: CacheLookup | None, call: PlannedCall) -> dict | None:
    """The judge's cached, schema-valid answer to a planned call, if the cache has one."""
    hit = lookup(call) if lookup is not None else None
    if not hit or hit.get("data") is None:
        return None
    data, problems = validate(hit["data"], call.json_schema)
    return None if problems else data


async def ask_judge(ctx: ConversationContext, call: str, schema: dict, **variables: Any) -> dict:
    """The judge's structured answer to one call, checked against its schema (one re-ask when it does not fit);
    its usage is charged to the metric; a failure raises Unscorable with the judge path's kind and reason."""
    if ctx.judge is None:
        raise Unscorable("error", f"{call} needs a judge")
    env = environment(ctx.options.template_dir)
    reask = (TemplateReask(template=env.get_template(f"{ctx.language}/reask.j2")) if ctx.options.reask_invalid
             else None)
    config = getattr(ctx.judge, "config", None)
    asked = await ask(ctx.judge, request(ctx, call, schema, **variables),
                      json_reader(lambda data: validate(data, schema)),
                      reask=reask, max_input_tokens=getattr(config, "max_input_tokens", None))
    ctx.spend(asked.usage)
    if not asked.ok:
        raise Unscorable(asked.unscored_kind or "error", f"{call}: {asked.reason}")
    return asked.value
