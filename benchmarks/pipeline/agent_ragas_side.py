"""Ragas's agent metrics on the conformance cases; prints one JSON object {key: value | null, "errors": {...}}.

Runs inside benchmarks/pipeline/.venv-ragas-0.4.3 (see ragas_env.py), never in the project venv: it imports only the standard
library and Ragas. Driven by benchmarks/pipeline/agent_conformance.py, which writes the cases and serves the scripted judge:

    benchmarks/pipeline/.venv-ragas-0.4.3/bin/python benchmarks/pipeline/agent_ragas_side.py --cases rows.jsonl --base-url http://127.0.0.1:P/v1

Each case row: {"key", "metric", "mode"?, "strict_order"?, "messages": [{"type": human|ai|tool, "content",
"tool_calls": [{"name", "args"}]}], "reference"?, "reference_tool_calls"?, "reference_topics"?}.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import warnings

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")   # no analytics calls to the internet

from langchain_openai import ChatOpenAI  # noqa: E402
from ragas import __version__ as ragas_version  # noqa: E402
from ragas.dataset_schema import MultiTurnSample  # noqa: E402
from ragas.llms import LangchainLLMWrapper  # noqa: E402
from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage  # noqa: E402
from ragas.metrics import (  # noqa: E402
    AgentGoalAccuracyWithoutReference,
    AgentGoalAccuracyWithReference,
    ToolCallAccuracy,
    ToolCallF1,
    TopicAdherenceScore,
)


def _message(row: dict):
    if row["type"] == "human":
        return HumanMessage(content=row["content"])
    if row["type"] == "tool":
        return ToolMessage(content=row["content"])
    calls = [ToolCall(name=c["name"], args=c["args"]) for c in row.get("tool_calls") or []]
    return AIMessage(content=row["content"], tool_calls=calls or None)


def _sample(case: dict) -> MultiTurnSample:
    return MultiTurnSample(
        user_input=[_message(m) for m in case["messages"]],
        reference=case.get("reference") or None,
        reference_tool_calls=[ToolCall(name=c["name"], args=c["args"]) for c in case.get("reference_tool_calls", [])],
        reference_topics=case.get("reference_topics") or None)


def _metric(case: dict, llm):
    name = case["metric"]
    if name == "tool_call_accuracy":
        return ToolCallAccuracy(strict_order=case.get("strict_order", True))
    if name == "tool_call_f1":
        return ToolCallF1()
    if name == "agent_goal_accuracy":
        return AgentGoalAccuracyWithReference(llm=llm)
    if name == "agent_goal_accuracy_without_reference":
        return AgentGoalAccuracyWithoutReference(llm=llm)
    if name == "topic_adherence":
        return TopicAdherenceScore(llm=llm, mode=case["mode"])
    raise SystemExit(f"unknown metric {name!r}")


async def _score_all(cases: list[dict], llm) -> tuple[dict, dict]:
    values: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    for case in cases:    # one at a time: the stub answers from the case it recognises, order does not matter
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = await _metric(case, llm).multi_turn_ascore(_sample(case))
            value = float(value)
            values[case["key"]] = None if math.isnan(value) else value
        except Exception as exc:  # noqa: BLE001 — reported per case; the orchestrator refuses to write on errors
            values[case["key"]] = None
            errors[case["key"]] = f"{type(exc).__name__}: {exc}"[:300]
    return values, errors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", required=True)
    parser.add_argument("--base-url", required=True)
    args = parser.parse_args()
    with open(args.cases, encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    chat = ChatOpenAI(model="stub", base_url=args.base_url, api_key="not-needed", temperature=0, max_retries=0,
                      timeout=60)
    values, errors = asyncio.run(_score_all(cases, LangchainLLMWrapper(chat)))
    print(json.dumps({"ragas_version": ragas_version, "values": values, "errors": errors}, ensure_ascii=False))


if __name__ == "__main__":
    sys.exit(main())
