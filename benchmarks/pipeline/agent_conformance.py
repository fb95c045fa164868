"""Ragas's values of the agent metrics on the inputs ours sees → tests/fixtures/reference/agent_metrics.jsonl

    .venv/bin/python benchmarks/pipeline/agent_conformance.py            # creates benchmarks/pipeline/.venv-ragas-0.4.3 once (pip)

Deterministic metrics (tool_call_accuracy in both orders, tool_call_f1): Ragas scores the cases directly. Judged
metrics (agent_goal_accuracy with/without reference, topic_adherence in its three modes): both sides ask the
loopback stub server (rubriceval/testing/stub_server.py), which answers every prompt from the case's scripted
judgments (`agent_cases.py`) — Ragas's prompts (recognised by their output schema's title, as benchmarks/pipeline/responder.py
does) and ours (by schema name) — so both see the same judgments and the final formula values can be compared.
Our side runs the real judge path (JudgeClient over HTTP, no cache).

Every row records Ragas's value and ours. A row where they differ must declare the difference (a deliberate
one, documented in standard_metrics/README.md); an undeclared difference, a declared one that no longer
shows, or any Ragas error stops the script before anything is written. Each row also stores the structured
answers our judge calls got, so tests/standard_metrics/test_agent_metrics.py replays them with the scripted judge — the tests
need neither Ragas nor a server.
"""
from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.pipeline.agent_cases import (  # noqa: E402
    GOAL_CASES,
    TOOL_CASES,
    TOPIC_CASES,
    TOPIC_MODES,
    Case,
    our_answers,
    ragas_answer,
)
from benchmarks.pipeline.ragas_env import ensure_ragas_env  # noqa: E402
from benchmarks.pipeline.responder import prompt_text, ragas_prompt_parts  # noqa: E402
from rubriceval import Conversation, JudgeConfig  # noqa: E402
from rubriceval.judge.client import JudgeClient  # noqa: E402
from rubriceval.standard_metrics.conversation import score_conversation  # noqa: E402
from rubriceval.testing.stub_server import StubServer  # noqa: E402

RAGAS_VERSION = "0.4.3"
OUT = REPO / "tests" / "fixtures" / "reference" / "agent_metrics.jsonl"
# Ragas rounds tool_call_f1 to 4 decimals and pads topic_adherence's denominators with 1e-10.
TOLERANCE = {"tool_call_f1": 5e-5, "topic_adherence": 1e-9}


def _ragas_messages(case: Case) -> list[dict]:
    kinds = {"user": "human", "assistant": "ai", "tool": "tool"}
    return [{"type": kinds[t["role"]], "content": t.get("content", ""),
             "tool_calls": [{"name": c["name"], "args": c["arguments"]} for c in t.get("tool_calls", [])]}
            for t in case.turns]


def _runs() -> list[tuple[Case, str, dict]]:
    """(case, metric, options) for every value to compare."""
    runs: list[tuple[Case, str, dict]] = []
    for case in TOOL_CASES:
        runs += [(case, "tool_call_accuracy", {"strict_order": True}),
                 (case, "tool_call_accuracy", {"strict_order": False}), (case, "tool_call_f1", {})]
    for case in GOAL_CASES:
        runs += [(case, "agent_goal_accuracy", {}), (case, "agent_goal_accuracy_without_reference", {})]
    for case in TOPIC_CASES:
        runs += [(case, "topic_adherence", {"topic_mode": mode}) for mode in TOPIC_MODES]
    return runs


def _key(case: Case, metric: str, options: dict) -> str:
    return "|".join([case.id, metric, *(f"{k}={v}" for k, v in sorted(options.items()))])


def _ragas_case(case: Case, metric: str, options: dict) -> dict:
    return {"key": _key(case, metric, options), "metric": metric, "messages": _ragas_messages(case),
            "reference": case.reference_outcome, "reference_tool_calls": [
                {"name": c["name"], "args": c["arguments"]} for c in case.reference_tool_calls],
            "reference_topics": case.reference_topics, "strict_order": options.get("strict_order", True),
            "mode": options.get("topic_mode", "f1")}


def _case_in(text: str, cases: list[Case]) -> Case:
    found = [c for c in cases if c.matches(text)]
    if len(found) != 1:
        raise ValueError(f"the prompt matches {len(found)} cases: {text[:160]!r}")
    return found[0]


