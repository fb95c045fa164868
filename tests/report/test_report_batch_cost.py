"""Online and Batch API cost side by side in all three reports (issue 19 point 6): a batch run and an online run of
the loopback stub, with a priced judge, show both figures in the HTML cost table, the workbook's summary sheet and
the Markdown summary — the same numbers, priced from the stored tokens; an unpriced judge shows neither."""
from __future__ import annotations

import asyncio
import re

import pytest
from openpyxl import load_workbook

from rubriceval.batch.rounds import start_batch_run
from rubriceval.data.io import read_dataset
from rubriceval.judge.config import JudgeConfig
from rubriceval.report.excel import write_workbook
from rubriceval.report.html import render_html_report
from rubriceval.report.markdown import render_markdown
from rubriceval.report.run_data import load_run
from rubriceval.rubric.loader import load_rubrics
from rubriceval.run.evaluate import evaluate
from rubriceval.store.runs import RunStore
from rubriceval.testing.stub_batches import batch_endpoints
from rubriceval.testing.stub_server import StubServer

DATA = "datasets/demo_cs_zh.jsonl"
RUBRICS = ["policy_compliance"]
PRICE_IN, PRICE_OUT = 3.0, 12.0                 # USD per 1M tokens online; the Batch API: half (batch_discount)


@pytest.fixture
def stub(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with StubServer() as server:
        yield server


def judge(stub, tmp_path, cache: str, *, priced: bool = True) -> JudgeConfig:
    prices = {"price_in_per_mtok": PRICE_IN, "price_out_per_mtok": PRICE_OUT} if priced else {}
    return JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(tmp_path / cache), timeout_s=5, **prices)


def batch_run(stub, tmp_path, store: RunStore) -> str:
    samples = read_dataset(DATA)[:4]
    run, _ = start_batch_run(samples, load_rubrics("rubrics", only=RUBRICS), [], store=store,
                             judge_config=judge(stub, tmp_path, "batch-cache.sqlite"), directory=tmp_path / "batches")
    endpoints = batch_endpoints(stub)
    try:
        for _ in range(6):
            endpoints.wait_idle()
            for batch in endpoints.batches():
                endpoints.advance(batch.id)
            if asyncio.run(run.collect()).complete:
                return run.run_id
        raise AssertionError("the batch run did not complete")
    finally:
        run.close()


def online_run(stub, tmp_path, store_path, *, priced: bool = True) -> str:
    return evaluate(read_dataset(DATA)[:4], rubrics=load_rubrics("rubrics", only=RUBRICS),
                    judge=judge(stub, tmp_path, "online-cache.sqlite", priced=priced), store=store_path,
                    progress=False).run_id


def expected(store: RunStore, run_id: str) -> tuple[float, float, float]:
    """The run's recorded cost, and its stored tokens priced online and through the Batch API, summed here."""
    verdicts = store.verdicts(run_id)
    prompt = sum(v.usage.prompt_tokens for v in verdicts)
    completion = sum(v.usage.completion_tokens for v in verdicts)
    assert prompt > 0 and completion > 0
    online = (prompt * PRICE_IN + completion * PRICE_OUT) / 1e6
    return sum(v.usage.cost_usd for v in verdicts), online, online / 2


def reports(store: RunStore, run_id: str, tmp_path) -> tuple[str, dict, str]:
    data = load_run(store, run_id)
    html = render_html_report(data, lang="en", findings=[])
    sheet = load_workbook(write_workbook(data, tmp_path / f"{run_id}.xlsx", lang="en"))["summary"]
    rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    table = {row[1]: dict(zip(rows[0], row)) for row in rows[1:]}
    markdown = render_markdown(data, lang="en", findings=[])
    data.source.close()
    return html, table, markdown


def html_total(html: str, cell: str) -> float:
    return float(re.search(rf'id="{cell}">([0-9.]+)<', html).group(1))


def assert_side_by_side(store: RunStore, run_id: str, tmp_path) -> tuple[float, float, float]:
    recorded, online, batch = expected(store, run_id)
    html, table, markdown = reports(store, run_id, tmp_path)
    # HTML: both columns in the cost table, the total row priced both ways
    assert "Online price (USD)" in html and "Batch API price (USD)" in html
    assert html_total(html, "cost-online") == pytest.approx(online, abs=5e-5)
    assert html_total(html, "cost-batch") == pytest.approx(batch, abs=5e-5)
    # Excel: the summary sheet's cost columns, per scorer and for the whole run
    total = table["total"]
    assert total["Online price (USD)"] == pytest.approx(online, abs=1e-6)
    assert total["Batch API price (USD)"] == pytest.approx(batch, abs=1e-6)
    assert total["Cost (USD)"] == pytest.approx(recorded, abs=1e-6)
    rubric = table[RUBRICS[0]]
    assert rubric["Online price (USD)"] == pytest.approx(online, abs=1e-6)   # the run's only scorer
    # Markdown: the same two figures
    assert f"(online ${online:.4f} | batch API ${batch:.4f})" in markdown
    return recorded, online, batch


def test_a_batch_run_shows_online_and_batch_cost_in_every_report(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = batch_run(stub, tmp_path, store)
    recorded, online, batch = assert_side_by_side(store, run_id, tmp_path)
    assert recorded == pytest.approx(batch) and batch < online     # it was paid at the batch price


def test_an_online_run_shows_its_cost_and_the_batch_price(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = online_run(stub, tmp_path, tmp_path / "runs.sqlite")
    recorded, online, batch = assert_side_by_side(store, run_id, tmp_path)
    assert recorded == pytest.approx(online) and batch == pytest.approx(online / 2)


def test_an_unpriced_judge_shows_neither(stub, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = online_run(stub, tmp_path, tmp_path / "runs.sqlite", priced=False)
    html, table, markdown = reports(store, run_id, tmp_path)
    assert "Online price (USD)" not in html and 'id="cost-batch"' not in html and "batch API" not in markdown
    assert table["total"]["Online price (USD)"] is None and table["total"]["Batch API price (USD)"] is None
    assert table["total"]["Cost (USD)"] == 0
