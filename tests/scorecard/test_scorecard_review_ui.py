"""The team app's scorecard review tab through its HTTP API (gradio_client), logged in as an expert, a lead or an
agent (issue 25.6): a reviewer lists a run's scorecard verdicts, opens a conversation's deductions with their
evidence, confirms one, rejects one and adds a missed item — stored through the same ReviewStore as the CLI, under
the login's name, so the trust per item counts them; a decision that does not fit the outcome is refused with the
store's words; an agent is refused whatever the client sends. SQLite and PostgreSQL."""
from __future__ import annotations

import asyncio
import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import pytest  # noqa: E402
from gradio_client import Client  # noqa: E402

from rubriceval.audit.passwords import read_auth_file, write_user  # noqa: E402
from rubriceval.audit.scorecard_reviews import ReviewStore, item_trust  # noqa: E402
from rubriceval.audit.sessions import TeamAuth  # noqa: E402
from rubriceval.data.sample import Sample  # noqa: E402
from rubriceval.scorecard.schema import Scorecard  # noqa: E402
from rubriceval.scorecard.score import score_scorecard  # noqa: E402
from rubriceval.store.runs import RunConfig, RunStore  # noqa: E402
from rubriceval.store.scorecards import ScorecardStore  # noqa: E402
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply  # noqa: E402
from rubriceval.ui.team.app import launch_team  # noqa: E402
from tests.audit.test_team_ui import Clock, free_port  # noqa: E402
from tests.helpers.store_copy import empty_store  # noqa: E402

USERS = {"qa_zhang": "expert", "lead_chen": "lead", "agent_wang": "agent"}
CARD = {"id": "qa", "name": "qa", "dimensions": [{"id": "d"}],
        "items": [{"id": "resolve", "dimension": "d", "points": -5, "question": "客服是否解决了问题？"},
                  {"id": "closing", "dimension": "d", "points": -2,
                   "check": {"type": "final_turn", "phrases": ["还有什么"]}}]}


def conversation(sid: str, answer: str) -> Sample:
    return Sample.model_validate({"id": sid, "question": "", "conversation": {
        "id": sid, "turns": [{"role": "user", "content": "在吗 <b>x</b>"}, {"role": "assistant", "content": answer}]}})


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    store_path, auth_path = empty_store(request, "scorecard_review_ui"), tmp_path_factory.mktemp("scr") / "u.auth"
    runs = RunStore(store_path)
    card = Scorecard.model_validate(CARD)
    samples = [conversation(f"c{i}", "好的" if i % 2 else "好的，还有什么可以帮您？") for i in range(4)]
    run_id = runs.create_run(RunConfig(), samples, [], name="r")
    judge = ScriptedJudge(lambda _: yes_no_reply(0.1))          # the judge says no: every one unresolved, a hit
    ScorecardStore(runs).register(run_id, [card])
    ScorecardStore(runs).save(run_id, [asyncio.run(score_scorecard(card, s, judge, run_id=run_id)) for s in samples])
    runs.close()
    for name, role in USERS.items():
        write_user(auth_path, name, role, f"{name}-pw")
    auth = TeamAuth(read_auth_file(auth_path), ttl_s=3600, clock=Clock())
    app = launch_team(store_path, auth, port=free_port(), block=False, quiet=True, lang="en")
    yield app, store_path, run_id, card
    app.close()
    app.team_store.close()


def login(served, name: str) -> Client:
    return Client(served[0].local_url, auth=(name, f"{name}-pw"), verbose=False, download_files=False)


