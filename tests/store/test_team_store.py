"""Team audits in the run store: sampling (stratified by judge score and tag), overlap, blind queues, routing to
the lead (disagreement, pass/fail split, unsure), adjudication, the append-only records, optimistic concurrency with
two writers, and a store of the previous schema upgraded. Every test runs on SQLite and on PostgreSQL (a real
server, tests/conftest.py)."""
from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from rubriceval import AuditStore
from rubriceval.audit.sampling import assign, proportional_allocation, stratum
from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import (
    adjudicate,
    adjudication_queue,
    adjudications,
    final_labels,
    item_version,
    opinions,
)
from rubriceval.store.db import Database
from rubriceval.store.location import is_server_url
from rubriceval.store.migrations import schema_version
from rubriceval.store.team_models import QueueFilter, TaskSpec, TeamError
from tests.helpers.store_copy import DATABASE_ERRORS, empty_store, fresh_copy
from tests.helpers.team_store import build_team_store

N_SAMPLES = 400


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def base_store(request: pytest.FixtureRequest) -> str | Path:
    """Built once per module and back end; each test writes on its own copy."""
    target = empty_store(request, "team")
    build_team_store(target, n_samples=N_SAMPLES, seed=3)
    return target


@pytest.fixture()
def team(base_store: str | Path, tmp_path: Path):
    with TeamStore(fresh_copy(base_store, tmp_path)) as store:
        yield store


def spec(**changes) -> TaskSpec:
    base = {"run": "team-run", "rubrics": ["soothing"], "n": 100, "overlap": 2, "experts": ["ann", "bob", "cat"]}
    return TaskSpec(**{**base, **changes})


def test_stratified_sampling_keeps_each_score_and_tag_cell_in_proportion(team: TeamStore) -> None:
    task = team.create_task(spec(rubrics=["soothing", "links"], n=100), created_by="lead")
    assert task.n_items == 200 and task.blind and task.sampling == "stratified"
    run_id = task.run_id
    for rubric in ("soothing", "links"):
        population = Counter(stratum(c) for c in team.candidates(run_id, rubric, with_spread=False))
        sampled = Counter(r["stratum"] for r in team.query(
            "SELECT stratum FROM team_task_items WHERE task_id = :t AND scorer = :s", {"t": task.task_id, "s": rubric}))
        assert sum(sampled.values()) == 100
        for cell, size in population.items():
            assert abs(sampled[cell] - 100 * size / N_SAMPLES) < 1, (cell, sampled[cell], size)
    rows = team.query("SELECT sample_id, scorer FROM team_task_items WHERE task_id = :t", {"t": task.task_id})
    assert len({(r[0], r[1]) for r in rows}) == 200                        # no verdict twice
    # Rubrics alternate in the queue, and the order is not the dataset's.
    first = [r["scorer"] for r in team.query("SELECT scorer FROM team_task_items WHERE task_id = :t ORDER BY item_no "
                                             "LIMIT 4", {"t": task.task_id})]
    assert first == ["soothing", "links", "soothing", "links"]


def test_the_same_seed_draws_the_same_items_and_another_seed_others(team: TeamStore) -> None:
    a = team.create_task(spec(seed=1, name="a"), created_by="lead")
    b = team.create_task(spec(seed=1, name="b"), created_by="lead")
    c = team.create_task(spec(seed=2, name="c"), created_by="lead")

    def items(task):
        return [r[0] for r in team.query("SELECT sample_id FROM team_task_items WHERE task_id = :t ORDER BY item_no",
                                         {"t": task.task_id})]
    assert items(a) == items(b) != items(c)


def test_allocation_is_proportional_with_largest_remainders() -> None:
    assert proportional_allocation({"a": 50, "b": 30, "c": 20}, 10) == {"a": 5, "b": 3, "c": 2}
    assert proportional_allocation({"a": 1, "b": 1, "c": 1}, 2) == {"a": 1, "b": 1, "c": 0}
    assert sum(proportional_allocation({"x": 7, "y": 3}, 100).values()) == 10      # never more than there are


def test_lowest_first_and_least_sure_first(team: TeamStore) -> None:
    low = team.create_task(spec(n=30, sampling="lowest", name="low"), created_by="lead")
    scores = [r[0] for r in team.query("SELECT judge_score FROM team_task_items WHERE task_id = :t ORDER BY item_no",
                                       {"t": low.task_id})]
    everything = sorted(c.judge_score for c in team.candidates(low.run_id, "soothing", with_spread=False)
                        if c.judge_score is not None)
    assert scores == everything[:30]
    unsure = team.create_task(spec(n=10, sampling="least_sure", name="unsure"), created_by="lead")
    assert unsure.n_items == 10 and unsure.sampling == "least_sure"


