"""The benchmark stub's answers: plausible, valid JSON for every prompt either side sends.

Ragas 0.2.x does not use `response_format`: each prompt embeds the output model's JSON schema in its text
("…complies with the following schema as specified in JSON Schema:\n{schema}Do not use single quotes…") and ends
with the input as JSON ("input: {…}\nOutput: "). We read both, recognise the prompt by the schema's `title`
(the pydantic output model) and answer what a diligent judge would, so every Ragas metric yields a number.

Our side sends `response_format.json_schema`; the statement extraction and reverse-question calls get the same
content Ragas gets (the sentences of the text, one question per answer), everything else a schema instance with
the same reason sentences. Same inputs → same outputs on both sides, so token counts compare like for like.

An unrecognised Ragas-style prompt raises: the stub turns that into an HTTP 500 and lists it in
`stats.errors`, and the benchmark refuses to report numbers from such a run.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from typing import Any

from rubriceval.testing import instance_for_schema

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)\s+")
_BLOCK = re.compile(r"<<<([^<>\n]+)>>>\n(.*?)\n<<<END \1>>>", re.S)
_SCHEMA_MARK = "as specified in JSON Schema:\n"
_RAGAS_INPUT = re.compile(r"\ninput: (\{.*\})\nOutput: ?$", re.S)

SUPPORTED_SHARE = 0.7   # share of statements/contexts judged supported/relevant (deterministic per text)
REASON_YES = "参考资料中有明确的相关说明，可以直接推出这一点。"
REASON_NO = "参考资料中没有提到这一点，无法直接推出。"


class UnrecognisedPrompt(ValueError):
    """A chat request this responder does not know how to answer correctly."""


def sentences(text: str) -> list[str]:
    """The text's sentences: what a judge returns as its atomic statements, on both sides."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def verdict_for(*parts: str) -> bool:
    """A stable pseudo-random yes/no for an item (statement, context …), ~SUPPORTED_SHARE yes."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2 ** 64 < SUPPORTED_SHARE


def reason_for(verdict: bool) -> str:
    return REASON_YES if verdict else REASON_NO


def question_for(answer: str, index: int = 0) -> str:
    """A question the answer would answer: built from its first sentence, varied by `index`."""
    first = (sentences(answer) or [answer])[0].rstrip("。！？!?；;.，, ")
    first = re.sub(r"^(您好|亲|非常抱歉让您久等了)[，,！!]?", "", first)[:30]
    forms = ("请问{}吗？", "{}是怎么回事？", "关于“{}”，具体怎么处理？", "能说明一下{}吗？", "{}的规定是什么？")
    return forms[index % len(forms)].format(first)


# ----------------------------------------------------------------------------------------------------------------
# Ragas 0.2.x prompts, keyed by the title of the output schema embedded in the prompt
# ----------------------------------------------------------------------------------------------------------------

def _statements(inp: dict) -> dict:
    return {"statements": sentences(inp["answer"])}


def _nli(inp: dict) -> dict:
    return {"statements": [{"statement": s, "reason": reason_for(v), "verdict": int(v)}
                           for s in inp["statements"] for v in [verdict_for("supported", s)]]}


def _correctness(inp: dict) -> dict:
    tp, fp, fn = [], [], []
    for s in inp["answer"]:
        (tp if verdict_for("in_ground_truth", s) else fp).append(s)
    for s in inp["ground_truth"]:
        if not verdict_for("in_answer", s):
            fn.append(s)
    item = lambda s, yes: {"statement": s, "reason": reason_for(yes)}  # noqa: E731
    return {"TP": [item(s, True) for s in tp], "FP": [item(s, False) for s in fp],
            "FN": [item(s, False) for s in fn]}


def _verification(inp: dict) -> dict:
    yes = verdict_for("relevant", inp["context"])
    return {"reason": reason_for(yes), "verdict": int(yes)}


def _recall(inp: dict) -> dict:
    return {"classifications": [{"statement": s, "reason": reason_for(v), "attributed": int(v)}
                                for s in sentences(inp["answer"]) for v in [verdict_for("attributed", s)]]}


def _reverse(inp: dict) -> dict:
    return {"question": question_for(inp["response"]), "noncommittal": 0}


RAGAS_ANSWERS: dict[str, Callable[[dict], dict]] = {
    "StatementGeneratorOutput": _statements,        # faithfulness, answer_correctness
    "NLIStatementOutput": _nli,                     # faithfulness
    "ClassificationWithReason": _correctness,       # answer_correctness
    "Verification": _verification,                  # context_precision (one call per context)
    "ContextRecallClassifications": _recall,        # context_recall
    "ResponseRelevanceOutput": _reverse,            # answer_relevancy (strictness calls)
}

# Which metric(s) send each Ragas prompt; used to attribute calls and tokens per metric.
RAGAS_PROMPT_METRICS: dict[str, tuple[str, ...]] = {
    "StatementGeneratorOutput": ("faithfulness", "answer_correctness"),
    "NLIStatementOutput": ("faithfulness",),
    "ClassificationWithReason": ("answer_correctness",),
    "Verification": ("context_precision",),
    "ContextRecallClassifications": ("context_recall",),
    "ResponseRelevanceOutput": ("answer_relevancy",),
    "StringIO": ("output_fix",),                    # Ragas's "fix the output format" re-ask (should be 0)
}


def ragas_prompt_parts(prompt: str) -> tuple[str, dict] | None:
    """(output schema title, input) of a Ragas PydanticPrompt, or None when the text is not one."""
    at = prompt.find(_SCHEMA_MARK)
    match = _RAGAS_INPUT.search(prompt)
    if at < 0 or match is None:
        return None
    schema, _ = json.JSONDecoder().raw_decode(prompt[at + len(_SCHEMA_MARK):])
    return str(schema.get("title", "")), json.loads(match.group(1))


# ----------------------------------------------------------------------------------------------------------------
# Our side: response_format json_schema
# ----------------------------------------------------------------------------------------------------------------

def _blocks(text: str) -> dict[str, str]:
    """The last fenced block per label (the examples come first, the input to judge last)."""
    return {label: body for label, body in _BLOCK.findall(text)}


def _first(blocks: dict[str, str], *labels: str) -> str:
    for label in labels:
        if label in blocks:
            return blocks[label]
    raise UnrecognisedPrompt(f"no block labelled {' / '.join(labels)} in the prompt")


def _with_reasons(value: Any) -> Any:
    """A schema instance whose reasons read like a judge's, matching the verdict next to them."""
    if isinstance(value, dict):
        out = {k: _with_reasons(v) for k, v in value.items()}
        if "reason" in out:
            verdict = next((v for k, v in out.items() if k != "reason" and isinstance(v, bool)), True)
            out["reason"] = reason_for(verdict)
        return out
    if isinstance(value, list):
        return [_with_reasons(v) for v in value]
    return value


