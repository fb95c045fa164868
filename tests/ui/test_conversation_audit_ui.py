"""The audit app's conversation view without a browser: the transcript (bubbles, folded tool calls and contexts,
cited turns), escaping of hostile text, and the turn-verdict action against the store."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from rubriceval import AuditStore, Conversation, Evidence, Verdict
from rubriceval.store.audit_models import AuditError
from rubriceval.store.turn_audit import ExpertTurnVerdict
from rubriceval.ui.audit.actions import open_item, save_verdict
from rubriceval.ui.audit.demo import build_demo_store
from rubriceval.ui.audit.queue import make_filter, open_queue
from rubriceval.ui.audit.turn_actions import save_turn, turn_choices, turn_pane
from rubriceval.ui.common.transcript_view import transcript_html, turn_marks
from tests.helpers.conversation_run import conversation_run

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("convo-ui") / "runs.sqlite"
    conversation_run(path, turn_score=lambda cid, turn: 2 if turn >= 4 else 4)
    return path


@pytest.fixture()
def store(store_path: Path, tmp_path: Path):
    copy = tmp_path / "runs.sqlite"
    with sqlite3.connect(store_path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with AuditStore(copy) as audit:
        yield audit


def bubble(html: str, turn: int) -> str:
    start = html.index(f'id="turn-{turn}"')
    end = html.find('<div class="turn-row', start)
    return html[start:end if end > 0 else None]


def session_on(store: AuditStore, scorer: str, sample_id: str, expert: str = "王工"):
    session = open_queue(store, "latest", make_filter(expert, scorer, None, None, None, None, "all", "dataset"))
    index = next(i for i, r in enumerate(session.rows) if r.sample_id == sample_id)
    return session, open_item(store, session, index, expert)


def test_a_conversation_item_opens_as_a_transcript_with_the_cited_turns(store: AuditStore) -> None:
    session, view = session_on(store, "identity_verification", "refund-revealed-first")
    html = view.sample_html
    assert html.count('class="turn-row') == 8 and "from-user" in html and "from-assistant" in html
    # The check fails at turn 2 (order details before verification): red, with the quoted span marked.
    assert "cite-fail" in bubble(html, 2) and '<mark class="ev-span" title="verify_before_details">E20240510088</mark>' in html
    # The judge's feedback "第2轮…" cites turn 2 too; turns nobody cites are plain.
    assert "评审意见提到本轮" in bubble(html, 2) and 'class="bubble assistant "' in bubble(html, 6)
    assert re.search(r'被引用的轮次：<a href="#turn-2">2</a>', html)
    # Per-turn judge scores (scope assistant_turn): every score shown, the ones below threshold marked.
    _, view = session_on(store, "emotional_soothing_multiturn", "refund-apology-every-turn")
    html = view.sample_html
    assert "4/5" in bubble(html, 2) and "cite-fail" not in bubble(html, 2)
    assert all("cite-fail" in bubble(html, n) and "2/5" in bubble(html, n) for n in (4, 6, 8))


def test_tool_calls_tool_results_and_contexts_are_folded(store: AuditStore) -> None:
    _, view = session_on(store, "closing", "refund-verified")
    html = view.sample_html
    call = bubble(html, 4)                                  # a pure tool call: no text, the call folded
    assert '<details class="tool-call"><summary>工具调用 <code>verify_identity</code></summary>' in call
    assert "&quot;phone_last4&quot;: &quot;3721&quot;" in call
    assert '<details class="tool-result"><summary>工具结果</summary>' in bubble(html, 5)
    assert '<details class="turn-contexts"><summary>本轮参考资料（1）</summary>' in bubble(html, 6)


def test_hostile_text_is_escaped_everywhere_in_the_transcript() -> None:
    conversation = Conversation(id="evil" + HOSTILE, turns=[
        {"role": "user", "content": HOSTILE, "speaker": HOSTILE},
        {"role": "assistant", "content": "", "contexts": [HOSTILE],
         "tool_calls": [{"id": "k1", "name": HOSTILE, "arguments": {"q": HOSTILE}}]},
        {"role": "tool", "tool_call_id": "k1", "content": HOSTILE},
        {"role": "assistant", "content": "抱歉 " + HOSTILE}])
    verdict = Verdict(sample_id="evil", scorer="r", score=1, feedback="第4轮 " + HOSTILE, evidence=[
        Evidence(item=HOSTILE, turn=4, passed=False, span="抱歉", start=0, detail=HOSTILE),
        Evidence(item="judge", score=1, detail="第4轮 " + HOSTILE)])
    expert = ExpertTurnVerdict(entry_id=1, run_id="r", sample_id="evil", scorer="r", item="judge", turn=4,
                               expert=HOSTILE, score=1, action="score_unscored", reason=HOSTILE, saved_at=0)
    for lang in ("zh", "en"):
        html = transcript_html(conversation, verdict, lang, [expert])
        assert "<script" not in html and "<img" not in html and 'onerror="' not in html
        assert html.count("&lt;script&gt;") >= 8
    assert "cite-fail" in bubble(html, 4)


def test_citations_come_from_the_judge_items_own_feedback() -> None:
    conversation = Conversation(id="c", turns=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                                               {"role": "user", "content": "c"}, {"role": "assistant", "content": "d"}])
    # The verdict's feedback repeats a failed check's text ("第 4 轮"); only the judge's own words cite turn 2.
    verdict = Verdict(sample_id="c", scorer="r", score=2, feedback="第2轮很好\n✗ closing: 第 4 轮没有结束语",
                      evidence=[Evidence(item="judge", score=4, detail="第2轮很好"),
                                Evidence(item="closing", turn=4, passed=False, detail="第 4 轮没有结束语")])
    marks = turn_marks(verdict, conversation, "zh")
    assert [c.source for c in marks[2].citations] == ["judge"] and marks[2].state == "cited"
    assert [c.source for c in marks[4].citations] == ["closing"] and marks[4].state == "cite-fail"


def test_turn_action_saves_overrides_and_keeps_the_item_versions(store: AuditStore) -> None:
    session, _ = session_on(store, "emotional_soothing_multiturn", "refund-apology-every-turn")
    item = store.item(session.run_id, "refund-apology-every-turn", "emotional_soothing_multiturn")
    assert turn_choices(item, "en") == [("turn 2 · judge 4/5 for this turn", 2), ("turn 4 · judge 2/5 for this turn", 4),
                                        ("turn 6 · judge 2/5 for this turn", 6), ("turn 8 · judge 2/5 for this turn", 8)]
    with pytest.raises(AuditError, match="reason is required"):
        save_turn(store, session, "王工", 4, "1", "  ")
    with pytest.raises(AuditError, match="choose an agent turn"):
        save_turn(store, session, "王工", None, "1", "x")
    outcome = save_turn(store, session, "王工", "4", "1", "第二次道歉，没有新信息", "zh")
    assert outcome.saved and outcome.message == "✓ 已保存第 4 轮的判定（推翻评审）。"
    assert "王工 1/5" in bubble(turn_pane(store, session).panel_html, 4)
    # The session moved on with the item's version: the conversation-level save right after is not a conflict.
    assert save_verdict(store, session, "王工", "2", "").saved
    [row] = store.turn_verdicts(session.run_id)
    assert (row.turn, row.score, row.judge_score, row.reason) == (4, 1, 2.0, "第二次道歉，没有新信息")
    assert turn_pane(store, session.model_copy(update={"index": -1})).visible is False     # no item open


def test_a_single_turn_item_keeps_its_question_and_answer_view(tmp_path: Path) -> None:
    build_demo_store(tmp_path / "demo.sqlite")
    with AuditStore(tmp_path / "demo.sqlite") as demo:
        session = open_queue(demo, "latest", make_filter("", None, None, None, None, None, "all", "dataset"))
        view = open_item(demo, session, 0)
        assert "transcript" not in view.sample_html and "Question" in view.sample_html
        assert turn_pane(demo, session).visible is False
        with pytest.raises(AuditError, match="not a conversation"):
            save_turn(demo, session, "王工", 2, "1", "x")


def test_a_stale_turn_save_is_reported_as_a_conflict(store: AuditStore) -> None:
    mine, _ = session_on(store, "emotional_soothing_multiturn", "delay-no-handover", "王工")
    theirs, _ = session_on(store, "emotional_soothing_multiturn", "delay-no-handover", "李工")
    assert save_turn(store, theirs, "李工", 6, "1", "敷衍").saved
    outcome = save_turn(store, mine, "王工", 6, "3", "还行")
    assert not outcome.saved and outcome.conflict and "李工" in outcome.message
    assert [(v.expert, v.score) for v in store.turn_verdicts(mine.run_id)] == [("李工", 1)]


def test_the_export_tab_writes_the_turn_verdicts_beside_the_dataset(store: AuditStore, tmp_path: Path) -> None:
    from rubriceval.ui.audit.wiring import AuditHandlers

    session, _ = session_on(store, "emotional_soothing_multiturn", "delay-escalated")
    assert save_turn(store, session, "王工", 6, "5", "转人工及时").saved
    message = AuditHandlers(store, session.run_id, tmp_path / "exports").do_export(session.run_id)
    [line] = [x for x in message.splitlines() if "turn verdicts" in x]
    path = Path(line.split("`")[1])
    assert path.name.endswith("-turn-verdicts.jsonl") and "1 turn verdicts" in line
    assert '"sample_id": "delay-escalated"' in path.read_text(encoding="utf-8")
