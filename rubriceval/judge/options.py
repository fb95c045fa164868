"""Per-call judge options and what comes back with them: token log-probabilities and prompt-cache use.

A yes/no checklist question asks for one short constrained answer with its log-probabilities; the client turns
`CallOptions` into the request body (`max_tokens`, `logprobs`, `top_logprobs`, and the answer constrained to
`choices`) and the reply's `choices[0].logprobs.content` into `TokenLogprob`s. llama.cpp, vLLM and OpenAI return
logprobs in this OpenAI shape; a server that returns none leaves `reply.logprobs` None (the reader falls back
to the label).
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class CallOptions(BaseModel):
    """Options for one judge call; part of the client's cache key."""

    max_tokens: int | None = Field(default=None, ge=1)   # None: the judge config's max_tokens
    logprobs: bool = False
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    choices: list[str] | None = None                      # the answer must be exactly one of these

    def key(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class TokenLogprob(BaseModel):
    """One generated token: its text, its log-probability and the most likely alternatives at that position."""

    token: str
    logprob: float
    top: dict[str, float] = Field(default_factory=dict)   # token text → logprob (the best one kept per text)


def choices_grammar(choices: list[str]) -> str:
    """A GBNF grammar (llama.cpp) that allows exactly one of `choices`."""
    alternatives = " | ".join('"' + c.replace("\\", "\\\\").replace('"', '\\"') + '"' for c in choices)
    return f"root ::= {alternatives}"


def choices_schema(choices: list[str]) -> dict:
    """The JSON schema of a constrained answer: {"answer": one of `choices`}."""
    return {"type": "object", "properties": {"answer": {"type": "string", "enum": list(choices)}},
            "required": ["answer"], "additionalProperties": False}


def read_logprobs(choice: dict) -> list[TokenLogprob] | None:
    """The OpenAI-shaped `choice["logprobs"]["content"]` as TokenLogprobs; None when the server sent none."""
    content = (choice.get("logprobs") or {}).get("content")
    if not isinstance(content, list):
        return None
    tokens: list[TokenLogprob] = []
    for entry in content:
        top: dict[str, float] = {}
        for alt in entry.get("top_logprobs") or []:
            text, value = str(alt.get("token", "")), float(alt.get("logprob", -1e9))
            top[text] = max(value, top.get(text, -1e9))
        tokens.append(TokenLogprob(token=str(entry.get("token", "")), logprob=float(entry.get("logprob", 0.0)),
                                   top=top))
    return tokens


def cached_prompt_tokens(completion: dict) -> int:
    """Prompt tokens the server reused from its prefix cache: OpenAI/vLLM `usage.prompt_tokens_details.
    cached_tokens`, or llama.cpp's `timings` (prompt tokens minus those it processed, `prompt_n`)."""
    usage = completion.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    if details.get("cached_tokens") is not None:
        return int(details["cached_tokens"])
    timings = completion.get("timings") or {}
    if timings.get("prompt_n") is not None and usage.get("prompt_tokens") is not None:
        return max(0, int(usage["prompt_tokens"]) - int(timings["prompt_n"]))
    return 0
