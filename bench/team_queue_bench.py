"""Time to open a team-audit queue of 100,000 verdicts on SQLite, server side, with and without filters.

Builds a run of N/2 samples × 2 rubrics (rubriceval/testing/team_store.py: tags, intents, skewed judge scores), a
task holding every verdict (overlap 1, one expert: a queue of N items), then times what the app does when a queue is
opened (ui/team_actions: the task, one page of 25 rows with the total count, the expert's progress, the first item)
and the lead's adjudication queue, each the median of --repeat runs.

    nice -n 10 .venv/bin/python bench/team_queue_bench.py --n 100000
"""
from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from rubriceval.audit.sessions import Member
from rubriceval.store.team import TeamStore
from rubriceval.store.team_adjudication import adjudication_queue
from rubriceval.store.team_models import TaskSpec
from rubriceval.testing.team_store import build_team_store
from ui import team_actions as act


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000, help="verdicts in the queue (two rubrics: n/2 samples)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", help="where to build the store (default: a temporary folder)")
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="team-bench-"))
    store_path = root / "runs.sqlite"
    started = time.perf_counter()
    build_team_store(store_path, n_samples=args.n // 2, seed=1, metrics=False)
    print(f"store: {args.n // 2:,} samples × 2 rubrics = {args.n:,} verdicts in {time.perf_counter() - started:.1f} s"
          f" ({store_path})")
    with TeamStore(store_path) as team:
        started = time.perf_counter()
        task = team.create_task(TaskSpec(run="team-run", rubrics=["soothing", "links"], n=args.n // 2, overlap=1,
                                         experts=["ann"], name="all"), created_by="lead")
        print(f"task create (stratified sampling of every verdict, {task.n_items:,} items): "
              f"{time.perf_counter() - started:.1f} s")
        expert, lead = Member(name="ann", role="expert"), Member(name="lead", role="lead")
        cases = [
            ("expert, no filter", expert, "", "", ""),
            ("expert, rubric=soothing", expert, "", "soothing", ""),
            ("expert, state=open + rubric + tag=物流", expert, "open", "soothing", "物流"),
            ("lead viewing ann, tag=VIP", lead, "", "", "VIP"),
        ]
        for label, member, state, scorer, tag in cases:
            def open_queue(member=member, state=state, scorer=scorer, tag=tag):
                session = act.TeamSession(lang="en")
                page = act.open_queue(team, member, session, task.task_id, "ann", state, scorer, tag)
                act.progress_text(team, session)
                act.open_item(team, member, session, page.rows[0].item_no if page.rows else None)
                return page
            seconds, page = timed(open_queue, args.repeat)
            print(f"open queue [{label}]: {page.total:,} items, first page + count + progress + first item: "
                  f"{seconds * 1000:.0f} ms")

        def lead_range():
            return team.queue(task.task_id, "ann", act.QueueFilter(score_min=1, score_max=2, tag="退款"),
                              page_size=25, as_lead=True)
        seconds, page = timed(lead_range, args.repeat)
        print(f"open queue [lead, judge 1–2 + tag=退款]: {page.total:,} items: {seconds * 1000:.0f} ms")
        pair = team.create_task(TaskSpec(run="team-run", rubrics=["soothing", "links"], n=args.n // 2, overlap=2,
                                         experts=["ann", "bob"], name="pairs"), created_by="lead")
        reviewed = _simulate_reviews(team, pair.task_id, share=0.1)
        seconds, rows = timed(lambda: adjudication_queue(team, pair.task_id), args.repeat)
        print(f"adjudication queue, {pair.n_items:,} items × 2 experts, {reviewed:,} reviewed by both: "
              f"{len(rows):,} to settle, {seconds * 1000:.0f} ms")


def _simulate_reviews(team: TeamStore, task_id: str, share: float) -> int:
    """Scores (and a few unsure) on a share of the items, written in SQL: this benchmark measures reading."""
    rng = random.Random(0)
    items = [r[0] for r in team.query("SELECT item_no FROM team_task_items WHERE task_id = :t", {"t": task_id})]
    chosen = rng.sample(items, int(len(items) * share))
    rows = [{"t": task_id, "no": no, "e": expert, "state": "unsure" if rng.random() < 0.05 else "scored",
             "score": rng.randint(1, 5)} for no in chosen for expert in ("ann", "bob")]
    with team.writing() as conn:
        conn.executemany("UPDATE team_assignments SET state = :state, score = CASE WHEN :state = 'scored' THEN "
                         ":score END WHERE task_id = :t AND item_no = :no AND expert = :e", rows)
    return len(chosen)


if __name__ == "__main__":
    main()
