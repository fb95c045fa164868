"""The chatbot under test ("target"): a Python callable, an HTTP endpoint, or an OpenAI-compatible chat endpoint.

CLI strings (`parse_target`):
- ``path/to/file.py:function`` (works from any folder) or ``package.module:function`` (imported the way
  ``python -m`` would, with the current directory on ``sys.path``, so run from the folder holding the package) — a
  Python callable (sync or async) taking the question string. It returns a dict ``{"answer": str, "contexts": [str,
  ...], "metadata": {...}}`` (contexts and metadata optional; metadata is kept in the row's metadata), an object with
  ``answer``, ``contexts`` (and ``metadata``) attributes, or just the answer string (then contexts are empty). A
  file target's folder is put first on ``sys.path``, so the file imports the modules beside it. Contexts may also be objects or
  dicts with ``page_content`` / ``text`` / ``content`` (LangChain/LlamaIndex documents). Sync callables run in
  worker threads, so set concurrency 1 if yours is not thread-safe.
- ``http://host:port/path`` or ``https://…`` — the HTTP contract:

      POST <url>   Content-Type: application/json
      request:  {"question": "<question text>", "id": "<sample id>"}
      response: 200 with {"answer": "<answer text>", "contexts": ["<retrieved chunk>", ...]}

  ``contexts`` may be omitted (→ []). Any non-2xx status is an error: 408, 429 and 5xx are retried, other 4xx
  are not (retrying cannot fix a bad request). Headers (e.g. auth) can be given in a YAML/JSON target file.
- ``openai:<base_url>[#model]`` — an OpenAI-compatible chat endpoint; the answer is the reply and contexts are
  empty (a plain chat model retrieves nothing). The API key comes from $RUBRICEVAL_TARGET_API_KEY (never stored).
- ``path/to/target.yaml`` or ``.json`` — any of the above with all fields, e.g.
  ``{kind: http, url: ..., headers: {Authorization: Bearer ...}}``.

Conversations (`rubriceval.collect.conversations`): each user turn is one `ask` with the turns before it as
``history`` — OpenAI-style ``[{"role": "user"|"assistant", "content": ...}]``. A callable receives it when it has
a ``history`` parameter (and the conversation's id when it has a ``conversation_id`` parameter); without them it
answers every turn on its own. The HTTP request adds ``"history"`` and ``"conversation_id"`` (``id`` is then
``<conversation id>#<turn>``); the OpenAI chat target sends the history as its messages. Any target may also
return ``"tool_calls": [{"name": ..., "arguments": {...}, "result": "<what the tool returned>"}]`` (OpenAI's
``{"function": {"name", "arguments": "<JSON>"}}`` form too); they are stored on the assistant turn, and a call's
``result`` as a tool turn before the answer.
"""
from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import httpx
import yaml
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from rubriceval.common.errors import ConfigError
from rubriceval.data.conversation import ToolCall

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam


class TargetToolCall(ToolCall):
    """A tool call the bot reports, with what the tool returned when it says so."""

    result: str | None = None


class TargetReply(BaseModel):
    answer: str
    contexts: list[str] = Field(default_factory=list)
    tool_calls: list[TargetToolCall] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)    # e.g. model version, retrieval scores: kept on the row


History = list[dict[str, str]]   # earlier turns of a conversation, OpenAI-style {"role", "content"}


class TargetContractError(Exception):
    """The target answered, but not in the agreed shape. Deterministic, so never retried."""


class TransientTargetError(Exception):
    """A failure worth retrying (HTTP 5xx/429, connection refused)."""


class CallableTarget(BaseModel):
    kind: Literal["callable"] = "callable"
    ref: str                                  # "package.module:function" or "path/to/file.py:function"

    def describe(self) -> str:
        return f"callable {self.ref}"


class HttpTarget(BaseModel):
    kind: Literal["http"] = "http"
    url: str
    headers: dict[str, str] = Field(default_factory=dict)

    def describe(self) -> str:
        return f"http {self.url}"


class OpenAIChatTarget(BaseModel):
    kind: Literal["openai"] = "openai"
    base_url: str
    model: str = "default"
    system_prompt: str = ""
    temperature: float = 0.0
    max_tokens: int = 512
    api_key_env: str = "RUBRICEVAL_TARGET_API_KEY"   # the key itself is never part of the config or the output

    def describe(self) -> str:
        return f"openai-chat {self.model} at {self.base_url}"


TargetConfig = Annotated[CallableTarget | HttpTarget | OpenAIChatTarget, Field(discriminator="kind")]
_TARGET_ADAPTER: TypeAdapter = TypeAdapter(TargetConfig)


