"""A stored run of the demo conversations judged by a scripted judge, for the tests of the conversation audit view,
reports, compare and gate (and to try the audit app on conversations without running a model).

    run_id = conversation_run("out/runs.sqlite", turn_score=lambda sample_id, turn: 2 if turn >= 4 else 4)

The deterministic checks run for real; the judge's replies come from `turn_score` (scope assistant_turn: one
structured call scoring every judged turn) and `conversation_score` (scope conversation: one score whose feedback
cites a turn, like "第 2 轮 …", so the views can find the cited turn). The checks' per-turn questions
(docs/predicates.md) are answered "no", so their phrases and entities decide.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from rubriceval.data.io import read_dataset
from rubriceval.data.sample import Sample
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.runner import execute
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.testing.scripted_judge import RecordedRequest, ScriptedJudge, yes_no_reply

REPO = Path(__file__).resolve().parents[2]
DEMO_CONVERSATIONS = REPO / "datasets" / "demo_conversations_zh.jsonl"
RUBRICS = REPO / "rubrics"

TurnScore = Callable[[str, int], int]            # (conversation id, assistant turn) → 1–5
ConversationScore = Callable[[str, str], tuple[int, int]]   # (conversation id, rubric id) → (score, cited turn)


def _conversation_id(request: RecordedRequest, ids: list[str], texts: dict[str, str]) -> str:
    """Which conversation a request is about: the one whose first user turn the prompt quotes."""
    prompt = request.messages[-1]["content"]
    return next(cid for cid in ids if texts[cid] in prompt)


def conversation_run(store_path: str | Path, *, turn_score: TurnScore | None = None,
                     conversation_score: ConversationScore | None = None, name: str | None = None,
                     limit: int | None = None, extra: Sequence[Sample] = ()) -> str:
    """Judge the demo conversations (and `extra` conversations, each with a distinct first user turn) with the four
    conversation rubrics into `store_path`; returns the run id."""
    samples = read_dataset(DEMO_CONVERSATIONS)[:limit] + list(extra)
    rubrics = [r for r in load_rubrics(RUBRICS) if r.is_conversation]
    ids = [s.id for s in samples]
    # The first user turn identifies a conversation in its prompt (the demo's are distinct).
    texts = {s.id: s.conversation.turns[0].content for s in samples}
    turn_score = turn_score or (lambda cid, turn: 4)
    conversation_score = conversation_score or (lambda cid, rubric: (4, 2))
    by_tag = {r.id: r for r in rubrics}

    def reply(request: RecordedRequest):
        if request.cache_tag.startswith("turn_question/"):
            return yes_no_reply(0.1)          # checks' per-turn questions: "no", so their phrases/entities decide
        cid = _conversation_id(request, ids, texts)
        if request.schema_name == "turn_verdicts":
            turns = request.json_schema["properties"]["turns"]["items"]["properties"]["turn"]["enum"]
            return {"turns": [{"turn": t, "feedback": f"第 {t} 轮：评分 {turn_score(cid, t)}",
                               "score": turn_score(cid, t)} for t in turns]}
        rubric_id = next(rid for rid in by_tag if request.cache_tag.startswith(f"{rid}/"))
        score, cited = conversation_score(cid, rubric_id)
        return {"feedback": f"第{cited}轮的回复决定了这个分数。", "score": score}

    store = RunStore(store_path)
    try:
        run_id = store.create_run(RunConfig(dataset_path=str(DEMO_CONVERSATIONS)), samples,
                                  [(r.id, "rubric", r.version_tag, r.model_dump(mode="json")) for r in rubrics],
                                  name=name)
        asyncio.run(execute(store, run_id, samples, rubrics, [], judge=ScriptedJudge(reply), progress=False))
        store.set_status(run_id, "complete")
    finally:
        store.close()
    return run_id
