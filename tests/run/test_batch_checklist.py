"""Checklist rubrics through the Batch API (loopback stub): every yes/no question of every sample goes out in the
first round — not one question per round — and the verdicts (levels, p(yes) per question, feedback) equal those
of the online checklist run, for single-turn and conversation rubrics, rule and fitted weights."""
from __future__ import annotations

import pytest

from rubriceval.data.io import read_dataset
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.evaluate import evaluate
from rubriceval.run.planning import planned_judge_calls
from rubriceval.scoring.judge_mode import with_judge_mode
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_batches import batch_endpoints
from rubriceval.testing.stub_server import StubServer
from tests.batch.test_batch import collect_until_done, comparable, judge_for, start, submitted_digests

SINGLE_TURN = ("datasets/demo_cs_zh.jsonl", ["policy_compliance", "emotional_soothing", "process_compliance"])
CONVERSATIONS = ("datasets/demo_conversations_zh.jsonl", ["closing", "identity_verification"])


@pytest.fixture
def stub(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with StubServer() as server:
        yield server


def _without_judge(result) -> int:
    """Verdicts decided without asking the judge (a manipulation attempt capped before any call)."""
    return sum(1 for v in result.verdicts if not v.usage.calls and not v.usage.cache_hits)


def _question_count(verdicts) -> int:
    return sum(len(item["questions"]) for v in verdicts for item in (v.details.get("checklist") or {}).values())


def judge(stub, tmp_path, cache: str, mode: str):
    """The stub named as the judge the shipped weights were fitted for (`local`) when they are to be used: with any
    other judge a rubric runs its level rule instead (rubriceval/scoring/judge_mode.py)."""
    config = judge_for(stub, tmp_path, cache, judge_mode=mode)
    return config.model_copy(update={"model": "local"}) if mode == "checklist_fitted" else config


@pytest.mark.parametrize("mode", ["checklist", "checklist_fitted"])
@pytest.mark.parametrize("data,only", [SINGLE_TURN, CONVERSATIONS], ids=["single_turn", "conversations"])
def test_all_questions_of_a_sample_in_one_round_with_the_online_verdicts(stub, tmp_path, mode, data, only):
    rubrics = load_rubrics("rubrics", only=only)
    online = evaluate(data, rubrics=rubrics, judge=judge(stub, tmp_path, "online.sqlite", mode),
                      store=tmp_path / "online-runs.sqlite", progress=False)
    online_calls = stub.stats.calls["chat"]
    asked = _question_count(online.verdicts)
    assert asked > len(online.verdicts) > 0          # several questions per verdict: the case that matters

    # The checks' per-turn questions (docs/predicates.md): online, a check stops at its first decisive turn; a batch
    # cannot wait for answers, so round 1 holds every question a check may ask (the dry run's plan, a superset).
    turn_online = sum(len(v.details.get("turn_questions") or []) for v in online.verdicts)
    assert online_calls == asked + turn_online
    planned = sum(1 for call in planned_judge_calls(read_dataset(data), with_judge_mode(
        rubrics, mode, judge_models=[judge(stub, tmp_path, "x.sqlite", mode).model])[0], [],
        judge(stub, tmp_path, "x.sqlite", mode)) if call.cache_tag.startswith("turn_question/"))
    assert planned >= turn_online and (planned > 0) == (data == CONVERSATIONS[0])
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, first = start(stub, tmp_path, store, judge(stub, tmp_path, "batch.sqlite", mode),
                             samples=read_dataset(data), rubrics=rubrics, metrics=[])
    assert first.submitted == asked + planned         # round 1 holds every question of every sample
    report = collect_until_done(batch_run, stub)
    assert report.round == 1 and report.requests.requests == asked + planned
    assert len(submitted_digests(stub)) == asked + planned
    batch_verdicts = store.verdicts(batch_run.run_id)
    assert sum("checklist" in v.details for v in batch_verdicts) == len(online.verdicts) - _without_judge(online)
    assert comparable(batch_verdicts) == comparable(online.verdicts)
    modes = {item["judge_mode"] for v in batch_verdicts for item in (v.details.get("checklist") or {}).values()}
    # The fitted weights ship for single-turn rubrics only; the conversation rubrics run their rule.
    assert ("checklist_fitted" in modes) == (mode == "checklist_fitted" and data == SINGLE_TURN[0])
    batch_run.close()


def test_an_expired_checklist_batch_resubmits_every_unanswered_question_in_the_next_round(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    batch_endpoints(stub).script(["expire_half"])
    rubrics = load_rubrics("rubrics", only=["emotional_soothing"])
    batch_run, first = start(stub, tmp_path, store, judge(stub, tmp_path, "b.sqlite", "checklist"),
                             samples=read_dataset(SINGLE_TURN[0]), rubrics=rubrics, metrics=[])
    report = collect_until_done(batch_run, stub)
    expired = batch_endpoints(stub).batches()[0]
    assert 0 < expired.completed < first.submitted
    assert report.round == 2                       # one more round holds every question the expiry left
    resubmitted = [d for batch in batch_endpoints(stub).batches()[1:] for d in batch.digests]
    assert sorted(resubmitted) == sorted(expired.digests[expired.completed:])     # exactly those, once each
    batch_run.close()
