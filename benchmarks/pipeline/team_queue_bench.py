"""Time to open a team-audit queue of 100,000 verdicts on SQLite or PostgreSQL, server side, with and without
filters.

Builds a run of N/2 samples × 2 rubrics (tests/helpers/team_store.py: tags, intents, skewed judge scores), a
task holding every verdict (overlap 1, one expert: a queue of N items), then times what the app does when a queue is
opened (ui/team/actions: the task, one page of 25 rows with the total count, the expert's progress, the first item),
the lead's adjudication queue, and the single-expert audit app's queue over the same N verdicts (count + first page
+ its text), each the median of --repeat runs.

    nice -n 10 .venv/bin/python benchmarks/pipeline/team_queue_bench.py --n 100000                      # a SQLite file
    nice -n 10 .venv/bin/python benchmarks/pipeline/team_queue_bench.py --n 100000 --store postgresql://user@host:5432/empty_db
    nice -n 10 .venv/bin/python benchmarks/pipeline/team_queue_bench.py --n 100000 --postgres           # a throw-away server

--postgres starts a PostgreSQL server from Debian's binaries on 127.0.0.1 (tests/helpers/postgres_server.py, as
the tests do: fsync off, so build times are not a production server's; read times are what is measured).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))     # the repository: tests.helpers builds the store

from rubriceval.audit.sessions import Member  # noqa: E402
from rubriceval.audit.team import TeamStore  # noqa: E402
from rubriceval.audit.team_adjudication import adjudication_queue  # noqa: E402
from rubriceval.store.audit_models import QueueFilter as AuditFilter  # noqa: E402
from rubriceval.store.location import display_location  # noqa: E402
from rubriceval.store.team_models import TaskSpec  # noqa: E402
from rubriceval.ui.team import actions as act  # noqa: E402
from tests.helpers.team_store import build_team_store  # noqa: E402


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
    parser.add_argument("--store", help="an empty PostgreSQL database (postgresql://…) instead of a SQLite file")
    parser.add_argument("--postgres", action="store_true", help="start a throw-away PostgreSQL server and use it")
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="team-bench-"))
    server = None
    if args.postgres:
        from tests.helpers.postgres_server import PostgresServer

        server = PostgresServer.start(Path(tempfile.mkdtemp(prefix="team-bench-pg-")))
        args.store = server.create_database("bench")
    try:
        run_benchmark(args, args.store or root / "runs.sqlite")
    finally:
        if server is not None:
            server.stop()


def run_benchmark(args: argparse.Namespace, store_path: str | Path) -> None:
    started = time.perf_counter()
    build_team_store(store_path, n_samples=args.n // 2, seed=1, metrics=False)
    print(f"store: {args.n // 2:,} samples × 2 rubrics = {args.n:,} verdicts in {time.perf_counter() - started:.1f} s"
          f" ({display_location(store_path)})")
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
        _audit_queue(team, args.repeat)


def _audit_queue(team: TeamStore, repeat: int) -> None:
    """The single-expert app's queue over every rubric verdict of the run (ui/queue: count + a first page of 25 with
    its question text), unfiltered and filtered (the 10 % of items reviewed above have expert scores)."""
    cases = [("all, lowest judge score first", AuditFilter()),
             ("rubric + tag=物流", AuditFilter(scorer="soothing", tag="物流")),
             ("intent=退款申请 + judge 1–2", AuditFilter(intent="退款申请", score_min=1, score_max=2)),
             ("disagreement, largest gap first", AuditFilter(status="disagreement", order="gap_desc")),
             ("unaudited by me, judges' doubt first", AuditFilter(status="unaudited_by_me", expert="ann",
                                                                   order="uncertain_first"))]
    for label, flt in cases:
        def open_queue(flt=flt):
            rows = team.audit.queue("team-run", flt)
            team.audit.with_text("team-run", rows[:25])
            return rows
        seconds, rows = timed(open_queue, repeat)
        print(f"audit app queue [{label}]: {len(rows):,} rows, count + first page + text: {seconds * 1000:.0f} ms")


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
