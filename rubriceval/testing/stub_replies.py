"""The stub's HTTP replies: OpenAI-shaped answers and errors, and what each injected fault looks like on the wire."""
from __future__ import annotations

import base64
import json
import random
import re
import struct
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.testing.schema_instance import SchemaError, instance_for_schema
from rubriceval.testing.stub_content import CJK, embedding_for, message_text, prompt_token_count, rough_token_count
from rubriceval.testing.stub_logprobs import cached_prefix_tokens, constrained_content

Responder = Callable[[dict], "str | dict"]

NAMED_FAULTS = ("ok", "timeout", "disconnect", "malformed", "html", "no_choices", "truncated", "garbage")
# What `--fault-rate R` spreads evenly over when no explicit `--faults` mix is given.
DEFAULT_FAULT_MIX = ("429", "500", "timeout", "malformed", "truncated", "garbage")
DEFAULT_TEXT = "Feedback: stub feedback [RESULT] 3"
_HTTP_ERROR = re.compile(r"[45]\d\d")
_WITH_RETRY_AFTER = {"429", "503"}


def check_fault(kind: str) -> str:
    """The fault name itself, or ValueError — a typo in a test script must not silently mean "ok"."""
    if kind in NAMED_FAULTS or _HTTP_ERROR.fullmatch(kind):
        return kind
    raise ValueError(f"unknown fault {kind!r}; use one of {', '.join(NAMED_FAULTS)} or an HTTP status 400–599")


class Reply(BaseModel):
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = Field(default_factory=dict)
    drop_connection: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0


def json_reply(payload: dict, status: int = 200, headers: dict[str, str] | None = None, *, prompt_tokens: int = 0,
               completion_tokens: int = 0) -> Reply:
    return Reply(status=status, body=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                 headers=headers or {}, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
             404: "not_found_error", 429: "rate_limit_exceeded"}
    error = {"message": message, "type": kinds.get(status, "server_error"), "param": None, "code": str(status)}
    return json_reply({"error": error}, status=status, headers=headers)


