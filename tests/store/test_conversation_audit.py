"""Turn-level expert verdicts on conversation rubrics: saved append-only beside the conversation-level responses,
with the same optimistic concurrency, readable and exported, and kept out of the judge–expert agreement."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rubriceval import AuditStore
from rubriceval.store.audit_models import AuditError
from rubriceval.store.turn_audit import export_turn_verdicts
from rubriceval.ui.audit import agreement_panel
from tests.helpers.conversation_run import conversation_run
from tests.helpers.store_copy import DATABASE_ERRORS, empty_store, fresh_copy

SOOTHING = "emotional_soothing_multiturn"     # scope assistant_turn: one judge score per agent turn
IDENTITY = "identity_verification"            # scope conversation: one score, checks cite turns
APOLOGY = "refund-apology-every-turn"         # agent turns 2, 4, 6, 8


def turn_score(conversation_id: str, turn: int) -> int:
    return 2 if turn >= 4 else 4


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store_path(request: pytest.FixtureRequest) -> str | Path:
    target = empty_store(request, "convo")
    conversation_run(target, turn_score=turn_score)
    return target


@pytest.fixture()
def store(store_path: str | Path, tmp_path: Path):
    with AuditStore(fresh_copy(store_path, tmp_path)) as audit:      # each test writes on its own copy
        yield audit


def test_override_agree_and_history_of_a_turn(store: AuditStore) -> None:
    run = store.resolve("latest")
    item = store.item(run, APOLOGY, SOOTHING)
    judged = {e.turn: e.score for e in item.verdict.evidence if e.turn is not None and e.score is not None}
    assert judged == {2: 4, 4: 2, 6: 2, 8: 2}

    first = store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=4, expert="王工", score=1,
                                    reason="第二次道歉，仍然没有新信息", expected=item.versions)
    assert first.ok and first.changes == ["override"] and first.versions.item == item.versions.item + 1
    second = store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=4, expert="王工", score=2, reason="",
                                     expected=first.versions)
    assert second.ok and second.changes == ["agree"]

    [current] = store.turn_verdicts(run, sample_id=APOLOGY)
    assert (current.turn, current.item, current.score, current.action, current.judge_score) == (4, "judge", 2,
                                                                                                 "agree", 2.0)
    history = store.turn_verdicts(run, sample_id=APOLOGY, history=True)
    assert [(v.score, v.action, v.reason) for v in history] == [(1, "override", "第二次道歉，仍然没有新信息"),
                                                                  (2, "agree", "")]
    assert [e.action for e in store.audit_log(run)] == ["save_turn_verdict", "save_turn_verdict"]
    # Append-only, like the audit log and the ground-truth edits.
    for sql in ("UPDATE audit_turn_verdicts SET score = 5", "DELETE FROM audit_turn_verdicts"):
        with pytest.raises(DATABASE_ERRORS, match="append-only"):
            store.conn.execute(sql)


def test_reason_rules_and_which_turns_can_be_judged(store: AuditStore) -> None:
    run = store.resolve("latest")
    versions = store.item(run, APOLOGY, SOOTHING).versions
    with pytest.raises(AuditError, match="reason is required to override the judge's score 4 for turn 2"):
        store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=2, expert="王工", score=1, reason=" ",
                                expected=versions)
    for turn in (1, 3, 9, 0):                               # user turns and turns that do not exist
        with pytest.raises(AuditError, match=f"turn {turn} is not an assistant turn") as raised:
            store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=turn, expert="王工", score=3, reason="x",
                                    expected=versions)
        assert raised.value.field == "turn" and "2, 4, 6, 8" in raised.value.hint
    with pytest.raises(AuditError, match="1 to 5"):
        store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=2, expert="王工", score=6, reason="x", expected=versions)
    # Scope conversation: the judge scored no turn alone, so any turn score is the expert's own and needs a reason.
    identity = store.item(run, "refund-revealed-first", IDENTITY)
    with pytest.raises(AuditError, match="which the judge did not score on its own"):
        store.save_turn_verdict(run, "refund-revealed-first", IDENTITY, turn=2, expert="王工", score=1,
                                expected=identity.versions)
    saved = store.save_turn_verdict(run, "refund-revealed-first", IDENTITY, turn=2, expert="王工", score=1,
                                    reason="核验前就报出了订单号和地址", expected=identity.versions)
    assert saved.ok and saved.changes == ["score_unscored"]
    [row] = store.turn_verdicts(run, scorer=IDENTITY)
    assert (row.item, row.judge_score, row.sample_id) == ("judge", None, "refund-revealed-first")


def test_a_stale_item_is_a_conflict_and_the_attempt_is_logged(store: AuditStore) -> None:
    run = store.resolve("latest")
    opened = store.item(run, APOLOGY, SOOTHING).versions
    # Another expert answers the conversation-level verdict in between.
    other = store.save_response(run, APOLOGY, SOOTHING, expert="李工", score=2, expected=opened)
    assert other.ok
    result = store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=6, expert="王工", score=1, reason="敷衍",
                                     expected=opened)
    assert not result.ok and result.conflict is not None and "李工" in result.conflict.message
    assert store.turn_verdicts(run) == []
    last = store.audit_log(run)[-1]
    assert (last.action, last.outcome, last.payload["reason"]) == ("save_turn_verdict", "conflict", "敷衍")
    # And a turn verdict moves the item on for a conversation-level save that saw the old versions.
    saved = store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=6, expert="王工", score=1, reason="敷衍",
                                    expected=other.versions)
    assert saved.ok
    stale = store.save_response(run, APOLOGY, SOOTHING, expert="李工", score=3, reason="x", expected=other.versions)
    assert not stale.ok


def test_agreement_uses_conversation_level_verdicts_only(store: AuditStore) -> None:
    run = store.resolve("latest")
    versions = store.item(run, APOLOGY, SOOTHING).versions
    saved = store.save_response(run, APOLOGY, SOOTHING, expert="王工", score=2, expected=versions)   # judge: 2
    for turn in (2, 4, 6, 8):                # four turn overrides, all far from the judge's turn scores
        saved = store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=turn, expert="王工", score=5, reason="好",
                                        expected=saved.versions)
        assert saved.ok
    [result] = agreement_panel.compute(store, run)
    assert result.scorer == SOOTHING and result.report.n == 1 and result.report.exact.value == 1.0
    assert [r.score for r in store.responses(run)] == [2]


def test_turn_verdicts_export_as_jsonl_and_csv(store: AuditStore, tmp_path: Path) -> None:
    run = store.resolve("latest")
    versions = store.item(run, APOLOGY, SOOTHING).versions
    store.save_turn_verdict(run, APOLOGY, SOOTHING, turn=8, expert="王工", score=1,
                            reason="=HYPERLINK(\"http://evil.example\")", expected=versions)
    lines = export_turn_verdicts(store, run, tmp_path / "turns.jsonl").read_text(encoding="utf-8").splitlines()
    [row] = [json.loads(line) for line in lines]
    assert (row["sample_id"], row["scorer"], row["turn"], row["score"], row["judge_score"]) == (APOLOGY, SOOTHING,
                                                                                               8, 1, 2.0)
    with export_turn_verdicts(store, run, tmp_path / "turns.csv").open(encoding="utf-8-sig") as handle:
        [cell] = [r["reason"] for r in csv.DictReader(handle)]
    assert cell == "'=HYPERLINK(\"http://evil.example\")"          # a spreadsheet reads it as text
    with pytest.raises(AuditError, match="use .jsonl or .csv"):
        export_turn_verdicts(store, run, tmp_path / "turns.txt")
