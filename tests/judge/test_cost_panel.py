"""Online and Batch API cost side by side for a panel of judges with different prices (issue 19 point 6): the dry run,
the end-of-run line of `rubriceval run` and the three reports price each judge's tokens at that judge's own prices,
through the one pricing function (rubriceval/judge/pricing.py). The expected figures are computed here from the
loopback stub's own request log (tokens per model) × each judge's prices — not from the code under test. A panel run
stored before votes kept their usage says "not available" instead of a figure at the wrong prices."""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from rubriceval.cli import main
from rubriceval.core.verdict import Usage
from rubriceval.judge.config import JudgeConfig
from rubriceval.judge.pricing import JudgePrices, side_by_side
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_server import StubServer
from tests.report.test_report_batch_cost import html_total, reports

DATA = "datasets/demo_cs_zh.jsonl"
RUBRIC = "policy_compliance"
METRIC = "faithfulness"             # judged by the run's own judge (judge:), not by the panel
# USD per 1M tokens, (online in, online out), (batch in, batch out): three judges, three prices. High prices, so the
# four-decimal figures the CLI prints tell the judges apart.
PRICES = {"stub": ((50.0, 200.0), (25.0, 100.0)),            # the run's judge: batch = online × batch_discount
          "stub-a": ((100.0, 400.0), (50.0, 200.0)),         # panel judge a: its own online price, discounted
          "stub-b": ((300.0, 1200.0), (100.0, 500.0))}       # panel judge b: explicit batch prices


def write_config(tmp_path: Path, stub: StubServer) -> Path:
    (online_in, online_out), _ = PRICES["stub"]
    path = tmp_path / "judges.yaml"
    path.write_text(
        f"judge: {{base_url: '{stub.base_url}', model: stub, cache_path: '{tmp_path}/judge.sqlite', timeout_s: 5,\n"
        f"        price_in_per_mtok: {online_in}, price_out_per_mtok: {online_out}}}\n"
        f"embedder: {{base_url: '{stub.base_url}', model: stub-embed}}\n"
        "judges:\n"
        "  - {name: a, model: stub-a, price_in_per_mtok: 100.0, price_out_per_mtok: 400.0}\n"
        "  - {name: b, model: stub-b, price_in_per_mtok: 300.0, price_out_per_mtok: 1200.0,\n"
        "     price_in_per_mtok_batch: 100.0, price_out_per_mtok_batch: 500.0}\n", encoding="utf-8")
    return path