def test_overlap_gives_each_item_k_distinct_experts_and_even_shares(team: TeamStore) -> None:
    task = team.create_task(spec(n=100, overlap=2), created_by="lead")
    per_item = Counter()
    for r in team.query("SELECT item_no, expert FROM team_assignments WHERE task_id = :t", {"t": task.task_id}):
        per_item[r["item_no"]] += 1
    assert set(per_item.values()) == {2} and len(per_item) == 100
    shares = {p.expert: p.assigned for p in team.progress(task.task_id)}
    assert sum(shares.values()) == 200 and max(shares.values()) - min(shares.values()) <= 2
    pairs = Counter(tuple(g) for g in assign(12, ["a", "b", "c", "d"], 2))
    assert len(pairs) > 2                                                   # not always the same two together
    with pytest.raises(TeamError, match="overlap 4 needs at least 4 experts"):
        team.create_task(spec(overlap=4, name="too-many"), created_by="lead")
    with pytest.raises(TeamError, match="no rubric nope"):
        team.create_task(spec(rubrics=["nope"], name="nope"), created_by="lead")


def test_blind_queue_hides_the_judge_until_the_expert_saves(team: TeamStore) -> None:
    task = team.create_task(spec(n=20, overlap=1, experts=["ann", "bob"]), created_by="lead")
    page = team.queue(task.task_id, "ann")
    assert page.total == 10 and all(r.judge_score is None and not r.judge_shown for r in page.rows)
    with pytest.raises(TeamError, match="blind"):
        team.queue(task.task_id, "ann", QueueFilter(score_max=2))
    first = page.rows[0]
    opened = team.assignment(task.task_id, first.item_no, "ann")
    assert not opened.judge_shown and opened.failure_tags == ["未先安抚", "缺少链接", "编造政策"]
    with pytest.raises(TeamError, match="not assigned to bob"):
        team.assignment(task.task_id, first.item_no, "bob")
    saved = team.save_review(task.task_id, first.item_no, "ann", score=3, tags=["未先安抚"], expected_version=0)
    assert saved.ok and saved.version == 1
    after = team.queue(task.task_id, "ann").rows[0]
    assert after.judge_shown and after.state == "scored" and after.score == 3
    with AuditStore(team.path) as audit:
        [response] = audit.responses(task.run_id, sample_id=first.sample_id, scorer=first.scorer)
    assert (response.expert, response.score, response.reason) == ("ann", 3, "")    # no reason needed when blind
    assert team.assignment(task.task_id, first.item_no, "ann").tags == ["未先安抚"]
    with pytest.raises(TeamError, match="declares no failure tag 编造链接"):
        team.save_review(task.task_id, first.item_no, "ann", score=3, tags=["编造链接"], expected_version=1)
    # The lead sees judge scores and may filter by them.
    assert all(r.judge_shown for r in team.queue(task.task_id, "bob", as_lead=True).rows)
    assert team.queue(task.task_id, "bob", QueueFilter(score_max=2), as_lead=True).total >= 0
    # A second save after the reveal is recorded as open review.
    team.save_review(task.task_id, first.item_no, "ann", score=4, expected_version=1)
    history = team.review_history(task.task_id, first.item_no)
    assert [h["blind"] for h in history] == [True, False]


def test_open_task_shows_the_judge_from_the_start(team: TeamStore) -> None:
    task = team.create_task(spec(n=5, overlap=1, experts=["ann"], blind=False), created_by="lead")
    page = team.queue(task.task_id, "ann", QueueFilter(score_min=1))
    assert all(r.judge_shown for r in page.rows)


def _task_with_pairs(team: TeamStore):
    task = team.create_task(spec(n=8, overlap=2, experts=["ann", "bob"]), created_by="lead")
    return task, [r.item_no for r in team.queue(task.task_id, "ann").rows]


def test_disagreement_pass_fail_and_unsure_go_to_the_lead(team: TeamStore) -> None:
    task, items = _task_with_pairs(team)
    plan = {items[0]: (2, 4), items[1]: (3, 4), items[2]: (4, 5), items[3]: (5, 5)}
    for item_no, (a, b) in plan.items():
        team.save_review(task.task_id, item_no, "ann", score=a, expected_version=0)
        team.save_review(task.task_id, item_no, "bob", score=b, expected_version=0)
    team.save_review(task.task_id, items[4], "ann", score=4, expected_version=0)
    team.mark_unsure(task.task_id, items[4], "bob", note="答案引用的政策我查不到", expected_version=0)
    with pytest.raises(TeamError, match="say what makes you unsure"):
        team.mark_unsure(task.task_id, items[5], "bob", note=" ", expected_version=0)
    with pytest.raises(TeamError, match="already saved a score"):
        team.mark_unsure(task.task_id, items[0], "ann", note="x", expected_version=1)
    routed = {r.item_no: r.route for r in adjudication_queue(team, task.task_id)}
    assert routed == {items[0]: "disagreement", items[1]: "pass_fail", items[4]: "unsure"}
    [unsure] = [o for o in opinions(team, task.task_id, items[4]) if o.expert == "bob"]
    assert unsure.state == "unsure" and unsure.note == "答案引用的政策我查不到" and unsure.score is None


