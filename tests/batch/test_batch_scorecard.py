"""Scorecards through the Batch API (issue 25.3, loopback stub): the card's questions — item questions, an
`applies_when.question`, a question shown the knowledge base, a check's per-turn `ask:` predicate — join the rounds
beside the rubrics' calls; after the rubric verdicts are stored the scorecards are scored by replaying the answered
calls, with the same verdicts (totals, deductions, evidence) as online; calls without a reply go to the next round;
a resumed batch run asks nothing it has an answer for."""
from __future__ import annotations

import asyncio

import pytest
import yaml

from rubriceval.batch.rounds import BatchRun, start_batch_run
from rubriceval.data.io import read_dataset
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.evaluate import evaluate
from rubriceval.run.planning import plan_cost
from rubriceval.scorecard.loader import load_scorecards
from rubriceval.store.runs import RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.testing.stub_batches import batch_endpoints
from rubriceval.testing.stub_server import StubServer
from tests.batch.test_batch import body_digest, collect_until_done, comparable, judge_for, start, submitted_digests

DATA = "datasets/demo_conversations_zh.jsonl"
RUBRIC = "identity_verification"
LEAK = "这一轮客服是否说出了订单号、收货地址、金额或物流单号？"
CARD = {
    "id": "batch_card", "name": "批量评分表", "language": "zh", "base": 100,
    "dimensions": [{"id": "服务"}, {"id": "合规"}],
    "items": [
        {"id": "greeting", "dimension": "服务", "points": -3,
         "check": {"type": "max_count", "phrases": ["您好|你好|欢迎"], "min": 1, "max": 100}},
        {"id": "long_turn", "dimension": "服务", "points": -1, "per": "occurrence", "cap": 3,
         "check": {"type": "max_length", "max_chars": 40, "turns": "assistant"}},
        {"id": "resolve", "dimension": "服务", "points": -5, "question": "客服是否给出了明确的处理结果或下一步办法？"},
        {"id": "soothe", "dimension": "服务", "points": -5, "applies_when": {"question": "用户是否表达了不满或着急？"},
         "question": "客服是否表达了理解、歉意或安抚？"},
        {"id": "promise", "dimension": "合规", "points": -10, "applies_when": {"has_contexts": True},
         "question": "客服是否承诺了知识库资料中没有的政策？", "hit_on": "yes", "judge_sees_knowledge": True},
        {"id": "identity", "dimension": "合规", "points": -20, "rubric": {"id": RUBRIC, "min_score": 4}},
        {"id": "leak_turn", "dimension": "合规", "points": -5, "per": "occurrence",
         "applies_when": {"tags": ["身份核验"]},
         "check": {"type": "must_not_mention", "turns": "assistant", "phrases": ["登录密码"], "match": {"ask": LEAK}}},
        {"id": "ask_secret", "dimension": "合规", "fatal": True,
         "check": {"type": "must_not_mention", "turns": "assistant", "phrases": ["登录密码|验证码发给我"]}},
    ],
}


