"""Writers in processes of their own, for the two-writer tests: each opens its own store connection (as two app
processes would), and a barrier makes them read the item, then save, at the same moments."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def race_saves(target: str | Path, run: str, sample_id: str, scorer: str, expert: str, rounds: int,
               barrier: Any, results: Any) -> None:
    """`rounds` times: wait for the other writer, read the item's versions, wait again, save a response.
    Puts (expert, [(round, score, ok)]) on `results`."""
    from rubriceval.store.audit import AuditStore

    outcomes = []
    with AuditStore(target) as store:
        for number in range(rounds):
            barrier.wait()
            seen = store.item(run, sample_id, scorer).versions
            barrier.wait()                  # both writers saw the same versions: one save must lose
            score = 1 + (number + len(expert)) % 5
            result = store.save_response(run, sample_id, scorer, expert=expert, score=score,
                                         reason=f"{expert} round {number}", expected=seen)
            outcomes.append((number, score, result.ok))
    results.put((expert, outcomes))
