"""Runs with scorecards report honestly (issue 40.5): the progress bar counts the scorecard stage's judge calls
against the dry-run plan (calls/s, ETA); the summary counts every call and the whole wall time; `--out` carries a
row per conversation × item and the total; `rubriceval compile` previews a scorecard's questions for a sample."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rubriceval import evaluate
from rubriceval.cli import main
from rubriceval.store.runs import RunStore
from rubriceval.store.scorecards import ScorecardStore

ROOT = Path(__file__).resolve().parents[2]
CONVERSATIONS = str(ROOT / "datasets" / "demo_conversations_zh.jsonl")
CARD = str(ROOT / "scorecards" / "ecommerce_qa_zh.yaml")


@pytest.fixture
def config(stub_server, tmp_path) -> str:
    path = tmp_path / "judge.yaml"
    path.write_text(yaml.safe_dump({"judge": {"base_url": stub_server.base_url, "model": "stub",
                                              "cache_path": str(tmp_path / "cache.sqlite")}}))
    return str(path)


def test_the_bar_counts_the_scorecard_stages_calls_and_the_totals_count_them(judge_config, stub_server, tmp_path,
                                                                             capsys):
    result = evaluate(CONVERSATIONS, scorecards=CARD, judge=judge_config, store=tmp_path / "r.sqlite", progress=True)
    sent = len(stub_server.stats.requests)
    err = capsys.readouterr().err
    assert sent > 0
    # the scorecard stage's bar: calls against the plan (the dry run's count), a rate and an ETA
    # (an upper bound while applies_when questions are unanswered: it drops to what was asked, never below)
    planned = [int(m) for m in re.findall(r"judge \d+/(\d+) calls", err)]
    assert planned[-1] == sent and min(planned) == sent and planned == sorted(planned, reverse=True)
    assert re.search(rf"scorecards: 100%.*14/14.*judge {sent}/{sent} calls \d+\.\d+/s ETA", err)
    assert "evaluating" not in err            # no rubric stage to show: no "14/14 … calls=0" bar
    # the run's totals: every call of the run, and the whole run's wall time
    assert result.totals["judge"]["requests"] == sent
    assert result.totals["scorecards"]["usage"]["calls"] == sent
    assert result.totals["wall_s"] > 0.0


def test_the_summary_and_out_files_carry_the_scorecards(stub_server, config, tmp_path, capsys):
    store, out = str(tmp_path / "runs.sqlite"), tmp_path / "out"
    assert main(["run", CONVERSATIONS, "--scorecards", CARD, "--config", config, "--store", store, "--quiet",
                 "--name", "cards", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    sent = stub_server.stats.calls["chat"]
    assert sent > 0
    wall = float(re.search(r"wall (\d+\.\d+)s", printed)[1])
    assert wall > 0.0
    assert re.search(rf"(?i)judge calls {sent} ", printed), printed
    verdicts = ScorecardStore(RunStore(store)).verdicts("cards")
    card = ScorecardStore(RunStore(store)).cards("cards")[0]
    frame = pd.read_csv(out / "results.csv", encoding="utf-8-sig")
    # a row per conversation × item, and one total row per conversation
    assert len(frame) == len(verdicts) * (len(card.items) + 1)
    totals = frame[frame["item"] == "total"].set_index("sample_id")
    by_id = {v.sample_id: v for v in verdicts}
    assert totals.loc["password-ask", "score"] == 0 and bool(totals.loc["password-ask", "fatal"])
    assert totals.loc["refund-verified", "score"] == by_id["refund-verified"].totals.total
    items = frame[frame["item"] != "total"].set_index(["sample_id", "item"])
    assert items.loc[("refund-revealed-first", "verify_first"), "score"] == -20
    assert items.loc[("refund-revealed-first", "verify_first"), "item_name"] == \
        next(i.name for i in card.items if i.id == "verify_first")
    assert items.loc[("invoice-bad-closing", "verify_first"), "status"] == "not_applicable"
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(frame) and json.loads(lines[0])["scorer"] == "scorecard:ecommerce_qa_zh"


def test_compile_previews_a_scorecards_questions_as_the_dry_run_counts_them(stub_server, config, tmp_path, capsys):
    assert main(["compile", CARD, "--dataset", CONVERSATIONS, "--sample", "refund-verified"]) == 0
    shown = capsys.readouterr().out
    assert "Field required" not in shown
    asked = int(re.search(r"on sample 'refund-verified': (\d+) judge question", shown)[1])
    assert asked > 0 and shown.count("===== item: ") == asked and "# 问题" in shown
    # the same questions a run sends for that conversation
    rows = [json.loads(line) for line in Path(CONVERSATIONS).read_text(encoding="utf-8").splitlines() if line.strip()]
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(next(r for r in rows if r.get("id") == "refund-verified"), ensure_ascii=False) + "\n",
                   encoding="utf-8")
    assert main(["run", str(one), "--scorecards", CARD, "--config", config, "--store", str(tmp_path / "r.sqlite"),
                 "--quiet", "--name", "one"]) == 0
    # the same questions a run sends for that conversation: at most those, fewer by the items whose applies_when
    # question answered no
    assert "(at most: an item behind an applies_when question" in shown
    store = ScorecardStore(RunStore(str(tmp_path / "r.sqlite")))
    asks = {i.id for i in store.cards("one")[0].items if i.applies_when is not None and i.applies_when.question}
    behind = [o for o in store.verdicts("one")[0].outcomes if o.item in asks and o.status == "not_applicable"]
    assert stub_server.stats.calls["chat"] == asked - len(behind)


def test_compile_of_a_scorecard_without_a_dataset_says_what_to_give(capsys):
    assert main(["compile", CARD]) == 2
    assert "--dataset" in capsys.readouterr().err


def test_the_scorecard_stage_keeps_the_judges_concurrency_busy(tmp_path):
    """Conversations in flight follow the judge's concurrency (a fixed 8 left a 64-slot server mostly idle)."""
    from rubriceval.testing.stub_server import StubServer

    with StubServer(latency_s=0.3) as stub:
        evaluate(CONVERSATIONS, scorecards=CARD, store=tmp_path / "r.sqlite", progress=False,
                 judge={"base_url": stub.base_url, "model": "stub", "cache_path": str(tmp_path / "c.sqlite"),
                        "concurrency": 16})
        stats = stub.stats
    assert stats.calls["chat"] > 14 and stats.max_in_flight > 8        # 14 conversations, not 8 at a time
