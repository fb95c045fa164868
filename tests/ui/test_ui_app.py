"""The audit app end to end through its HTTP API (gradio_client), with the server on 127.0.0.1 in this process."""
from __future__ import annotations

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import socket  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from gradio_client import Client  # noqa: E402

from rubriceval import AuditStore, RubricEvalError  # noqa: E402
from rubriceval.ui.audit.app import launch
from rubriceval.ui.audit.demo import build_demo_store  # noqa: E402
from rubriceval.ui.common.auth import is_loopback
from tests.helpers.store_copy import empty_store  # noqa: E402

TITLE, SAMPLE, JUDGE, HISTORY, GT, CONTEXTS, SCORE, REASON, PROGRESS, QUEUE, PAGE, STATUS = range(12)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The app over a SQLite store file, then over a PostgreSQL database (the same tests, both back ends)."""
    root = tmp_path_factory.mktemp("audit")
    store_path = root / "runs.sqlite" if request.param == "sqlite" else empty_store(request, "audit_ui")
    build_demo_store(store_path)
    app = launch(store_path, port=free_port(), export_dir=root / "exports", block=False, quiet=True, lang="en")
    yield app, store_path, root
    app.close()
    app.audit_store.close()


def client_for(served) -> Client:
    return Client(served[0].local_url, verbose=False, download_files=False)


def open_at(client: Client, expert: str, scorer: str, sample_id: str) -> tuple[Any, ...]:
    """Open the queue filtered to one rubric in dataset order, then the row of `sample_id`."""
    out = client.predict(expert, None, scorer, "(any)", "(any)", 1, 5, "all", "dataset", api_name="/open_queue")
    ids = [row[1] for row in out[QUEUE]["data"]]
    return client.predict(expert, ids.index(sample_id) + 1, api_name="/open_item")


def test_queue_opens_lowest_judge_score_first_with_progress(served) -> None:
    out = client_for(served).predict("ann", None, "(any)", "(any)", "(any)", 1, 5, "all", "judge_asc",
                                     api_name="/open_queue")
    judge_column = [row[3] for row in out[QUEUE]["data"]]
    assert judge_column[0] == "1" and judge_column[-1] == "unscored"
    assert [float(j) for j in judge_column[:-1]] == sorted(float(j) for j in judge_column[:-1])
    assert "Audited" in out[PROGRESS] and "/ 8" in out[PROGRESS]
    # The first item is open side by side: question, rubric levels and judge feedback.
    assert "Question" in out[SAMPLE] and "Score levels" in out[JUDGE] and "Evidence" in out[JUDGE]
    assert out[TITLE].startswith("### Item 1 / 8")


def test_override_requires_a_reason_then_saves_and_moves_on(served) -> None:
    _, store_path, _ = served
    client = client_for(served)
    opened = open_at(client, "王专家", "process_compliance", "exp-partial")       # judge gave 2
    assert "exp-partial" in opened[TITLE]
    # A slip is a warning in the status line; nothing is saved, the item stays open.
    refused = client.predict("王专家", "4", "", api_name="/save_verdict")
    assert refused[STATUS].startswith("⚠ a reason is required to override the judge's score 2 with 4")
    assert "⚠ choose a score" in client.predict("王专家", None, "", api_name="/save_verdict")[STATUS]
    with AuditStore(store_path) as store:
        assert store.responses("latest", sample_id="exp-partial") == []
    saved = client.predict("王专家", "4", "给了审批流程，只是没写二级主管", api_name="/save_verdict")
    assert saved[STATUS].startswith("✓") and "override" in saved[STATUS]
    assert "exp-partial" not in saved[TITLE]                                     # moved to the next item
    with AuditStore(store_path) as store:
        [response] = store.responses("latest", sample_id="exp-partial")
    assert (response.expert, response.score, response.judge_score, response.action) == ("王专家", 4, 2.0, "override")


def test_agree_stores_the_judge_score_and_name_is_required(served) -> None:
    _, store_path, _ = served
    client = client_for(served)
    open_at(client, "", "process_compliance", "exp-good")
    assert client.predict("", api_name="/agree")[STATUS].startswith("⚠ enter your name")
    saved = client.predict("李", api_name="/agree")
    assert "agree" in saved[STATUS]
    with AuditStore(store_path) as store:
        [response] = store.responses("latest", sample_id="exp-good")
    assert (response.expert, response.score, response.action) == ("李", 5, "agree")


def test_edit_ground_truth_shows_the_diff_and_records_who(served) -> None:
    _, store_path, _ = served
    client = client_for(served)
    opened = open_at(client, "张三", "process_compliance", "exp-bad-link")
    labels = [choice[0] for choice in opened[CONTEXTS]["choices"]]
    assert opened[CONTEXTS]["value"] == [] and len(labels) == 2
    new_truth = "报销单链接是 https://oa.example.com/expense/form ，提交后由二级主管审批，5 个工作日内打款。"
    out = client.predict("张三", new_truth, [labels[0]], api_name="/edit_ground_truth")
    assert out[STATUS].startswith("✓") and "ground truth, context 1" in out[STATUS]
    assert "context:0" not in out[STATUS]
    assert "<ins>" in out[SAMPLE] and "Ground truth (corrected)" in out[SAMPLE]
    assert "张三" in out[HISTORY] and out[GT] == new_truth
    assert out[CONTEXTS]["value"] == [labels[0]]
    with AuditStore(store_path) as store:
        edits = store.gt_edits("latest", "exp-bad-link")
    assert [(e.field, e.editor) for e in edits] == [("ground_truth", "张三"), ("context:0", "张三")]
    assert edits[0].before.startswith("报销单链接是 https://oa.example.com/expense/form，提交后")
    assert edits[0].after == new_truth


def test_two_experts_saving_the_same_item_conflict_and_reload(served) -> None:
    _, store_path, _ = served
    alice, bob = client_for(served), client_for(served)
    open_at(alice, "alice", "emotional_soothing", "delay-curt")
    open_at(bob, "bob", "emotional_soothing", "delay-curt")
    first = alice.predict("alice", "2", "有一句“请耐心等待”，算最基本的回应", api_name="/save_verdict")
    assert first[STATUS].startswith("✓")
    second = bob.predict("bob", "1", "完全没有安抚", api_name="/save_verdict")
    assert "Conflict" in second[STATUS] and "alice" in second[STATUS]
    with AuditStore(store_path) as store:
        assert [r.expert for r in store.responses("latest", sample_id="delay-curt")] == ["alice"]
        log = [(e.expert, e.outcome) for e in store.audit_log("latest") if e.sample_id == "delay-curt"]
        assert log == [("alice", "saved"), ("bob", "conflict")]
    reloaded = bob.predict("bob", api_name="/reload_item")
    assert "alice" in reloaded[JUDGE]                                            # bob now sees alice's response
    again = bob.predict("bob", "1", "完全没有安抚", api_name="/save_verdict")
    assert again[STATUS].startswith("✓")
    with AuditStore(store_path) as store:
        assert sorted(r.expert for r in store.responses("latest", sample_id="delay-curt")) == ["alice", "bob"]


def test_agreement_panel_reports_judge_vs_experts(served) -> None:
    client = client_for(served)
    # Judge: return-en 4, return-en-vague 1 (next in dataset order, so "save & next" lands on it).
    for expert, (first, second) in (("eve", ("4", "2")), ("finn", ("3", "1"))):
        open_at(client, expert, "helpfulness_en", "return-en")
        moved = client.predict(expert, first, "tested reason", api_name="/save_verdict")
        assert "return-en-vague" in moved[TITLE]
        client.predict(expert, second, "tested reason", api_name="/save_verdict")
    headline, table, pick, _, _ = client.predict(None, api_name="/agreement")
    # Each item counts once, scored by the experts' consensus (lower median): return-en 3, return-en-vague 1.
    row = {r[0]: r for r in table["data"]}["Resolution & grounding"]
    assert row[2] == 2                                                           # two audited items
    assert row[3].startswith("0.50")                                             # 1 of 2 exact
    assert row[4].startswith("1.00")                                             # all within ±1
    assert row[8] == 2                                                           # two items with both experts
    assert "on 2 audited items" in headline
    [key] = [choice[0] for choice in pick["choices"] if choice[0].startswith("helpfulness_en @ ")]
    confusion, worst = client.predict(key, api_name="/agreement_detail")
    assert [(r[0], r[1], r[2], r[3]) for r in worst["data"]] == [("return-en", 4, 3, 1)]   # judge, human, gap
    assert "eve: tested reason" in worst["data"][0][4] and "finn: tested reason" in worst["data"][0][4]
    cells = {r[0]: r[1:] for r in confusion["data"]}                             # rows human, columns judge 1..5
    assert cells["human 3"][3] == 1 and cells["human 1"][0] == 1 and sum(cells["human 3"]) == 1


def test_export_writes_only_into_the_export_folder(served) -> None:
    _, _, root = served
    out = client_for(served).predict(None, api_name="/export")
    written = sorted(p.name for p in (root / "exports").iterdir())
    assert len(written) == 2 and {Path(n).suffix for n in written} == {".jsonl", ".xlsx"}
    assert all(name in out for name in written)
    assert sorted(p.name for p in root.iterdir() if p.is_file()) == sorted(
        p.name for p in root.iterdir() if p.is_file() and p.name.startswith("runs.sqlite"))


def test_off_loopback_needs_auth(tmp_path: Path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    with pytest.raises(RubricEvalError, match="without authentication"):
        launch(tmp_path / "never-opened.sqlite", host="0.0.0.0", block=False)
    assert not (tmp_path / "never-opened.sqlite").exists()


def test_with_auth_the_login_name_signs_the_response(tmp_path: Path) -> None:
    store_path = tmp_path / "runs.sqlite"
    build_demo_store(store_path)
    app = launch(store_path, port=free_port(), auth=[("alice", "s3cret")], block=False, quiet=True, lang="en")
    try:
        client = Client(app.local_url, auth=("alice", "s3cret"), verbose=False, download_files=False)
        open_at(client, "mallory", "process_compliance", "exp-good")
        client.predict("mallory", api_name="/agree")
        with AuditStore(store_path) as store:
            assert [r.expert for r in store.responses("latest")] == ["alice"]
    finally:
        app.close()
        app.audit_store.close()


def test_chinese_data_gets_a_chinese_app_from_the_one_catalogue(tmp_path: Path) -> None:
    from rubriceval.i18n import t
    from rubriceval.ui.audit.app import build_app

    store_path = tmp_path / "runs.sqlite"
    build_demo_store(store_path)                       # mostly Chinese samples, like the report's choice
    app = launch(store_path, port=free_port(), block=False, quiet=True)
    try:
        client = Client(app.local_url, verbose=False, download_files=False)
        out = open_at(client, "王专家", "process_compliance", "exp-partial")
        assert out[TITLE].startswith("### 第 ") and "问题" in out[SAMPLE] and "证据" in out[JUDGE]
        assert "已审核" in out[PROGRESS] and out[PAGE].startswith("第 1 / 1 页")
        assert list(out[QUEUE]["headers"]) == [t(f"ui_col_{c}", "zh") for c in
                                               ("number", "sample", "rubric", "judge", "experts", "you", "gap",
                                                "intent", "question")]
        refused = client.predict("王专家", "4", "", api_name="/save_verdict")
        assert refused[STATUS].startswith("⚠ 改判需要填写理由：您的 4 分与评审的 2 分不同")
        # Evidence is said in the app's language from its stored message (process_compliance's must_mention).
        assert "必提要点" in out[JUDGE] and "required phrase" not in out[JUDGE]
    finally:
        app.close()
        app.audit_store.close()
    # The same page in English: every registered wording has an English text, and the language can be forced.
    english = build_app(store_path, lang="en")
    try:
        assert english.title == "rubriceval · expert audit"
    finally:
        english.audit_store.close()


def test_every_ui_key_is_in_both_languages_and_audit_takes_lang() -> None:
    from rubriceval.cli import build_parser
    from rubriceval.i18n.ui_text import UI_TEXT

    assert all(set(texts) == {"zh", "en"} and texts["zh"] and texts["en"] for texts in UI_TEXT.values())
    args = build_parser().parse_args(["audit", "--lang", "en"])
    assert args.lang == "en"