def parse_target(spec: str) -> CallableTarget | HttpTarget | OpenAIChatTarget:
    """Turn a CLI string into a target config (see the module docstring for the forms)."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("empty target", field="target", hint="e.g. examples/rag_target/bot.py:answer")
    lowered = spec.lower()
    if lowered.startswith(("http://", "https://")):
        return HttpTarget(url=spec)
    if lowered.startswith("openai:"):
        base_url, _, model = spec[len("openai:"):].partition("#")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"'{spec}' needs a base URL after 'openai:'", field="target",
                              hint="e.g. openai:http://127.0.0.1:8080/v1#qwen-plus")
        return OpenAIChatTarget(base_url=base_url, model=model or "default")
    if lowered.endswith((".yaml", ".yml", ".json")):
        return _load_target_file(Path(spec))
    module, sep, function = spec.rpartition(":")
    if not sep or not module or not function.isidentifier():
        raise ConfigError(f"cannot read target '{spec}'", field="target",
                          hint="use path/to/file.py:function, package.module:function, http(s)://url, "
                               "openai:<base_url>#model or a target .yaml file")
    return CallableTarget(ref=spec)


def _load_target_file(path: Path) -> CallableTarget | HttpTarget | OpenAIChatTarget:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))   # YAML is a superset of JSON
    except FileNotFoundError:
        raise ConfigError("target file not found", file=str(path)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML/JSON: {exc}", file=str(path)) from None
    if isinstance(data, dict) and isinstance(data.get("target"), dict):
        data = data["target"]
    try:
        return _TARGET_ADAPTER.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(err["msg"], file=str(path), field=".".join(map(str, err["loc"])),
                          hint="kind must be callable, http or openai") from None


class TargetRunner(ABC):
    """A live connection to a target; `ask` raises on failure, the collector handles retries and timeouts."""

    description: str

    @abstractmethod
    async def ask(self, question: str, sample_id: str, *, history: History | None = None,
                  conversation_id: str | None = None) -> TargetReply: ...

    async def aclose(self) -> None:
        return None


def _context_text(item: Any, position: int) -> str:
    if isinstance(item, str):
        return item
    for attribute in ("page_content", "text", "content"):
        value = item.get(attribute) if isinstance(item, dict) else getattr(item, attribute, None)
        if isinstance(value, str):
            return value
    raise TargetContractError(f"contexts[{position}] is a {type(item).__name__}; expected a string or an object "
                              "with page_content/text/content")


def _tool_calls(value: Any) -> list[TargetToolCall]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise TargetContractError(f"'tool_calls' must be a list, got {type(value).__name__}")
    try:
        return [TargetToolCall.model_validate(c) for c in value]
    except ValidationError as exc:
        err = exc.errors()[0]
        raise TargetContractError(f"tool_calls{list(err['loc'])}: {err['msg']}") from None


def coerce_reply(value: Any) -> TargetReply:
    """Accept a str, a dict or an object with answer/contexts(/tool_calls); raise TargetContractError otherwise."""
    if isinstance(value, str):
        return TargetReply(answer=value)
    if isinstance(value, dict):
        answer, contexts = value.get("answer"), value.get("contexts")
        calls, metadata = value.get("tool_calls"), value.get("metadata")
    elif hasattr(value, "answer"):
        answer, contexts = value.answer, getattr(value, "contexts", None)
        calls, metadata = getattr(value, "tool_calls", None), getattr(value, "metadata", None)
    else:
        raise TargetContractError(f"the target returned a {type(value).__name__}; expected a str, a dict with "
                                  "'answer' and 'contexts', or an object with those attributes")
    if not isinstance(answer, str):
        raise TargetContractError(f"'answer' must be a string, got {type(answer).__name__}")
    if contexts is None:
        contexts = []
    if isinstance(contexts, str) or not isinstance(contexts, (list, tuple)):
        raise TargetContractError(f"'contexts' must be a list, got {type(contexts).__name__}")
    if metadata is not None and not isinstance(metadata, dict):
        raise TargetContractError(f"'metadata' must be a dict, got {type(metadata).__name__}")
    return TargetReply(answer=answer, contexts=[_context_text(c, i) for i, c in enumerate(contexts)],
                       tool_calls=_tool_calls(calls), metadata=metadata or {})


def _load_file(path: Path) -> Any:
    """A target file run as `python path/to/bot.py` would: its own folder first on sys.path, so it imports its
    sibling modules (`import kb` beside bot.py)."""
    if not path.is_file():
        raise ConfigError("target file not found", file=str(path), field="target")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f"_rubriceval_target_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise ConfigError(f"importing the target file failed: {exc}", file=str(path), field="target",
                          hint=f"its folder ({folder}) is on sys.path, so modules beside it import; anything else "
                               "it imports must be installed in this environment or on PYTHONPATH") from None
    return module


def load_callable(ref: str) -> Callable[..., Any]:
    module_name, _, function_name = ref.rpartition(":")
    if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
        module = _load_file(Path(module_name))
    else:
        module = _import_module(module_name, function_name)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ConfigError(f"'{module_name}' has no callable '{function_name}'", field="target")
    return function


def _import_module(module_name: str, function_name: str) -> Any:
    try:
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(module_name)
    except ImportError as exc:
        as_file = module_name.replace(".", "/") + ".py"
        raise ConfigError(f"cannot import '{module_name}' from {os.getcwd()}: {exc}", field="target",
                          hint=f"give the file instead, e.g. {as_file}:{function_name} (works from any folder), or "
                               "run from the folder that contains the package") from None


class _CallableRunner(TargetRunner):
    def __init__(self, function: Callable[..., Any], description: str):
        self.description = description
        self._function = function
        self._is_async = inspect.iscoroutinefunction(function)
        try:
            self._parameters = set(inspect.signature(function).parameters)
        except (TypeError, ValueError):   # some builtins and C callables have no signature
            self._parameters = set()

    async def ask(self, question: str, sample_id: str, *, history: History | None = None,
                  conversation_id: str | None = None) -> TargetReply:
        extra: dict[str, Any] = {}
        if history is not None and "history" in self._parameters:
            extra["history"] = history
        if conversation_id is not None and "conversation_id" in self._parameters:
            extra["conversation_id"] = conversation_id
        if self._is_async:
            value = await self._function(question, **extra)
        else:
            # A timed-out sync call keeps its thread until it returns; Python cannot kill a thread.
            value = await asyncio.to_thread(self._function, question, **extra)
            if inspect.isawaitable(value):   # e.g. an object whose __call__ is async
                value = await value
        return coerce_reply(value)


class _HttpRunner(TargetRunner):
    def __init__(self, config: HttpTarget):
        self.description = config.describe()
        self._url = config.url
        # The collector enforces the per-call timeout; httpx's own is a backstop against hung sockets.
        self._client = httpx.AsyncClient(headers=config.headers, timeout=httpx.Timeout(600.0))

    async def ask(self, question: str, sample_id: str, *, history: History | None = None,
                  conversation_id: str | None = None) -> TargetReply:
        body: dict[str, Any] = {"question": question, "id": sample_id}
        if history is not None:
            body.update(history=history, conversation_id=conversation_id)
        try:
            response = await self._client.post(self._url, json=body)
        except httpx.TransportError as exc:
            raise TransientTargetError(f"connection error: {type(exc).__name__}: {exc}") from None
        if response.status_code in (408, 429) or response.status_code >= 500:
            raise TransientTargetError(f"HTTP {response.status_code}: {response.text[:200]}")
        if response.status_code >= 300:
            raise TargetContractError(f"HTTP {response.status_code}: {response.text[:200]}")
        try:
            body = response.json()
        except json.JSONDecodeError:
            raise TargetContractError(f"the response is not JSON: {response.text[:200]!r}") from None
        if not isinstance(body, dict):
            raise TargetContractError(f"the response must be a JSON object, got {type(body).__name__}")
        return coerce_reply(body)

    async def aclose(self) -> None:
        await self._client.aclose()


class _OpenAIChatRunner(TargetRunner):
    def __init__(self, config: OpenAIChatTarget):
        import openai  # imported here: only this target needs it

        self.description = config.describe()
        self._config = config
        self._openai = openai
        self._client = openai.AsyncOpenAI(base_url=config.base_url,
                                          api_key=os.environ.get(config.api_key_env) or "not-needed",
                                          timeout=600.0, max_retries=0)

    async def ask(self, question: str, sample_id: str, *, history: History | None = None,
                  conversation_id: str | None = None) -> TargetReply:
        # plain role/content dicts (and the caller's history, as the bot's API takes it) are the SDK's message params
        messages = cast("list[ChatCompletionMessageParam]",
                        ([{"role": "system", "content": self._config.system_prompt}] if self._config.system_prompt
                         else []) + list(history or []) + [{"role": "user", "content": question}])
        try:
            completion = await self._client.chat.completions.create(
                model=self._config.model, messages=messages, temperature=self._config.temperature,
                max_tokens=self._config.max_tokens)
        except (self._openai.APIConnectionError, self._openai.RateLimitError, self._openai.InternalServerError) as exc:
            raise TransientTargetError(f"{type(exc).__name__}: {exc}") from None
        except self._openai.APIStatusError as exc:
            raise TargetContractError(f"HTTP {exc.status_code}: {str(exc)[:200]}") from None
        return TargetReply(answer=completion.choices[0].message.content or "")

    async def aclose(self) -> None:
        await self._client.close()


AnyTarget = CallableTarget | HttpTarget | OpenAIChatTarget | TargetRunner | Callable[..., Any] | str


def open_target(target: AnyTarget) -> TargetRunner:
    """A runner for a target: a config, a CLI string (parse_target), a ready TargetRunner, or a Python function."""
    if isinstance(target, TargetRunner):
        return target
    if isinstance(target, str):
        target = parse_target(target)
    if isinstance(target, CallableTarget):
        return _CallableRunner(load_callable(target.ref), target.describe())
    if isinstance(target, HttpTarget):
        return _HttpRunner(target)
    if isinstance(target, OpenAIChatTarget):
        return _OpenAIChatRunner(target)
    if callable(target):
        name = f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', type(target).__name__)}"
        return _CallableRunner(target, f"callable {name}")
    raise TypeError(f"not a target: {target!r}")