def dataset(tmp_path: Path, n: int = 4) -> str:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(Path(DATA).read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
    return str(path)


def priced_by_hand(tokens: dict[str, tuple[int, int]]) -> tuple[float, float]:
    """Each model's (prompt, completion) tokens × its own online and batch prices, summed."""
    online = sum((p * PRICES[m][0][0] + c * PRICES[m][0][1]) / 1e6 for m, (p, c) in tokens.items())
    batch = sum((p * PRICES[m][1][0] + c * PRICES[m][1][1]) / 1e6 for m, (p, c) in tokens.items())
    return online, batch


def stub_tokens(stub: StubServer) -> dict[str, tuple[int, int]]:
    """(prompt, completion) tokens the stub served per judge model: what each judge's calls really spent."""
    tokens: dict[str, tuple[int, int]] = {}
    for record in stub.stats.requests:
        if record.endpoint == "chat":
            p, c = tokens.get(record.model or "", (0, 0))
            tokens[record.model or ""] = (p + record.prompt_tokens, c + record.completion_tokens)
    return tokens


def stub_calls(stub: StubServer) -> dict[str, int]:
    return {model: sum(1 for r in stub.stats.requests if r.endpoint == "chat" and r.model == model)
            for model in PRICES}


@pytest.fixture
def panel_run(tmp_path, monkeypatch, capsys):
    """A panel run through the CLI: its dry run's output, its end-of-run output, the stub's tokens per model."""
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    store = str(tmp_path / "runs.sqlite")
    with StubServer() as stub:
        args = ["run", dataset(tmp_path), "--rubrics", "rubrics", "--only", RUBRIC, "--metrics", METRIC,
                "--config", str(write_config(tmp_path, stub)), "--store", store, "--quiet"]
        assert main(args + ["--dry-run"]) == 0
        dry = capsys.readouterr().out
        assert not stub_tokens(stub)                       # the dry run spent nothing
        assert main(args + ["--name", "panel"]) == 0
        said = capsys.readouterr().out
        tokens, calls = stub_tokens(stub), stub_calls(stub)
    assert set(tokens) == set(PRICES) and all(p > 0 and c > 0 for p, c in tokens.values())
    return RunStore(store), dry, said, tokens, calls


def test_dry_run_prices_each_judge_at_its_own_prices(panel_run):
    _, dry, _, _, served_calls = panel_run
    planned = {}
    for _label, model, calls, prompt, completion, online, batch in re.findall(
            r"^  judge (.+?) \((\S+)\): (\d+) call\(s\), ~(\d+) \+ ~(\d+) tokens to pay; online ~\$([0-9.]+) \| batch "
            r"~\$([0-9.]+)$", dry, flags=re.MULTILINE):
        planned[model] = (int(prompt), int(completion))
        assert (float(online), float(batch)) == pytest.approx(priced_by_hand({model: planned[model]}), abs=6e-5)
        if model != "stub":                     # the rubric's calls are planned exactly, judge by judge
            assert int(calls) == served_calls[model] > 0
    assert set(planned) == set(PRICES)          # judges a and b, and the run's judge for the metric
    online, batch = priced_by_hand(planned)
    assert f"cost: online ~${online:.4f} | batch API (--batch) ~${batch:.4f}" in dry
    # Not what pricing every planned token at the run's judge prices would say (the bug this guards against).
    everything = (sum(p for p, _ in planned.values()), sum(c for _, c in planned.values()))
    assert priced_by_hand({"stub": everything})[0] != pytest.approx(online, rel=1e-3)


def test_run_line_and_the_three_reports_price_each_judge_at_its_own_prices(panel_run, tmp_path):
    store, _, said, served, _ = panel_run
    online, batch = priced_by_hand(served)
    assert f"(online ${online:.4f} | batch API ${batch:.4f})" in said            # the end-of-run line
    run_id = store.resolve("panel")
    html, table, markdown = reports(store, run_id, tmp_path)
    assert f"(online ${online:.4f} | batch API ${batch:.4f})" in markdown
    assert re.search(r"^Judge calls .*$", said, flags=re.MULTILINE).group(0) in markdown   # the very same line
    assert html_total(html, "cost-online") == pytest.approx(online, abs=5e-5)
    assert html_total(html, "cost-batch") == pytest.approx(batch, abs=5e-5)
    assert table["total"]["Online price (USD)"] == pytest.approx(online, abs=1e-6)
    assert table["total"]["Batch API price (USD)"] == pytest.approx(batch, abs=1e-6)
    # Per scorer: the rubric is the panel judges' tokens, the metric the run judge's.
    rubric = priced_by_hand({m: served[m] for m in ("stub-a", "stub-b")})
    metric = priced_by_hand({"stub": served["stub"]})
    assert (table[RUBRIC]["Online price (USD)"], table[RUBRIC]["Batch API price (USD)"]) == pytest.approx(rubric)
    assert (table[METRIC]["Online price (USD)"], table[METRIC]["Batch API price (USD)"]) == pytest.approx(metric)
    # The recorded cost (each reply priced at its own judge's price when stored) is the online figure.
    assert table["total"]["Cost (USD)"] == pytest.approx(online, abs=1e-6)
    # Each vote keeps what its judge spent: the stored votes add up to the stub's tokens per model.
    by_judge: dict[str, Usage] = {}
    for verdict in store.verdicts(run_id):
        for vote in (verdict.details.get("panel") or {}).get("judges", []):
            by_judge[vote["model"]] = by_judge.get(vote["model"], Usage()) + Usage.model_validate(vote["usage"])
    assert {m: (u.prompt_tokens, u.completion_tokens) for m, u in by_judge.items()} == \
        {m: served[m] for m in ("stub-a", "stub-b")}


def test_a_panel_run_stored_before_votes_kept_usage_says_not_available(panel_run, tmp_path):
    store, _, _, served, _ = panel_run
    run_id = store.resolve("panel")
    with sqlite3.connect(store.path) as db:                 # the votes as an older version stored them
        rows = db.execute("SELECT sample_id, scorer, details_json FROM verdicts WHERE run_id = ? "
                          "AND instr(details_json, '\"panel\"') > 0", (run_id,)).fetchall()
        assert rows
        for sample_id, scorer, details_json in rows:
            details = json.loads(details_json)
            for vote in details["panel"]["judges"]:
                del vote["usage"]
            db.execute("UPDATE verdicts SET details_json = ? WHERE run_id = ? AND sample_id = ? AND scorer = ?",
                       (json.dumps(details, ensure_ascii=False), run_id, sample_id, scorer))
    html, table, markdown = reports(store, run_id, tmp_path)
    assert "(online | batch API: not available" in markdown and "(online $" not in markdown
    assert 'id="cost-online">—<' in html and "cannot be priced at each judge" in html
    assert table["total"]["Online price (USD)"] is None and table[RUBRIC]["Online price (USD)"] is None
    assert "cannot be priced" in str(table["total"])
    # The metric, judged by the run's judge alone, is still priced; the recorded cost is untouched.
    assert table[METRIC]["Online price (USD)"] == pytest.approx(priced_by_hand({"stub": served["stub"]})[0])
    assert table["total"]["Cost (USD)"] == pytest.approx(priced_by_hand(served)[0], abs=1e-6)


def test_side_by_side_prices_each_judge_at_its_own_prices():
    cheap = JudgePrices.of(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", price_in_per_mtok=1.0,
                                       price_out_per_mtok=2.0))
    dear = JudgePrices.of(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="gpt-4o"))   # the price table
    tokens = Usage(prompt_tokens=1_000_000, completion_tokens=500_000)
    both = side_by_side([(cheap, tokens), (dear, tokens)])
    assert both is not None
    assert both.online_usd == pytest.approx((1.0 + 1.0) + (2.5 + 5.0))
    assert both.batch_usd == pytest.approx((0.5 + 0.5) + (1.25 + 2.5))
    unpriced = JudgePrices.of(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="unknown-model"))
    assert side_by_side([(unpriced, tokens)]) is None and side_by_side([]) is None
