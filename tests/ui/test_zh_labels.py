"""A Chinese page says its tables in Chinese (issues 25/27/30): the column headers of the scorecard review, appeal,
calibration and studio tables, appeal states and steps, and scorecard review decisions come from the catalogue in
the page's language, while the stored values stay English and English pages keep the columns they had. The team
app is driven through its HTTP API (gradio_client) on a Chinese page: an agent's verdicts and an appeal's state in
the inbox."""
from __future__ import annotations

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import re  # noqa: E402

import gradio as gr  # noqa: E402
import pytest  # noqa: E402
from gradio_client import Client  # noqa: E402

from rubriceval.audit.appeals import Appeals  # noqa: E402
from rubriceval.audit.passwords import read_auth_file, write_user  # noqa: E402
from rubriceval.audit.scorecard_reviews import Review  # noqa: E402
from rubriceval.audit.sessions import TeamAuth  # noqa: E402
from rubriceval.audit.team import TeamStore  # noqa: E402
from rubriceval.data.sample import Sample  # noqa: E402
from rubriceval.store.appeal_models import APPEAL_STATES, Appeal, AppealEvent  # noqa: E402
from rubriceval.ui.common.scorecard_view import item_choices, verdict_html, verdicts_frame  # noqa: E402
from rubriceval.ui.common.wording import Words, headers  # noqa: E402
from rubriceval.ui.studio.actions import CANDIDATE_COLUMNS, CHECK_COLUMNS, RESULT_COLUMNS  # noqa: E402
from rubriceval.ui.studio.card_actions import CARD_COLUMNS  # noqa: E402
from rubriceval.ui.studio.card_layout import CARD_ITEM_COLUMNS  # noqa: E402
from rubriceval.ui.team.app import launch_team  # noqa: E402
from rubriceval.ui.team.appeals_layout import build_appeal_tabs  # noqa: E402
from rubriceval.ui.team.appeals_views import appeal_html, inbox_frame, state_choices  # noqa: E402
from tests.audit.test_team_ui import free_port  # noqa: E402
from tests.helpers.appeal_store import CHECK, RUBRIC, build_appeal_store  # noqa: E402

HAN = re.compile(r"[\u4e00-\u9fff]")
STUDIO_TABLES = [RESULT_COLUMNS, CHECK_COLUMNS, CANDIDATE_COLUMNS, CARD_COLUMNS, CARD_ITEM_COLUMNS]


@pytest.mark.parametrize("columns", STUDIO_TABLES, ids=["results", "checks", "candidates", "card", "card_items"])
def test_studio_headers_are_chinese_on_a_chinese_page_and_unchanged_in_english(columns):
    assert headers(columns, "en") == list(columns)
    said = headers(columns, "zh")
    assert all(HAN.search(h) for h in said), said
    assert len(set(said)) == len(said)                     # no two columns said alike


def test_a_studio_opened_in_chinese_returns_its_tables_with_chinese_headers(tmp_path):
    from rubriceval.judge.config import JudgeConfig
    from rubriceval.ui.studio.actions import Studio

    studio = Studio(tmp_path, tmp_path / "runs.sqlite", JudgeConfig(model="stub"), tmp_path)
    card = ("id: qa\nname: 质检\ndimensions:\n  - id: 服务\nitems:\n  - id: closing\n    name: 未询问其他问题\n"
            "    dimension: 服务\n    points: -5\n    check: {type: final_turn, phrases: [还有什么]}\n")
    studio.lang = "zh"
    _, table, ids, _ = studio.card_form(card, "qa")
    assert list(table.columns) == headers(CARD_ITEM_COLUMNS, "zh") and ids == ["closing"]
    assert table.iloc[0][headers(["predicate"], "zh")[0]] == "check: final_turn"   # values as the YAML says
    studio.lang = "en"
    assert list(studio.card_form(card, "qa")[1].columns) == CARD_ITEM_COLUMNS


def _scorecard_verdict():
    import asyncio

    from rubriceval.scorecard.schema import Scorecard
    from rubriceval.scorecard.score import score_scorecard
    from tests.report.test_official_segments_trend import SAMPLES
    from tests.scorecard.test_scorecard_report import CARD

    card = Scorecard.model_validate(CARD)
    sample = SAMPLES[1]                                  # refund-slow: −5 closing, −10 refund_time
    return asyncio.run(score_scorecard(card, sample, None, run_id="r")), sample


def test_the_scorecard_review_table_and_decisions_are_said_in_the_pages_language():
    verdict, sample = _scorecard_verdict()
    review = Review(sample_id=verdict.sample_id, scorecard=verdict.scorecard, item="refund_time",
                    version=verdict.version, decision="reject", reviewer="王专家", created_at=1.0)
    zh = verdicts_frame([verdict], [review], "zh")
    assert list(zh.columns) == ["样本", "评分表", "总分", "扣分项", "已复核"]
    assert list(verdicts_frame([verdict], [review], "en").columns) == ["sample", "scorecard", "Total", "Deductions",
                                                                      "Reviewed"]
    labels = dict((value, label) for label, value in item_choices(verdict, [review], "zh"))
    assert labels["refund_time"].endswith("· 驳回扣分") and "reject" not in labels["refund_time"]
    html = verdict_html(verdict, sample, [review], "zh")
    assert "最新复核：驳回扣分（王专家）" in html and "reject" not in html
    assert review.decision == "reject"                   # stored as it was
    assert "latest review: reject (王专家)" in verdict_html(verdict, sample, [review], "en")


