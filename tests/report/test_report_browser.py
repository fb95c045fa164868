"""Open the HTML report in headless Debian Chromium: the key numbers must be visible on the rendered page, the
charts must lay out inside the page, and nothing may be fetched from the network."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval import write_html_report
from tests.report.test_report import build_store

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def page(chromium: str):
    playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright (pip) is not installed")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": 1200, "height": 900})
        finally:
            browser.close()


def test_report_shows_key_numbers_in_chromium(page, tmp_path: Path):
    store = build_store(tmp_path)
    report = write_html_report(store, "baseline", tmp_path / "report.html",
                               agreement={"empathy": "κ = 0.71 [0.58, 0.80] on 120 audited items"})
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(report.as_uri())
    assert requests == [report.as_uri()]                                   # self-contained: no other fetch
    business = page.locator("#kpi-business .value").inner_text()
    assert business.startswith("3.30")
    assert page.locator("#kpi-faithfulness .value").inner_text() == "0.76"
    assert page.locator("#kpi-context_recall .value").inner_text() == "0.50"
    table = page.locator("#scorer-table").inner_text()
    assert "流程合规" in table and "3.20" in table and "60.0%" in table and "50.0%" in table
    assert "κ = 0.71" in page.locator("#rubric-empathy .agreement").inner_text()
    assert "18400" in page.locator("#cost-total").inner_text()
    assert page.locator("#diagnosis .finding").count() >= 4
    # Charts: every SVG fits its card, so nothing overflows the page horizontally.
    assert page.locator("svg.chart").count() >= 6
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
