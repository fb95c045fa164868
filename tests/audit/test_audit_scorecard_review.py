"""The single-expert audit app's scorecard review tab through its HTTP API (gradio_client), issue 25.6: the expert
opens a run's scorecard verdicts, reads a conversation's total, deductions with their evidence marked on the escaped
transcript, N/A items and fatal hits, confirms one deduction, rejects one with a reason and adds a missed item —
stored through the team app's ReviewStore under the expert's name, so the per-item precision and recall count them.
A run without scorecard verdicts shows no tab, and its list says why. SQLite and PostgreSQL."""
from __future__ import annotations

import asyncio
import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import pytest  # noqa: E402
from gradio_client import Client  # noqa: E402

from rubriceval.audit.scorecard_reviews import ReviewStore, item_trust  # noqa: E402
from rubriceval.data.sample import Sample  # noqa: E402
from rubriceval.i18n import t  # noqa: E402
from rubriceval.scorecard.schema import Scorecard  # noqa: E402
from rubriceval.scorecard.score import score_scorecard  # noqa: E402
from rubriceval.store.runs import RunConfig, RunStore  # noqa: E402
from rubriceval.store.scorecards import ScorecardStore  # noqa: E402
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply  # noqa: E402
from rubriceval.ui.audit.app import build_app, launch  # noqa: E402
from tests.helpers.store_copy import empty_store  # noqa: E402
from tests.ui.test_ui_app import free_port  # noqa: E402

HOSTILE = '<img src=x onerror="window.__pwned=1">验证码'
CARD = {"id": "qa", "name": "qa", "dimensions": [{"id": "d"}],
        "items": [{"id": "resolve", "name": "未解决问题", "dimension": "d", "points": -5,
                   "question": "客服是否解决了问题？"},
                  {"id": "closing", "dimension": "d", "points": -2,
                   "check": {"type": "final_turn", "phrases": ["还有什么"]}},
                  {"id": "soothe", "dimension": "d", "points": -3, "question": "客服是否安抚了用户？",
                   "applies_when": {"pattern": "投诉", "roles": ["user"]}},
                  {"id": "code", "dimension": "d", "fatal": True,
                   "check": {"type": "must_not_mention", "phrases": ["验证码"], "turns": "assistant"}}]}


def conversation(sid: str, answer: str) -> Sample:
    return Sample.model_validate({"id": sid, "question": "", "conversation": {
        "id": sid, "turns": [{"role": "user", "content": "在吗 <b>x</b>"}, {"role": "assistant", "content": answer}]}})


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest):
    store_path = empty_store(request, "audit_scorecard")
    runs = RunStore(store_path)
    card = Scorecard.model_validate(CARD)
    samples = [conversation("c0", "好的，还有什么可以帮您？"), conversation("c1", "好的"),
               conversation("c2", "请告诉我" + HOSTILE)]
    plain = runs.create_run(RunConfig(), samples, [], name="plain")          # no scorecard: no tab
    run_id = runs.create_run(RunConfig(), samples, [], name="scored")
    judge = ScriptedJudge(lambda _: yes_no_reply(0.1))          # the judge says no: every one unresolved, a hit
    ScorecardStore(runs).register(run_id, [card])
    ScorecardStore(runs).save(run_id, [asyncio.run(score_scorecard(card, s, judge, run_id=run_id)) for s in samples])
    runs.close()
    app = launch(store_path, port=free_port(), block=False, quiet=True, lang="en")
    yield app, store_path, run_id, plain, card
    app.close()
    app.audit_store.close()


def client(served) -> Client:
    return Client(served[0].local_url, verbose=False, download_files=False)