def fault_reply(fault: str, retry_after_s: float | None) -> Reply | None:
    """Replies for faults that do not depend on the endpoint; None for ok and content faults."""
    if _HTTP_ERROR.fullmatch(fault):
        headers = {}
        if fault in _WITH_RETRY_AFTER and retry_after_s is not None:
            headers["Retry-After"] = f"{retry_after_s:g}"
        return error_reply(int(fault), f"stub injected HTTP {fault}", headers)
    if fault == "disconnect":
        return Reply(drop_connection=True)
    if fault == "malformed":
        return Reply(body=b'{"id": "chatcmpl-stub", "choices": [{"index": 0, "message": {"role": "assis')
    if fault == "html":
        return Reply(body=b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html")
    return None

def chat_reply(body: dict, fault: str, digest: str, seq: int, *, seed: int, responder: Responder | None,
               default_text: str, previous_prompt: str = "") -> Reply:
    """`previous_prompt`: the last chat prompt this server answered (its prefix counts as cached tokens)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return error_reply(400, "'messages' must be a non-empty array")
    if not body.get("model"):
        return error_reply(400, "'model' is required")
    if body.get("stream"):
        return error_reply(400, "the stub server does not stream")
    if fault == "no_choices":
        return json_reply({"id": f"chatcmpl-stub-{seq}", "object": "chat.completion", "model": body["model"]})
    # Like a real model: greedy decoding gives one answer per prompt; sampling (temperature > 0) differs by seed.
    sampled = isinstance(body.get("temperature"), (int, float)) and body["temperature"] > 0
    rng = random.Random(f"{seed}:{digest}" + (f":seed={body.get('seed')}" if sampled else ""))
    try:
        content = _content_for(body, rng, responder, default_text)
    except SchemaError as exc:
        return error_reply(400, f"invalid response_format schema: {exc}")
    content, logprobs = constrained_content(body, content, rng)      # grammar choices; logprobs when asked
    finish_reason = "stop"
    if fault == "truncated":
        content, finish_reason = content[: max(1, len(content) // 2)], "length"
    elif fault == "garbage":
        noise = ["lorem", "ipsum", "▒▒▒", "<|im_end|>", "asdf", "#####", "乱码", "ÿþ", "...", "qwerty", "锟斤拷"]
        content = " ".join(rng.choice(noise) for _ in range(12))
    prompt_tokens = prompt_token_count(messages)
    completion_tokens = rough_token_count(content)
    payload = {
        "id": f"chatcmpl-stub-{seq}", "object": "chat.completion", "created": int(time.time()),
        "model": body["model"], "system_fingerprint": "stub",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                     "finish_reason": finish_reason, "logprobs": logprobs}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": cached_prefix_tokens(previous_prompt,
                                                                                  prompt_text(messages))}},
    }
    return json_reply(payload, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

def prompt_text(messages: list) -> str:
    """The chat prompt as one string (for the prefix-cache count)."""
    return "\x00".join(message_text(m.get("content")) for m in messages if isinstance(m, dict))


# Statement extraction (standard_metrics): the metrics keep only statements found in their own text (grounding
# check), so made-up strings would leave every metric unscored. Like a model that copies sentences, the stub answers
# with the sentences of the text the prompt shows last under that label (the task's text, after the example's).
STATEMENT_BLOCKS = {"answer_statements": ("回答", "ANSWER"), "ground_truth_statements": ("标准答案", "REFERENCE")}
SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")


def grounded_statements(data: Any, prompt: str) -> Any:
    if not isinstance(data, dict):
        return data
    for key, labels in STATEMENT_BLOCKS.items():
        if key not in data:
            continue
        blocks = [m.group(1) for label in labels
                  for m in re.finditer(rf"<<<{label}>>>\n(.*?)\n<<<END {label}>>>", prompt, re.S)]
        if blocks:
            sentences = [s.strip() for s in SENTENCE_END.split(blocks[-1]) if len(s.strip()) >= 2]
            data[key] = sentences[:8]
    return data


def _content_for(body: dict, rng: random.Random, responder: Responder | None, default_text: str) -> str:
    if responder is not None:
        answer = responder(body)
        if isinstance(answer, dict):
            return json.dumps(answer, ensure_ascii=False)
        if isinstance(answer, str):
            return answer
        raise TypeError(f"responder must return str or dict, got {type(answer).__name__}")
    response_format = body.get("response_format") or {}
    prompt = " ".join(message_text(m.get("content")) for m in body["messages"] if isinstance(m, dict))
    language = "zh" if CJK.search(prompt) else "en"
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema") or {}
        return json.dumps(grounded_statements(instance_for_schema(schema, rng, language=language), prompt),
                          ensure_ascii=False)
    if response_format.get("type") == "json_object":
        return json.dumps({"feedback": "stub feedback", "score": 3})
    return default_text

def embeddings_reply(body: dict, fault: str, embedding_dim: int) -> Reply:
    raw = body.get("input")
    if isinstance(raw, str):
        texts = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, int) for x in raw):
        texts = [" ".join(map(str, raw))]          # one input given as token ids
    elif isinstance(raw, list) and raw:
        texts = [x if isinstance(x, str) else " ".join(map(str, x)) for x in raw]
    else:
        return error_reply(400, "'input' must be a non-empty string or array")
    if not body.get("model"):
        return error_reply(400, "'model' is required")
    if fault == "no_choices":
        return json_reply({"object": "list", "model": body["model"]})
    dim = int(body.get("dimensions") or embedding_dim)
    vectors = [embedding_for(text, dim) for text in texts]
    if fault == "truncated":
        vectors = vectors[: len(vectors) // 2]
    elif fault == "garbage":
        vectors = [v[: max(1, dim // 2)] for v in vectors]
    as_base64 = body.get("encoding_format") == "base64"   # the OpenAI SDK asks for base64 by default
    data = [{"object": "embedding", "index": i,
             "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if as_base64 else v}
            for i, v in enumerate(vectors)]
    tokens = sum(rough_token_count(t) for t in texts)
    return json_reply({"object": "list", "data": data, "model": body["model"],
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}, prompt_tokens=tokens)

# -- out-of-process control ---------------------------------------------------------------------------------
