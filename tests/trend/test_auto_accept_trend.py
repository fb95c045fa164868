"""The acceptance trend (issue 44, item 3): coverage and guaranteed agreement per item run after run as reviews
accumulate, and an item whose reviewed agreement fell below the target marked as dropped out."""
from __future__ import annotations

import pytest

from rubriceval.store.runs import RunStore
from rubriceval.trend.auto_accept import acceptance_trend
from tests.trust.test_selective_acceptance import review_week, week


@pytest.fixture
def runs(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    yield store
    store.close()


def test_the_trend_shows_coverage_grow_and_an_item_drop_out(runs):
    first = week(runs, "w1")
    review_week(runs, first, resolve_right=True)
    second = week(runs, "w2")
    review_week(runs, second, resolve_right=False)
    week(runs, "w3")
    resolve = [p for p in acceptance_trend(runs) if p.item == "resolve"]
    assert [p.run for p in resolve] == ["w1", "w2", "w3"]
    assert [p.n_reviewed for p in resolve] == [0, 80, 160]
    assert resolve[0].coverage == 0.0 and resolve[1].coverage >= 0.75 and resolve[2].coverage == 0.0
    assert resolve[1].guaranteed >= 0.9 and resolve[0].guaranteed is None and resolve[2].guaranteed is None
    assert [p.dropped for p in resolve] == [False, False, True]
    overall = [p for p in acceptance_trend(runs, "qa") if p.item == ""]
    assert [p.decisions for p in overall] == [160, 160, 160]