def test_adjudication_sets_the_final_label_and_keeps_every_opinion(team: TeamStore) -> None:
    task, items = _task_with_pairs(team)
    item = items[0]
    team.save_review(task.task_id, item, "ann", score=2, note="没安抚", expected_version=0)
    team.save_review(task.task_id, item, "bob", score=4, expected_version=0)
    version = item_version(team, task.task_id, item)
    with pytest.raises(TeamError, match="reason is required"):
        adjudicate(team, task.task_id, item, "lead", label=3, reason="", expected_version=version)
    done = adjudicate(team, task.task_id, item, "lead", label=3, reason="有致歉但没有时间", expected_version=version)
    assert done.ok
    [row] = adjudication_queue(team, task.task_id)
    assert row.label == 3 and adjudication_queue(team, task.task_id, include_settled=False) == []
    [record] = adjudications(team, task.task_id, item)
    assert {(o.expert, o.score) for o in record.opinions} == {("ann", 2), ("bob", 4)} and record.route == "disagreement"
    sample_id = row.sample_id
    assert final_labels(team, task.run_id, "soothing") == {sample_id: 3}
    log = [(e.expert, e.action) for e in team.audit.audit_log(task.run_id) if e.sample_id == sample_id]
    assert ("ann", "team_review") in log and ("bob", "team_review") in log and ("lead", "team_adjudicate") in log


def test_team_records_are_append_only(team: TeamStore) -> None:
    task, items = _task_with_pairs(team)
    team.save_review(task.task_id, items[0], "ann", score=2, expected_version=0)
    team.save_review(task.task_id, items[0], "bob", score=5, expected_version=0)
    adjudicate(team, task.task_id, items[0], "lead", label=4, reason="r", expected_version=0)
    for table in ("team_reviews", "team_adjudications"):
        for sql in (f"UPDATE {table} SET note = 'x'" if table == "team_reviews" else f"UPDATE {table} SET label = 1",
                    f"DELETE FROM {table}"):
            with pytest.raises(DATABASE_ERRORS, match="append-only"):
                team.conn.execute(sql)
    with pytest.raises(DATABASE_ERRORS, match="append-only"):
        team.conn.execute("DELETE FROM audit_log")
    if is_server_url(team.path):                      # PostgreSQL has TRUNCATE too: refused as well
        for table in ("team_reviews", "audit_log"):
            with pytest.raises(DATABASE_ERRORS, match="append-only"):
                team.conn.execute(f"TRUNCATE {table}")
    assert team.query("SELECT COUNT(*) FROM team_reviews")[0][0] == 2


def test_two_writers_on_one_assignment_one_wins_the_other_is_a_logged_conflict(team: TeamStore) -> None:
    task, items = _task_with_pairs(team)
    item = items[0]
    results = []
    barrier = threading.Barrier(2)

    def write(score: int) -> None:
        with TeamStore(team.path) as mine:          # its own connection, as a second app process would have
            barrier.wait()
            results.append(mine.save_review(task.task_id, item, "ann", score=score, expected_version=0))
    threads = [threading.Thread(target=write, args=(s,)) for s in (2, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.ok for r in results) == [False, True]
    winner = next(r for r in results if r.ok)
    assert winner.version == 1 and next(r for r in results if not r.ok).version == 1
    outcomes = [e.outcome for e in team.audit.audit_log(task.run_id) if e.action == "team_review"]
    assert sorted(outcomes) == ["conflict", "saved"]
    # Two experts on the same item never conflict: each writes their own opinion.
    assert team.save_review(task.task_id, item, "bob", score=3, expected_version=0).ok


def test_two_leads_adjudicating_the_same_item(team: TeamStore) -> None:
    task, items = _task_with_pairs(team)
    team.save_review(task.task_id, items[0], "ann", score=1, expected_version=0)
    team.save_review(task.task_id, items[0], "bob", score=5, expected_version=0)
    first = adjudicate(team, task.task_id, items[0], "lead-a", label=2, reason="a", expected_version=0)
    second = adjudicate(team, task.task_id, items[0], "lead-b", label=5, reason="b", expected_version=0)
    assert first.ok and not second.ok and "another lead" in second.message
    assert [a.label for a in adjudications(team, task.task_id, items[0])] == [2]


def test_a_store_of_the_previous_schema_opens_upgraded(store_target: str | Path) -> None:
    build_team_store(store_target, n_samples=20, seed=1, metrics=False)
    db = Database(store_target)
    # Back to version 2, as a store written before the team tables existed.
    with db:
        for name in ("team_tasks", "team_task_items", "team_assignments", "team_reviews", "team_adjudications",
                     "team_item_tags", "team_metric_corrections", "team_sessions", "team_login_failures"):
            db.execute(f"DROP TABLE {name}")
        db.set_schema_version(2)
    verdicts = db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    db.close()
    with TeamStore(store_target) as team:
        assert schema_version(team.conn) >= 3          # the team step applied (later steps may follow)
        assert team.conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == verdicts == 40
        task = team.create_task(spec(n=5, overlap=1, experts=["ann"]), created_by="lead")
        assert task.n_items == 5
