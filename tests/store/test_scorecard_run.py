"""Scorecards in a run (issue 25.2): `rubriceval run … --scorecards DIR` stores one verdict per conversation,
plans its calls in the dry run (the same number the run makes), resumes without re-judging, reads the judge cache,
and reads the run's rubric verdicts for `rubric:` items instead of judging them again."""
import re
import shutil
from pathlib import Path

import pytest
import yaml

from rubriceval.cli import main
from rubriceval.store.runs import RunStore
from rubriceval.store.scorecards import ScorecardStore, scorecard_frame

ROOT = Path(__file__).resolve().parents[2]
CONVERSATIONS = str(ROOT / "datasets" / "demo_conversations_zh.jsonl")
SCORECARDS = str(ROOT / "scorecards")


@pytest.fixture
def config(stub_server, tmp_path) -> str:
    path = tmp_path / "judge.yaml"
    path.write_text(yaml.safe_dump({"judge": {"base_url": stub_server.base_url, "model": "stub",
                                              "cache_path": str(tmp_path / "cache.sqlite")}}))
    return str(path)


def run(*args: str) -> int:
    return main(["run", *args])


def test_run_stores_one_verdict_per_conversation_and_the_dry_run_plans_its_calls(stub_server, config, tmp_path,
                                                                                    capsys):
    store = str(tmp_path / "runs.sqlite")
    assert run(CONVERSATIONS, "--scorecards", SCORECARDS, "--only-scorecards", "ecommerce_qa_zh", "--config", config,
               "--store", store, "--dry-run") == 0
    planned = int(re.search(r"scorecard:ecommerce_qa_zh\s+scorecard\s+14\s+(\d+)", capsys.readouterr().out)[1])
    assert run(CONVERSATIONS, "--scorecards", SCORECARDS, "--only-scorecards", "ecommerce_qa_zh", "--config", config,
               "--store", store, "--quiet", "--name", "first") == 0
    out = capsys.readouterr().out
    assert "scorecards: 14 verdict(s) new" in out
    runs = RunStore(store)
    verdicts = ScorecardStore(runs).verdicts("first")
    # the plan counts 未安抚情绪's question behind its applies_when question (an upper bound): exact but for the
    # conversations where that question answered no and the item was not asked
    not_asked = sum("applies_when question answered no" in v.outcome("soothe").reason for v in verdicts)
    assert stub_server.stats.calls["chat"] == planned - not_asked > 0
    assert len(verdicts) == 14 and {v.scorecard for v in verdicts} == {"ecommerce_qa_zh"}
    by_id = {v.sample_id: v for v in verdicts}
    assert by_id["password-ask"].totals.fatal == ["ask_secret"] and by_id["password-ask"].totals.total == 0
    assert by_id["lookup-before-verify"].outcome("verify_first").status == "hit"
    assert verdicts[0].usage.calls > 0
    # pandas: one row per conversation, a column per item (signed points or N/A)
    card = ScorecardStore(runs).cards("first")[0]
    frame = scorecard_frame(card, verdicts)
    assert len(frame) == 14 and {"total", "greeting", "verify_first", "dim:合规"} <= set(frame.columns)
    assert frame.set_index("sample_id").loc["invoice-bad-closing", "verify_first"] == "N/A"
    assert frame.set_index("sample_id").loc["refund-revealed-first", "verify_first"] == -20

    # resume: only the missing verdicts are made, from the judge cache (no new call to the judge)
    with runs._lock, runs.conn:
        runs.conn.execute("DELETE FROM scorecard_verdicts WHERE sample_id IN ('password-ask', 'delay-escalated')")
    calls = stub_server.stats.calls["chat"]
    assert run("--resume", "first", "--config", config, "--store", store, "--quiet") == 0
    out = capsys.readouterr().out
    assert "scorecards: 2 verdict(s) new, 12 resumed" in out and re.search(r"judge call\(s\), [1-9]\d* cached", out)
    assert stub_server.stats.calls["chat"] == calls
    assert len(ScorecardStore(runs).verdicts("first")) == 14


def test_rubric_items_read_the_runs_rubric_verdict(stub_server, config, tmp_path, capsys):
    card = yaml.safe_load((ROOT / "scorecards" / "ecommerce_qa_zh.yaml").read_text(encoding="utf-8"))
    card["id"] = "with_rubric"
    card["items"] = [{"id": "identity", "dimension": "合规", "points": -20,
                      "rubric": {"id": "identity_verification", "min_score": 4}}]
    folder = tmp_path / "cards"
    folder.mkdir()
    (folder / "card.yaml").write_text(yaml.safe_dump(card, allow_unicode=True), encoding="utf-8")
    shutil.copy(ROOT / "scorecards" / card["knowledge"], folder)       # the policies it names, beside it
    store = str(tmp_path / "runs.sqlite")
    assert run(CONVERSATIONS, "--scorecards", str(folder), "--rubrics", str(ROOT / "rubrics"), "--only",
               "identity_verification", "--judge-mode", "checklist", "--config", config, "--store", store, "--quiet",
               "--name", "r") == 0
    runs = RunStore(store)
    rubric = {v.sample_id: v for v in runs.verdicts("r") if v.scorer == "identity_verification"}
    cards = {v.sample_id: v for v in ScorecardStore(runs).verdicts("r")}
    assert len(cards) == 14
    for sample_id, verdict in cards.items():
        outcome = verdict.outcome("identity")
        if sample_id not in rubric:
            assert outcome.status == "not_applicable"
        else:
            assert outcome.status == ("hit" if rubric[sample_id].score < 4 else "clear")
    # no judge call of the scorecard's own: the rubric was judged once
    assert all(v.usage.calls == 0 for v in cards.values())


def test_run_refuses_a_rubric_item_whose_rubric_is_not_in_the_run(config, tmp_path, capsys):
    card = {"id": "c", "name": "c", "dimensions": [{"id": "d"}],
            "items": [{"id": "i", "dimension": "d", "points": -5, "rubric": {"id": "closing"}}]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(card))
    assert run(CONVERSATIONS, "--scorecards", str(path), "--config", config, "--store",
               str(tmp_path / "runs.sqlite")) == 2
    err = capsys.readouterr().err
    assert "c.yaml" in err and "rubric 'closing'" in err and "--rubrics" in err
    assert not (tmp_path / "runs.sqlite").exists() or not RunStore(tmp_path / "runs.sqlite").list_runs()


def test_run_frame_and_usage_in_the_report(stub_server, config, tmp_path):
    from rubriceval.report.scorecards import ScorecardReport
    from rubriceval.store.scorecards import run_frame

    store = str(tmp_path / "runs.sqlite")
    assert run(CONVERSATIONS, "--scorecards", SCORECARDS, "--config", config, "--store", store, "--quiet") == 0
    frame = run_frame(RunStore(store), "latest")
    assert len(frame) == 14 and set(frame["scorecard"]) == {"ecommerce_qa_zh"}
    calls = stub_server.stats.calls["chat"]
    assert f"Judge calls {calls} (cache hits 0)" in ScorecardReport(RunStore(store), "latest", "en").markdown()


def test_evaluate_takes_scorecards(judge_config, tmp_path):
    from rubriceval import evaluate

    result = evaluate(CONVERSATIONS, scorecards=str(ROOT / "scorecards" / "ecommerce_qa_zh.yaml"), judge=judge_config,
                      store=tmp_path / "runs.sqlite", progress=False)
    frame = result.scorecards()
    assert len(frame) == 14 and frame.set_index("sample_id").loc["password-ask", "total"] == 0
    assert result.totals["scorecards"]["done"] == 14