def _ours(body: dict, prompt: str) -> dict:
    json_schema = body["response_format"].get("json_schema") or {}
    schema, name = json_schema.get("schema") or {}, json_schema.get("name", "")
    rng = random.Random(hashlib.sha256((name + prompt).encode("utf-8")).hexdigest())
    if name == "extract_statements":
        blocks = _blocks(prompt)
        props = schema.get("properties", {})
        out: dict[str, list[str]] = {}
        if "answer_statements" in props:
            out["answer_statements"] = sentences(_first(blocks, "回答", "ANSWER"))
        if "ground_truth_statements" in props:
            out["ground_truth_statements"] = sentences(_first(blocks, "标准答案", "REFERENCE"))
        return out
    if name == "reverse_questions":
        answer = _first(_blocks(prompt), "回答", "ANSWER")
        keys = list(schema["properties"]["questions"]["properties"])
        return {"questions": {k: question_for(answer, i) for i, k in enumerate(keys)}, "noncommittal": False}
    instance = instance_for_schema(schema, rng, language="zh" if re.search(r"[\u4e00-\u9fff]", prompt) else "en")
    return _with_reasons(instance)


# ----------------------------------------------------------------------------------------------------------------

def prompt_text(body: dict) -> str:
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "\n".join(parts)


def classify(body: dict) -> tuple[str, str]:
    """("ragas", output title) or ("ours", schema name) — who sent this chat request and which prompt it is."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return "ours", (response_format.get("json_schema") or {}).get("name", "")
    parts = ragas_prompt_parts(prompt_text(body))
    if parts is None:
        return "unknown", ""
    return "ragas", parts[0]


def respond(body: dict) -> dict:
    """The StubServer responder: a JSON object for every request either side sends (raises when unknown)."""
    prompt = prompt_text(body)
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return _ours(body, prompt)
    parts = ragas_prompt_parts(prompt)
    if parts is None:
        raise UnrecognisedPrompt(f"neither a json_schema request nor a Ragas prompt: {prompt[:120]!r}")
    title, inp = parts
    if title not in RAGAS_ANSWERS:
        raise UnrecognisedPrompt(f"Ragas prompt with output {title!r} is not one the benchmark expects")
    return RAGAS_ANSWERS[title](inp)
