"""The one judge path: call the judge → count usage → read the reply → re-ask once if unreadable → typed outcome.

Every judge call in rubriceval goes through `ask` (rubric judge items, the standard metrics' calls, test-set
generation). How to use it:

    from rubriceval.judge.ask import JudgeRequest, Reading, TemplateReask, ask, json_reader

    request = JudgeRequest(messages=messages, json_schema=schema, schema_name="my_call", cache_tag="my_call/v1")

    def read(reply) -> Reading[MyResult]:               # a reader: one judge reply → a value, or its problems
        if reply.data is None:
            return Reading(problems=["the reply is not a JSON object"])
        return Reading(value=MyResult(**reply.data))

    asked = await ask(judge, request, read,
                      reask=TemplateReask(template=env.get_template("zh/reask.j2")),   # None: never re-ask
                      max_input_tokens=judge.config.max_input_tokens)                 # None: no length check
    if asked.ok:
        use(asked.value)                                # what the reader returned
    else:
        unscored(asked.unscored_kind, asked.reason)     # e.g. "parse_error", "provider_error", "input_too_long"
    spent = asked.usage                                 # every call made, the re-ask included

* **Readers.** `json_reader(check)` reads a structured reply (`reply.data`) and hands the object to
  `check(data) -> (value, problems)`; `rubriceval.scoring.rubric_scorer.read_verdict` reads a free-text or JSON
  score with feedback (`rubriceval.judge.parser`). Write one for any other answer shape (per-turn JSON arrays,
  yes/no with logprobs, SQL equivalence, pairwise A/B with `parse_pairwise_output`): a reader gets the whole
  reply (`text`, `data`, …) and returns `Reading(value=…)` or `Reading(problems=[…], kind=…, feedback=…)`.
* **Re-ask.** On problems, `ask` sends the same request once more with the judge's reply and a note rendered
  from a template (`TemplateReask`: the template gets `problems` — the first five, joined by "; " — plus its own
  `variables`). The wording lives in the `.j2` file, never in Python; the file is part of the prompt fingerprint.
* **Usage.** `usage_of(reply)` is the one reply → Usage rule: a reply served from the cache is a cache hit with
  zero tokens and zero cost (its stored counts were paid by an earlier run).
* **Errors.** A provider error or timeout is returned at once (the client already retried) with the client's
  `error_kind`; a prompt estimated above `max_input_tokens` is `input_too_long` without any call.
* **Prompts.** Render the messages with the one prompt environment (`rubriceval.prompt.environment`):
  `env = prompt_environment(team_dir, BUILTIN_DIR)`, `render_messages(env, lang, "my_call", **variables)` gives
  `<lang>/system.j2` + `<lang>/my_call.j2` as system + user messages; put
  `templates_fingerprint(env, [...the call's templates, the re-ask's too...])` in the scorer's version and cache tag.
  Untrusted text (answers, contexts, turns) goes in as variables through the `fence` filter, never as source.
* **Test double.** `rubriceval.testing.scripted_judge.ScriptedJudge` (replies by call order, callable or
  `schema_name`; errors and cached replies as `JudgeResponse`; records every request).
* **Call options.** `JudgeRequest(options=CallOptions(max_tokens=1, logprobs=True, top_logprobs=10,
  choices=["yes", "no"]))` reaches `complete(..., options=…)` (only when set, so judges without the keyword still
  work); the client puts the options in its cache key, constrains the answer to `choices` (JSON-schema enum, or a
  GBNF grammar on llama.cpp) and hands back `reply.logprobs` (per generated token: its logprob and the top
  alternatives) and `reply.cached_prompt_tokens` (prompt tokens the server reused from its prefix cache).
  `rubriceval.scoring.checklist` reads p(yes) this way.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, cast

import jinja2
from pydantic import BaseModel, ConfigDict, Field

from rubriceval.core.verdict import UnscoredKind, Usage
from rubriceval.judge.options import CallOptions
from rubriceval.judge.tokens import estimate_messages_tokens
from rubriceval.safety.untrusted import neutralise_untrusted

MAX_REASKS = 1   # one bounded re-ask after an unreadable reply
T = TypeVar("T")


class JudgeRequest(BaseModel):
    """What is sent: the chat messages, the JSON schema of a structured answer, and the cache tag (which names
    the prompt's version, so an edited prompt never gets a stale cached answer)."""

    messages: list[dict[str, str]]
    json_schema: dict | None = None
    schema_name: str = "verdict"
    cache_tag: str = ""
    options: CallOptions | None = None      # per-call options (max_tokens, logprobs, constrained choices)


class Reply(Protocol):
    """A judge reply as `JudgeClient.complete` returns it (`JudgeResponse`), or a test double's. Read-only
    members, so a reply may narrow them (JudgeResponse's error_kind is its Literal, its text always a str)."""

    @property
    def text(self) -> str | None: ...
    @property
    def data(self) -> dict | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def error_kind(self) -> str | None: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def cost_usd(self) -> float: ...


class Judge(Protocol):
    async def complete(self, messages: list[dict], *, json_schema: dict | None = None,
                       schema_name: str = "verdict", cache_tag: str = "", use_cache: bool = True,
                       options: CallOptions | None = None) -> Reply: ...


class Reading(BaseModel, Generic[T]):
    """A reader's result for one reply: the value, or the problems that stop it being read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    value: T | None = None
    problems: list[str] = Field(default_factory=list)
    kind: UnscoredKind = "invalid_output"     # the unscored kind when the problems remain after the re-ask
    feedback: str = ""                         # what the judge wrote, even when no value could be read

    @property
    def ok(self) -> bool:
        return not self.problems and self.value is not None


Reader = Callable[[Any], Reading]


class ReaskWriter(Protocol):
    def __call__(self, problems: list[str]) -> str: ...


class TemplateReask(BaseModel):
    """The re-ask note, rendered from a template with `problems` (first five, "; "-joined) and `variables`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    template: jinja2.Template
    variables: dict[str, Any] = Field(default_factory=dict)

    def __call__(self, problems: list[str]) -> str:
        return self.template.render(problems="; ".join(problems[:5]), **self.variables).strip()


class Asked(BaseModel, Generic[T]):
    """The typed outcome of one judge question: `value`, or `unscored_kind` + `reason`; always its usage."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    value: T | None = None
    unscored_kind: UnscoredKind | None = None
    reason: str | None = None            # the provider's error, or the reader's problems joined by "; "
    problems: list[str] = Field(default_factory=list)   # the reader's problems with the last reply
    feedback: str = ""                   # the reader's feedback from the last reply that could not be read
    raw: str | None = None               # text of the last reply the judge gave
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 0                    # replies received (2 after a re-ask)
    requests: list[Any] = Field(default_factory=list)   # the requests sent, in order (re-ask included)

    @property
    def ok(self) -> bool:
        return self.unscored_kind is None and self.value is not None


def usage_of(reply: Any) -> Usage:
    """The one reply → Usage rule. A served-from-cache reply costs nothing now: a cache hit, no tokens, no cost."""
    if getattr(reply, "cached", False):
        return Usage(cache_hits=1)
    return Usage(calls=1, prompt_tokens=reply.prompt_tokens or 0, completion_tokens=reply.completion_tokens or 0,
                 cost_usd=reply.cost_usd or 0.0, latency_s=getattr(reply, "latency_s", 0.0) or 0.0,
                 cached_prompt_tokens=getattr(reply, "cached_prompt_tokens", 0) or 0)


def json_reader(check: Callable[[dict], tuple[T | None, list[str]]]) -> Callable[[Any], Reading[T]]:
    """A reader for structured replies: the decoded JSON object goes to `check(data) → (value, problems)`."""
    def read(reply: Any) -> Reading[T]:
        if reply.data is None:
            snippet = (reply.text or "").strip().replace("\n", " ")[:80]
            return Reading(problems=[f"the reply is not a JSON object: {snippet!r}"])
        value, problems = check(reply.data)
        return Reading(value=None if problems else value, problems=problems)
    return read


def too_long(request: JudgeRequest, max_input_tokens: int | None) -> str | None:
    """Why the prompt is over the judge's input limit (estimated, before paying for a call); None when it fits."""
    if max_input_tokens is None:
        return None
    estimated = estimate_messages_tokens(request.messages)
    if estimated <= max_input_tokens:
        return None
    return (f"prompt is ~{estimated} tokens, over the judge's input limit of {max_input_tokens} "
            f"(max_input_tokens); shorten the answer/contexts")


def with_reask(request: JudgeRequest, reply_text: str | None, note: str) -> JudgeRequest:
    """The request once more, with the judge's reply and the re-ask note appended."""
    # The reply may echo the answer's text verbatim: defused like any untrusted text before it is sent back.
    messages = [*request.messages, {"role": "assistant", "content": neutralise_untrusted(reply_text or "")},
                {"role": "user", "content": note}]
    return request.model_copy(update={"messages": messages})


async def ask(judge: Judge, request: JudgeRequest, read: Reader, *, reask: ReaskWriter | None = None,
              max_input_tokens: int | None = None) -> Asked:
    """Ask the judge one question and read the answer; see the module docstring."""
    asked: Asked = Asked()
    reason = too_long(request, max_input_tokens)
    if reason:
        asked.unscored_kind, asked.reason = "input_too_long", reason
        return asked
    current = request
    for attempt in range(1, MAX_REASKS + 2):
        if current.options is None:     # only when set, so judges without the keyword still work
            reply = await judge.complete(current.messages, json_schema=current.json_schema,
                                         schema_name=current.schema_name, cache_tag=current.cache_tag)
        else:
            reply = await judge.complete(current.messages, json_schema=current.json_schema,
                                         schema_name=current.schema_name, cache_tag=current.cache_tag,
                                         options=current.options)
        asked.usage = asked.usage + usage_of(reply)
        asked.attempts = attempt
        asked.requests.append(current)
        if reply.error:
            # a judge's own kind name passes through as before (the Reply protocol types it as str)
            asked.unscored_kind = cast(UnscoredKind, reply.error_kind or "error")
            asked.reason = reply.error
            return asked
        asked.raw = reply.text
        reading = read(reply)
        if reading.ok:
            asked.value, asked.feedback = reading.value, reading.feedback
            asked.unscored_kind = asked.reason = None
            asked.problems = []
            return asked
        problems = reading.problems or ["the reply could not be read"]
        asked.unscored_kind, asked.reason = reading.kind, "; ".join(problems[:5])
        asked.problems, asked.feedback = problems, reading.feedback
        if reask is None or attempt > MAX_REASKS:
            return asked
        current = with_reask(request, reply.text, reask(problems))
    return asked
