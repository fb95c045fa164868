"""What a logprobs-returning server (llama.cpp, vLLM, OpenAI) adds to a chat completion, for the stub server.

* A request constrained to a few choices (a llama.cpp GBNF `grammar` of quoted alternatives, or a JSON-schema
  `{"answer": enum}`) is answered with one of them; with `logprobs: true` the answer token carries
  `top_logprobs` where P(answer) : P(other choice) is a seeded probability consistent with the answer (the
  likelier one is the answer, as with greedy decoding), plus a little mass on an unrelated token.
* Any other reply with `logprobs: true` gets one entry per word, each its own only alternative.
* `prompt_tokens_details.cached_tokens`: the tokens of the longest common prefix with the previous chat prompt,
  as a server with one slot and a prefix cache (llama.cpp `cache_prompt`) would reuse.
"""
from __future__ import annotations

import json
import math
import random
import re

from rubriceval.testing.stub_content import rough_token_count

_ALTERNATIVE = re.compile(r'"((?:[^"\\]|\\.)*)"')
_WORD = re.compile(r"\S+")


def grammar_choices(grammar: object) -> list[str]:
    """The quoted alternatives of a one-rule GBNF grammar `root ::= "a" | "b"` (else none)."""
    if not isinstance(grammar, str) or "::=" not in grammar:
        return []
    rule = grammar.split("::=", 1)[1]
    return [c.encode().decode("unicode_escape") for c in _ALTERNATIVE.findall(rule)]


def _schema_choices(body: dict) -> list[str]:
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    answer = (schema.get("properties") or {}).get("answer") or {}
    return [str(c) for c in answer.get("enum") or []]


def _entry(token: str, logprob: float, top: dict[str, float]) -> dict:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top.items()]}


def constrained_content(body: dict, content: str, rng: random.Random) -> tuple[str, dict | None]:
    """(content, choices[0].logprobs) for this request: a grammar's choice replaces the default text."""
    choices = grammar_choices(body.get("grammar"))
    answer = None
    if choices:
        answer = content if content in choices else rng.choice(choices)
        content = answer
    else:
        choices = _schema_choices(body)
        if choices:
            try:
                answer = json.loads(content).get("answer")
            except (ValueError, AttributeError):
                answer = None
    if not body.get("logprobs"):
        return content, None
    if answer in choices and len(choices) >= 2:
        others = [c for c in choices if c != answer]
        p_answer = 0.5 + 0.45 * rng.random()           # the answer is the likelier choice
        top = {answer: math.log(p_answer * 0.95)}
        top.update({c: math.log((1 - p_answer) * 0.95 / len(others)) for c in others})
        top["的"] = math.log(0.05)
        entries = [_entry(answer, top[answer], top)]
        if not grammar_choices(body.get("grammar")):     # JSON: the answer token sits inside the object
            entries = [_entry('{"answer": "', -0.01, {'{"answer": "': -0.01}), *entries, _entry('"}', -0.01, {})]
        return content, {"content": entries}
    return content, {"content": [_entry(w, -0.1, {w: -0.1}) for w in _WORD.findall(content)]}


def cached_prefix_tokens(previous_prompt: str, prompt: str) -> int:
    """Tokens of the longest common prefix of this prompt and the previous one."""
    length = 0
    for a, b in zip(previous_prompt, prompt):
        if a != b:
            break
        length += 1
    return rough_token_count(prompt[:length])