def respond(body: dict) -> dict:
    """The stub's answer to either side, from the scripted judgments of the case the prompt is about."""
    text = prompt_text(body)
    judged = GOAL_CASES + TOPIC_CASES
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        name = response_format["json_schema"]["name"]
        return our_answers(_case_in(text, judged))[name]
    parts = ragas_prompt_parts(text)
    if parts is None:
        raise ValueError(f"neither our call nor a Ragas prompt: {text[:160]!r}")
    title, inp = parts
    return ragas_answer(title, inp, _case_in(json.dumps(inp, ensure_ascii=False), judged))


def _run_ragas(base_url: str, runs: list[tuple[Case, str, dict]]) -> dict[str, float | None]:
    python = ensure_ragas_env(RAGAS_VERSION)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for case, metric, options in runs:
            f.write(json.dumps(_ragas_case(case, metric, options), ensure_ascii=False) + "\n")
    done = subprocess.run([str(python), str(REPO / "benchmarks" / "pipeline" / "agent_ragas_side.py"), "--cases", f.name,
                           "--base-url", base_url], capture_output=True, text=True,
                          env={"RAGAS_DO_NOT_TRACK": "true", "PATH": "/usr/bin:/bin"})
    if done.returncode != 0:
        raise SystemExit(f"the Ragas side failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["errors"]:
        raise SystemExit("Ragas raised on some cases:\n"
                         + "\n".join(f"  {k}: {v}" for k, v in result["errors"].items()))
    if result["ragas_version"] != RAGAS_VERSION:
        raise SystemExit(f"expected ragas {RAGAS_VERSION}, the venv has {result['ragas_version']}")
    return result["values"]


async def _run_ours(base_url: str, runs: list[tuple[Case, str, dict]]) -> dict[str, dict]:
    judge = JudgeClient(JudgeConfig(base_url=base_url, model="stub", cache=False, max_retries=0))
    results: dict[str, dict] = {}
    try:
        for case, metric, options in runs:
            conversation = Conversation.model_validate(case.record())
            verdict = (await score_conversation(conversation, [metric], judge=judge, agent_options=options))[0]
            results[_key(case, metric, options)] = {"score": verdict.score, "unscored_kind": verdict.unscored_kind}
    finally:
        await judge.close()
    return results


def _row(case: Case, metric: str, options: dict, ragas: float | None, ours: dict) -> dict:
    difference = case.differences.get(metric if metric != "tool_call_accuracy" or options.get("strict_order", True)
                                      else "tool_call_accuracy_any_order")
    tolerance = TOLERANCE.get(metric, 1e-12)
    same = (ours["score"] is not None and ragas is not None and math.isclose(ours["score"], ragas, rel_tol=0,
                                                                              abs_tol=tolerance))
    key = _key(case, metric, options)
    if not same and not difference:
        raise SystemExit(f"{key}: ragas {ragas} vs ours {ours} differ and no difference is declared")
    if same and difference:
        raise SystemExit(f"{key}: declared difference {difference!r} but both give {ragas}")
    return dict(id=key, case=case.id, note=case.note, metric=metric, agent_options=options,
               conversation=case.record(), judge_answers=our_answers(case) if case.judged else {},
               ragas={"value": ragas, "version": RAGAS_VERSION}, ours=ours, tolerance=tolerance,
               difference=difference or None)


def main() -> None:
    runs = _runs()
    with StubServer(responder=respond) as stub:
        ragas = _run_ragas(stub.base_url, runs)
        ours = asyncio.run(_run_ours(stub.base_url, runs))
        if stub.stats.errors:
            raise SystemExit("the stub could not answer some prompts:\n" + "\n".join(stub.stats.errors[:10]))
    rows = [_row(case, metric, options, ragas[_key(case, metric, options)], ours[_key(case, metric, options)])
            for case, metric, options in runs]
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    differing = [r for r in rows if r["difference"]]
    print(f"{len(rows)} rows → {OUT.relative_to(REPO)}: {len(rows) - len(differing)} equal to Ragas "
          f"{RAGAS_VERSION}, {len(differing)} declared differences")


if __name__ == "__main__":
    main()