def _appeal(state: str) -> Appeal:
    return Appeal(appeal_id="ap1", run_id="r", sample_id="c004", scorer=RUBRIC, item=CHECK, agent="agent_wang",
                  reason="知识库允许包邮", state=state, machine_score=2, official_before=2, proposed_score=4,
                  reviewer="qa_zhang", created_at=0.0, updated_at=0.0, version=2)


def test_appeal_states_steps_and_inbox_columns_are_chinese_on_a_chinese_page():
    frame = inbox_frame([_appeal("under_review")], "zh")
    assert {"编号", "样本", "评分标准", "坐席", "复核人", "时间", "状态"} <= set(frame.columns)
    assert frame.iloc[0]["状态"] == "复核中"
    en = inbox_frame([_appeal("under_review")], "en")
    assert {"id", "sample", "rubric", "agent", "reviewer", "at"} <= set(en.columns)
    assert en.iloc[0]["State"] == "under_review"
    events = [AppealEvent(event_id=1, appeal_id="ap1", actor="agent_wang", role="agent", action="submit",
                          from_state="", to_state="submitted", at=0.0),
              AppealEvent(event_id=2, appeal_id="ap1", actor="qa_zhang", role="expert", action="review",
                          from_state="submitted", to_state="under_review", at=1.0)]
    sample = Sample(id="c004", question="能包邮吗", answer="不能")
    html = appeal_html(_appeal("under_review"), events, sample, "", "zh")
    history = html.split("<ul>")[-1]
    assert "agent_wang (坐席) 提交: · → 已提交" in history and "qa_zhang (专家) 领取复核: 已提交 → 复核中" in history
    assert "<b>复核中</b>" in html and not re.search(r"submitted|under_review|review:", history)
    en = appeal_html(_appeal("under_review"), events, sample, "", "en")
    assert "qa_zhang (expert) review: submitted → under_review" in en


def test_the_inbox_state_filter_relabels_with_the_page():
    assert [v for _, v in state_choices("zh")] == ["", *APPEAL_STATES]       # the values: the stored states
    assert [label for label, _ in state_choices("zh")][1:] == ["已提交", "复核中", "申诉成立", "已驳回", "已终审"]
    with gr.Blocks():
        words = Words("zh")
        with gr.Tabs():
            tabs = build_appeal_tabs(words)
    state_dd = tabs.inbox.state_dd
    assert ("已提交", "submitted") in [tuple(c) for c in state_dd.choices]
    relabelled = [w.say("en") for w in words.entries if w.component is state_dd and w.prop == "choices"]
    assert relabelled == [state_choices("en")]


USERS = {"agent_wang": "agent", "qa_zhang": "expert"}


@pytest.fixture(scope="module")
def zh_team(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("zh-team")
    store_path, auth_path = root / "runs.sqlite", root / "users.auth"
    run_id = build_appeal_store(store_path, n=6)
    for name, role in USERS.items():
        write_user(auth_path, name, role, f"{name}-password")
    app = launch_team(store_path, TeamAuth(read_auth_file(auth_path), ttl_s=3600), port=free_port(), block=False,
                      quiet=True, lang="zh")
    yield app, store_path, run_id
    app.close()
    app.team_store.close()


def _login(served, name: str) -> Client:
    return Client(served[0].local_url, auth=(name, f"{name}-password"), verbose=False, download_files=False)


def test_the_chinese_team_page_shows_chinese_headers_and_appeal_states(zh_team):
    _, store_path, run_id = zh_team
    wang = _login(zh_team, "agent_wang")
    _, table, _ = wang.predict(run_id, api_name="/my_verdicts")
    assert table["headers"][:2] == ["样本", "评分标准"] and "sample" not in table["headers"]
    status, table = wang.predict(run_id, f"c004|{RUBRIC}", CHECK, "知识库允许包邮", api_name="/appeal_submit")
    assert status.startswith("✓ 已提交申诉")
    assert next(r for r in table["data"] if r[0] == "c004")[table["headers"].index("状态")] == f"{CHECK}: 已提交"
    zhang = _login(zh_team, "qa_zhang")
    frame, picks = zhang.predict("submitted", api_name="/appeals_inbox")
    assert all(label.endswith(" · 已提交") for label, _ in picks["choices"])
    assert {"编号", "样本", "坐席", "复核人", "时间"} <= set(frame["headers"])
    row = next(r for r in frame["data"] if r[frame["headers"].index("样本")] == "c004")
    assert row[frame["headers"].index("状态")] == "已提交"
    appeal_id = row[frame["headers"].index("编号")]
    zhang.predict(appeal_id, api_name="/appeal_open")
    _, status = zhang.predict(appeal_id, "accepted", None, "知识库第3条", api_name="/appeal_decide")
    assert status == "✓ 已保存：申诉成立"
    with TeamStore(store_path) as team:                # stored in English, as the CLI and reports read it
        assert Appeals(team).get(appeal_id).state == "accepted"


def test_the_audit_apps_agreement_tables_are_chinese_on_a_chinese_page():
    from rubriceval.ui.audit import agreement_panel

    zh = agreement_panel.summary_frame([], "zh")
    assert list(zh.columns)[:4] == ["评分标准", "版本", "条数", "完全一致"] and all(HAN.search(c) for c in zh.columns)
    assert list(agreement_panel.summary_frame([], "en").columns) == [
        "rubric", "version", "items", "exact", "within ±1", "quadratic κ", "Spearman", "judge − human",
        "items ≥2 experts", "expert α (ordinal)", "unscored", "notes"]
    assert list(agreement_panel.worst_frame(None, "zh").columns) == ["样本", "评审", "专家", "分差", "理由"]
    assert list(agreement_panel.worst_frame(None).columns) == ["sample", "judge", "human", "gap", "reasons"]
    assert agreement_panel.headline([], "zh").startswith("尚无审核")