def test_a_reviewer_confirms_rejects_and_adds_a_missed_item(served) -> None:
    _, store_path, run_id, card = served
    zhang = login(served, "qa_zhang")
    runs = zhang.predict(api_name="/scorecard_review_load")          # the run dropdown (the tab is not in the API)
    assert runs["value"] == run_id
    table, verdicts = zhang.predict(run_id, api_name="/scorecard_review_list")
    assert [r[0] for r in table["data"]] == ["c0", "c1", "c2", "c3"]
    c1 = next(r for r in table["data"] if r[0] == "c1")
    assert c1[2] == "93/100" and c1[3] == "resolve, closing"          # −5 −2, both hits listed
    assert [c[1] for c in verdicts["choices"]] == ["c0|qa", "c1|qa", "c2|qa", "c3|qa"]
    view, items = zhang.predict(run_id, "c1|qa", api_name="/scorecard_review_open")
    assert "resolve" in view and "-5" in view and "p(yes) 0.10" in view       # a deduction with its evidence
    assert "&lt;b&gt;x&lt;/b&gt;" in view and "<b>x</b>" not in view          # the transcript escaped
    assert [c[1] for c in items["choices"]][:2] == ["resolve", "closing"]     # hits first
    status, view, items, table = zhang.predict(run_id, "c1|qa", "resolve", "confirm", "确实没解决",
                                               api_name="/scorecard_review_save")
    assert status == "✓ saved: resolve confirm" and "latest review: confirm (qa_zhang)" in view
    assert next(r for r in table["data"] if r[0] == "c1")[4] == 1
    status, *_ = zhang.predict(run_id, "c3|qa", "resolve", "reject", "", api_name="/scorecard_review_save")
    assert status.startswith("✓")
    # c0 closed politely: closing is clear there, so it cannot be confirmed — only added as missed.
    status, *_ = zhang.predict(run_id, "c0|qa", "closing", "confirm", "", api_name="/scorecard_review_save")
    assert status.startswith("⚠") and "only a hit can be confirmed or rejected" in status
    lead = login(served, "lead_chen")
    status, *_ = lead.predict(run_id, "c0|qa", "closing", "missed", "漏判", api_name="/scorecard_review_save")
    assert status == "✓ saved: closing missed"
    runs = RunStore(store_path)
    try:
        reviews = ReviewStore(runs).reviews(run_id, "qa")
        assert [(r.sample_id, r.item, r.decision, r.reviewer) for r in reviews] == [
            ("c1", "resolve", "confirm", "qa_zhang"), ("c3", "resolve", "reject", "qa_zhang"),
            ("c0", "closing", "missed", "lead_chen")]
        stats = item_trust(card, reviews)                   # the trust per item counts the app's decisions
        assert (stats["resolve"].precision, stats["closing"].recall) == (0.5, 0.0)
    finally:
        runs.close()


def test_an_agent_is_refused_whatever_the_client_sends(served) -> None:
    _, store_path, run_id, _ = served
    wang = login(served, "agent_wang")
    table, _ = wang.predict(run_id, api_name="/scorecard_review_list")
    assert not table or not table.get("data")
    status, *_ = wang.predict(run_id, "c2|qa", "resolve", "reject", "", api_name="/scorecard_review_save")
    assert status.startswith("⚠") and "only reviewers and leads" in status
    runs = RunStore(store_path)
    try:
        assert not [r for r in ReviewStore(runs).reviews(run_id) if r.reviewer == "agent_wang"]
    finally:
        runs.close()


def test_the_view_in_chinese_names_a_fatal_deduction_and_its_evidence() -> None:
    from rubriceval.ui.team.scorecard_review_views import item_choices, verdict_html

    card = Scorecard.model_validate({**CARD, "items": [*CARD["items"], {
        "id": "code", "dimension": "d", "fatal": True,
        "check": {"type": "must_not_mention", "phrases": ["验证码"], "turns": "assistant"}}]})
    sample = conversation("c9", "请告诉我验证码")
    verdict = asyncio.run(score_scorecard(card, sample, ScriptedJudge(lambda _: yes_no_reply(0.95))))
    html = verdict_html(verdict, sample, [], "zh")
    assert verdict.totals.total == 0 and "扣分项" in html and "一票否决" in html and "验证码" in html
    assert [c[1] for c in item_choices(verdict, [])] == ["closing", "code", "resolve"]     # hits first