@pytest.fixture
def stub(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with StubServer() as server:
        yield server


@pytest.fixture
def card(tmp_path):
    path = tmp_path / "card.yaml"
    path.write_text(yaml.safe_dump(CARD, allow_unicode=True), encoding="utf-8")
    return load_scorecards(str(path))[0]


def config(stub, tmp_path, cache: str):
    return judge_for(stub, tmp_path, cache, judge_mode="checklist")


def verdict_view(verdicts) -> dict:
    """A scorecard verdict without what it cost (the batch price is not the online one)."""
    return {(v.sample_id, v.scorecard): (v.version, v.totals.model_dump(),
                                         [o.model_dump() for o in v.outcomes]) for v in verdicts}


def online(stub, tmp_path, card):
    result = evaluate(DATA, rubrics=load_rubrics("rubrics", only=[RUBRIC]), scorecards=[card],
                      judge=config(stub, tmp_path, "online.sqlite"), store=tmp_path / "online.sqlite", progress=False)
    return result, ScorecardStore(RunStore(tmp_path / "online.sqlite")).verdicts("latest")


def test_batch_scorecards_equal_the_online_ones_in_one_round(stub, tmp_path, card):
    result, online_cards = online(stub, tmp_path, card)
    online_asked = {body_digest(r.body) for r in stub.stats.requests if r.endpoint == "chat"}
    assert len(online_cards) == 14
    outcomes = [o for v in online_cards for o in v.outcomes]
    # the case that matters: every kind of item decided somewhere, the per-turn question asked
    assert {o.status for o in outcomes} >= {"hit", "clear", "not_applicable"}
    assert any(e.question == LEAK for o in outcomes if o.item == "leak_turn" for e in o.evidence)
    assert {o.status for o in outcomes if o.item == "identity"} & {"hit", "clear"}
    assert any(v.totals.fatal for v in online_cards) and any(p.points < 0 for v in online_cards for p in v.totals.items)

    store = RunStore(tmp_path / "runs.sqlite")
    rubrics = load_rubrics("rubrics", only=[RUBRIC])
    planned = plan_cost(read_dataset(DATA), rubrics, [], config(stub, tmp_path, "plan.sqlite"), scorecards=[card])
    planned_card = next(s for s in planned.scorers if s.scorer == card.scorer)
    batch_run, first = start(stub, tmp_path, store, config(stub, tmp_path, "batch.sqlite"), samples=read_dataset(DATA),
                             rubrics=rubrics, metrics=[], scorecards=[card])
    assert first.submitted == planned.calls > planned_card.calls > 0      # the dry run's calls, the card's included
    assert first.units_total == len(result.verdicts) + 14
    report = collect_until_done(batch_run, stub)
    assert report.round == 1 and report.complete
    batch_cards = ScorecardStore(store).verdicts(batch_run.run_id)
    assert verdict_view(batch_cards) == verdict_view(online_cards)
    assert comparable(store.verdicts(batch_run.run_id)) == comparable(result.verdicts)
    # every call the online run made was asked in the batch (plus the superset the plan holds), none twice
    digests = submitted_digests(stub)
    assert len(digests) == len(set(digests)) and online_asked <= set(digests)
    assert all(v.usage.calls + v.usage.cache_hits > 0 for v in batch_cards if any(
        o.status != "not_applicable" and o.item in ("resolve", "soothe") for o in v.outcomes))
    assert store.run_info(batch_run.run_id).status == "complete"
    batch_run.close()


def test_unanswered_scorecard_calls_go_to_the_next_round_and_a_resumed_run_reasks_nothing(stub, tmp_path, card):
    _, online_cards = online(stub, tmp_path, card)
    online_asked = {body_digest(r.body) for r in stub.stats.requests if r.endpoint == "chat"}
    store = RunStore(tmp_path / "runs.sqlite")
    batch_endpoints(stub).script(["expire_half"])
    batch_run, first = start(stub, tmp_path, store, config(stub, tmp_path, "batch.sqlite"), samples=read_dataset(DATA),
                             rubrics=load_rubrics("rubrics", only=[RUBRIC]), metrics=[], scorecards=[card])
    report = collect_until_done(batch_run, stub)
    expired = batch_endpoints(stub).batches()[0]
    assert 0 < expired.completed < first.submitted and report.round == 2
    resubmitted = [d for batch in batch_endpoints(stub).batches()[1:] for d in batch.digests]
    # Only expired calls, once each, and every one of them a scorer still needs (those the online run made); a
    # stopped unit's other planned calls come along (one more round, not one per question)
    left = set(expired.digests[expired.completed:])
    assert len(resubmitted) == len(set(resubmitted)) and set(resubmitted) <= left
    assert left & online_asked <= set(resubmitted) and left & online_asked
    assert verdict_view(ScorecardStore(store).verdicts(batch_run.run_id)) == verdict_view(online_cards)
    batch_run.close()

    # A restart: a new BatchRun over the run, some scorecard verdicts lost. The stored replies answer them all.
    with store._lock, store.conn:
        store.conn.execute("DELETE FROM scorecard_verdicts WHERE sample_id IN ('password-ask', 'refund-verified')")
    requests, chat_calls = len(submitted_digests(stub)), stub.stats.calls["chat"]
    resumed = BatchRun(store, batch_run.run_id, config(stub, tmp_path, "batch.sqlite"),
                       directory=tmp_path / "batches", offline=False)
    again = asyncio.run(resumed.collect())
    assert again.complete and again.submitted == 0 and again.saved == 2
    assert len(submitted_digests(stub)) == requests and stub.stats.calls["chat"] == chat_calls
    assert verdict_view(ScorecardStore(store).verdicts(batch_run.run_id)) == verdict_view(online_cards)
    assert resumed.judgments_done() == again.units_total
    resumed.close()


def test_the_cli_scores_scorecards_in_batch_mode_and_plans_them_in_the_dry_run(stub, tmp_path, card, capsys):
    from rubriceval.cli import main

    path = tmp_path / "judge.yaml"
    path.write_text(yaml.safe_dump({"judge": {"base_url": stub.base_url, "model": "stub", "judge_mode": "checklist",
                                              "cache_path": str(tmp_path / "cache.sqlite")}}))
    args = [DATA, "--scorecards", str(tmp_path / "card.yaml"), "--rubrics", "rubrics", "--only", RUBRIC, "--config",
            str(path), "--store", str(tmp_path / "runs.sqlite")]
    assert main(["run", *args, "--batch", "--dry-run"]) == 0
    assert f"{card.scorer}" in capsys.readouterr().out
    assert main(["run", *args, "--batch", "--name", "b"]) == 0
    assert "round 1" in capsys.readouterr().out
    endpoints = batch_endpoints(stub)
    endpoints.wait_idle()
    for batch in endpoints.batches():
        endpoints.advance(batch.id)
    endpoints.wait_idle()
    assert main(["batch", "collect", "b", "--store", str(tmp_path / "runs.sqlite"), "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "scorecards: 14 verdict(s);" in out
    assert " 8 judgment(s) new" in out           # the rubric's (its 8 conversations); the scorecards on their line
    assert len(ScorecardStore(RunStore(tmp_path / "runs.sqlite")).verdicts("b")) == 14


def test_a_panels_batch_run_asks_the_scorecard_questions_of_the_runs_judge(tmp_path, monkeypatch, card):
    """A panel judges the rubrics; the scorecards' questions are the run's judge's (as online), so a panel's run
    without metrics keeps the run's judge and its endpoint for them."""
    from rubriceval.scoring.panel import load_panel_config
    from tests.batch.test_batch_panel import collect_until_done as collect_panel
    from tests.batch.test_batch_panel import panel_file

    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUDGE_B_KEY", "key-of-b")
    with StubServer() as a, StubServer(require_api_key="key-of-b") as b:
        def setup(cache: str):
            judge = judge_for(a, tmp_path, cache, judge_mode="checklist")
            return judge, load_panel_config(panel_file(tmp_path, a, b), base=judge)

        judge, panel = setup("online.sqlite")
        evaluate(DATA, rubrics=load_rubrics("rubrics", only=[RUBRIC]), scorecards=[card], judge=judge, panel=panel,
                 store=tmp_path / "online.sqlite", progress=False)
        online_cards = ScorecardStore(RunStore(tmp_path / "online.sqlite")).verdicts("latest")
        store = RunStore(tmp_path / "runs.sqlite")
        judge, panel = setup("batch.sqlite")
        batch_run, _ = start_batch_run(read_dataset(DATA), load_rubrics("rubrics", only=[RUBRIC]), [], store=store,
                                       judge_config=judge, panel_config=panel, directory=tmp_path / "batches",
                                       scorecards=[card])
        assert "" in batch_run.judges.configs           # the run's judge, for the scorecards
        collect_panel(batch_run, (a, b))
        assert verdict_view(ScorecardStore(store).verdicts(batch_run.run_id)) == verdict_view(online_cards)
        batch_run.close()


def test_scorecards_replayed_in_two_processes_equal_the_online_ones(stub, tmp_path, card, monkeypatch):
    import rubriceval.batch.parallel as parallel

    monkeypatch.setattr(parallel, "MIN_JUDGMENTS", 0)
    _, online_cards = online(stub, tmp_path, card)
    store = RunStore(tmp_path / "runs.sqlite")
    batch_run, _ = start(stub, tmp_path, store, config(stub, tmp_path, "batch.sqlite"), samples=read_dataset(DATA),
                         rubrics=load_rubrics("rubrics", only=[RUBRIC]), metrics=[], scorecards=[card])
    batch_run.embedder, batch_run.workers, batch_run.window = None, 2, 4      # 4 windows over 2 processes
    real, shards = parallel.replay_in_processes, []

    def counted(run, report, workers):
        shards.append(workers)
        return real(run, report, workers)
    monkeypatch.setattr(parallel, "replay_in_processes", counted)
    report = collect_until_done(batch_run, stub)
    assert shards == [2]
    assert report.scorecards_saved == report.scorecard_units == 14
    assert verdict_view(ScorecardStore(store).verdicts(batch_run.run_id)) == verdict_view(online_cards)
    batch_run.close()