def test_the_expert_confirms_rejects_and_adds_a_missed_item(served) -> None:
    _, store_path, run_id, _, card = served
    c = client(served)
    intro, table, verdicts = c.predict(run_id, "en", api_name="/scorecard_list")
    assert intro.startswith("3 conversation(s) with a scorecard verdict")
    assert [r[0] for r in table["data"]] == ["c0", "c1", "c2"]
    assert [r[2] for r in table["data"]] == ["95/100", "93/100", "0/100"]        # −5; −5 −2; fatal → 0
    assert verdicts["value"] == "c0|qa"
    view, items = c.predict(run_id, "c1|qa", "en", api_name="/scorecard_open")
    assert "<b>未解决问题</b> <code>resolve</code> hit -5" in view               # the card's name beside the id
    assert "p(yes) 0.10" in view                                              # the deduction's evidence
    assert "N/A: soothe" in view                                              # no 投诉: soothe does not apply
    assert "&lt;b&gt;x&lt;/b&gt;" in view and "<b>x</b>" not in view          # the transcript escaped
    assert [i[1] for i in items["choices"]][:2] == ["resolve", "closing"]     # hits first
    # No name, then a rejection without a reason: refused, nothing stored.
    status, *_ = c.predict("", run_id, "c1|qa", "resolve", "confirm", "", "en", api_name="/scorecard_save")
    assert status.startswith("⚠ enter your name")
    status, *_ = c.predict("王专家", run_id, "c0|qa", "resolve", "reject", " ", "en", api_name="/scorecard_save")
    assert status.startswith("⚠ a reason (the note) is required")
    status, view, items, table, note = c.predict("王专家", run_id, "c1|qa", "resolve", "confirm", "确实没解决", "en",
                                                 api_name="/scorecard_save")
    assert status == "✓ saved: resolve confirm" and "latest review: confirm (王专家) · 确实没解决" in view
    assert items["value"] == "resolve" and ("resolve · hit -5 · confirm", "resolve") in map(tuple, items["choices"])
    assert next(r for r in table["data"] if r[0] == "c1")[4] == 1 and note == ""
    status, *_ = c.predict("王专家", run_id, "c0|qa", "resolve", "reject", "其实解决了", "en",
                           api_name="/scorecard_save")
    assert status == "✓ saved: resolve reject"
    # c0 closed politely: closing is clear there, so it cannot be confirmed — only added as missed.
    status, *_ = c.predict("王专家", run_id, "c0|qa", "closing", "confirm", "", "en", api_name="/scorecard_save")
    assert status.startswith("⚠") and "only a hit can be confirmed or rejected" in status
    status, *_ = c.predict("李专家", run_id, "c0|qa", "closing", "missed", "结束语太敷衍", "en",
                           api_name="/scorecard_save")
    assert status == "✓ saved: closing missed"
    runs = RunStore(store_path)
    try:
        reviews = ReviewStore(runs).reviews(run_id, "qa")
        assert [(r.sample_id, r.item, r.decision, r.reviewer, r.note) for r in reviews] == [
            ("c1", "resolve", "confirm", "王专家", "确实没解决"), ("c0", "resolve", "reject", "王专家", "其实解决了"),
            ("c0", "closing", "missed", "李专家", "结束语太敷衍")]
        stats = item_trust(card, reviews)                   # the per-item trust counts the app's decisions
        assert (stats["resolve"].precision, stats["resolve"].confirmed, stats["resolve"].rejected) == (0.5, 1, 1)
        assert (stats["closing"].recall, stats["closing"].missed) == (0.0, 1)
        assert stats["resolve"].precision_ci[0] is not None
    finally:
        runs.close()


def test_the_chinese_view_marks_the_fatal_deduction_on_the_escaped_transcript(served) -> None:
    _, _, run_id, _, _ = served
    c = client(served)
    intro, table, _ = c.predict(run_id, "zh", api_name="/scorecard_list")
    assert intro.startswith("3 通对话有评分表结论") and "总分" in table["headers"]
    view, items = c.predict(run_id, "c2|qa", "zh", api_name="/scorecard_open")
    assert "扣分项" in view and "一票否决: code" in view and "0/100" in view and "<b>code</b> 命中 · 一票否决" in view
    # The deduction's turn is marked and its quoted span highlighted under the item; the hostile text stays text.
    assert 'id="turn-2"' in view and "cite-fail" in view and '<mark class="ev-span" title="code">验证码</mark>' in view
    assert "<img" not in view and "&lt;img src=x onerror=" in view


def test_a_run_without_scorecards_shows_no_tab_and_says_why(served) -> None:
    app, store_path, run_id, plain, _ = served
    intro, table, verdicts = client(served).predict(plain, "en", api_name="/scorecard_list")
    assert intro == t("scr_none", "en") and not verdicts["choices"] and not (table or {}).get("data")
    assert app.audit_layout.scorecard.tab.visible          # the app opened on the scored run (the latest)
    other = build_app(store_path, run=plain, lang="en")
    try:
        assert other.audit_layout.scorecard.tab.visible is False
    finally:
        other.audit_store.close()
