"""The review queues give the same rows in the same order on SQLite and on PostgreSQL: NULL scores, ties, several
judgements' spread and disagreement, scorer ids and expert names whose order a server collation could change."""
from __future__ import annotations

import random
import uuid
from pathlib import Path

import psycopg
import pytest

from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import adjudication_queue, opinions
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.store.audit import AuditStore
from rubriceval.store.audit_models import QueueFilter
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.team_models import QueueFilter as TeamFilter
from rubriceval.store.team_models import TaskSpec
from tests.helpers.postgres_server import PostgresServer

# Byte order and a typical server collation (en_US) disagree on these: case, '_' vs '-', CJK.
SCORERS = ("Tone", "tone_b", "tone-a")
EXPERTS = ("bob", "Alice", "王工", "alice", "_ops")
ORDERS = ("judge_asc", "judge_desc", "dataset", "gap_desc", "uncertain_first")


@pytest.fixture()
def en_us_postgres_url(postgres_server: PostgresServer) -> str:
    """A database whose default collation is ICU's en-US, as many servers have (the test server's C.UTF-8 sorts as
    SQLite does, so it could not tell a missing byte-wise ORDER BY)."""
    name = f"en_us_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE \"{name}\" LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8' "
                      "TEMPLATE template0")
    return postgres_server.url(name)


def _verdict(rng: random.Random, sample_id: str, scorer: str) -> Verdict:
    if rng.random() < 0.1:
        return Verdict.unscored(sample_id, scorer, "timeout", "slow")
    score = float(rng.choice((1, 2, 3, 3, 4, 4, 5)))                  # many ties
    details = {}
    if rng.random() < 0.4:
        spread = rng.choice((0, 1, 2, 3))
        details = {rng.choice(("self_consistency", "panel")): {"spread": spread, "disagreement": spread >= 2}}
    return Verdict(sample_id=sample_id, scorer=scorer, score=score, details=details)


def _build(target: str | Path) -> None:
    rng = random.Random(7)
    store = RunStore(target)
    samples = [Sample(id=f"s{i:03d}", question=f"问题{i}", tags=[rng.choice(("退款", "物流", "VIP"))],
                      intent=rng.choice(("催单", "退款申请", ""))) for i in range(60)]
    run = store.create_run(RunConfig(), samples,
                           [(s, "rubric", "1", {"id": s, "failure_tags": ["未先安抚", "Zz", "aa"]}) for s in SCORERS],
                           name="r")
    store.save_verdicts(run, [(_verdict(rng, s.id, scorer), "") for s in samples for scorer in SCORERS])
    store.close()
    with AuditStore(target) as audit:
        for sample in samples[::3]:
            for scorer in SCORERS[:2]:
                for expert in rng.sample(EXPERTS, rng.randint(1, 3)):      # saved in no particular order
                    item = audit.item("r", sample.id, scorer)
                    audit.save_response("r", sample.id, scorer, expert=expert, score=rng.randint(1, 5),
                                        reason="理由", expected=item.versions)


def _queues(target: str | Path) -> dict[str, list]:
    out: dict[str, list] = {}
    with AuditStore(target) as audit:
        for order in ORDERS:
            for flt in (QueueFilter(order=order, expert="alice"), QueueFilter(order=order, tag="退款"),
                        QueueFilter(order=order, status="disagreement", intent="催单"),
                        QueueFilter(order=order, score_min=3, status="unaudited_by_me", expert="bob")):
                out[flt.model_dump_json()] = list(audit.queue("r", flt))
        out["facets"] = [audit.facets("r")]
        out["with_text"] = audit.with_text("r", out[QueueFilter(order="dataset", expert="alice").model_dump_json()][:7])
    return out


def _team(target: str | Path) -> dict[str, list]:
    with TeamStore(target) as team:
        task = team.create_task(TaskSpec(run="r", rubrics=list(SCORERS), n=20, overlap=3, experts=list(EXPERTS),
                                         seed=4, name="t"), created_by="lead")
        rng = random.Random(3)
        for expert in EXPERTS:
            for row in team.queue(task.task_id, expert, page_size=100).rows:
                if rng.random() < 0.3:
                    team.mark_unsure(task.task_id, row.item_no, expert, note="不确定", expected_version=0)
                else:
                    team.save_review(task.task_id, row.item_no, expert, score=rng.randint(1, 5),
                                     tags=rng.sample(["未先安抚", "Zz", "aa"], 2), expected_version=0)
        routed = adjudication_queue(team, task.task_id)
        return {"queue": [team.queue(task.task_id, e, TeamFilter(tag="退款"), page_size=100).rows for e in EXPERTS],
                "progress": team.progress(task.task_id),
                "adjudication": [r.model_dump(exclude={"sample_id"}) | {"s": r.sample_id} for r in routed],
                "opinions": [opinions(team, task.task_id, r.item_no) for r in routed],
                "tags": [team.assignment(task.task_id, r.item_no, e).tags for r in routed[:5]
                         for e in EXPERTS if any(o.expert == e for o in opinions(team, task.task_id, r.item_no))]}


def test_audit_and_team_queues_are_identical_on_sqlite_and_postgresql(tmp_path: Path,
                                                                     en_us_postgres_url: str) -> None:
    postgres_url = en_us_postgres_url
    sqlite_path = tmp_path / "runs.sqlite"
    for target in (sqlite_path, postgres_url):
        _build(target)
    on_sqlite, on_postgresql = _queues(sqlite_path), _queues(postgres_url)
    assert on_sqlite.keys() == on_postgresql.keys()
    for key in on_sqlite:
        assert on_sqlite[key] == on_postgresql[key], key
    # The data exercise what the test is about: nulls, ties, disputed rows, several experts per row.
    everything = on_sqlite[QueueFilter(order="judge_asc", expert="alice").model_dump_json()]
    assert any(r.judge_score is None for r in everything) and any(r.disputed for r in everything)
    assert any(r.human_scores.count("=") >= 3 for r in everything)
    assert on_sqlite["facets"][0]["scorers"] == sorted(SCORERS)
    assert _team(sqlite_path) == _team(postgres_url)
