"""The studio's states are true (issue 42, items 1-3 and 5), through the studio's actions as the page calls them: an
unchanged save writes nothing, 👍 needs no score, a bad number is said (in Chinese) where the ✔ was, an empty name
and an existing id are refused for what they are, a file broken on disk opens with validate's line and hint and is
repaired in the raw YAML editor, a scorecard with `points: x3` still opens its form, the SOP draft shows progress
and drafts forbidden phrases as must_not_mention, and regex evidence quotes what matched."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from rubriceval import evaluate, load_rubrics
from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.config import JudgeConfig
from rubriceval.studio import drafting
from rubriceval.studio.form import RubricForm
from rubriceval.studio.messages import said_error
from rubriceval.ui.studio.actions import Studio
from rubriceval.ui.studio.form_values import FIELD_INDEX, values_of
from rubriceval.validate.lint import validate_path

ROOT = Path(__file__).resolve().parents[2]


def folder_with(tmp_path: Path, *names: str) -> Path:
    rubrics = tmp_path / "rubrics"
    rubrics.mkdir(exist_ok=True)
    for name in names:
        shutil.copy(ROOT / "rubrics" / name, rubrics / name)
    return rubrics


def offline_studio(tmp_path: Path, *names: str) -> Studio:
    cards = tmp_path / "scorecards"
    cards.mkdir(exist_ok=True)
    return Studio(folder_with(tmp_path, *names), tmp_path / "runs.sqlite",
                  JudgeConfig(base_url="http://127.0.0.1:9/v1", model="stub"), cards)


def test_opening_and_saving_a_shipped_rubric_unchanged_writes_nothing(tmp_path):
    studio = offline_studio(tmp_path, "policy_compliance.yaml", "emotional_soothing_multiturn.yaml")
    for rubric_id in ("policy_compliance", "emotional_soothing_multiturn"):
        path = studio.rubrics_dir / f"{rubric_id}.yaml"
        before = path.read_bytes()
        view, fingerprint = studio.open(rubric_id, "zh")
        status, after, _ = studio.save(tuple(view.values), view.base_text, fingerprint, "zh", yaml_text=view.yaml,
                                       yaml_shown=view.yaml)
        assert status == "与已保存版本相同，没有保存新版本" and path.read_bytes() == before
        assert not (studio.rubrics_dir / ".versions").exists()
    view, fingerprint = studio.open("policy_compliance", "zh")
    values = list(view.values)
    values[FIELD_INDEX["level2"]] = "有与政策不符的表述。"
    status, after, _ = studio.save(tuple(values), view.base_text, fingerprint, "zh")
    lines = [line for line in studio.diff(tuple(view.values), view.base_text, "zh").splitlines()]
    saved = (studio.rubrics_dir / "policy_compliance.yaml").read_text(encoding="utf-8")
    assert "版本 2" in status and 'phrases: ["私下转账|加我微信|个人微信|私聊转账"]' in saved
    assert saved.replace("version: 2", "version: 1").replace("  2: 有与政策不符的表述。\n", "") == \
        (ROOT / "rubrics" / "policy_compliance.yaml").read_text(encoding="utf-8").replace(
            "  2: 有与政策不符的表述或编造的政策细节，可能误导用户。\n", "")
    assert lines and "已保存" in lines[0] and "草稿" in lines[1]


def test_a_bad_number_is_said_in_chinese_in_the_findings_and_no_old_check_mark_stays(tmp_path):
    studio = offline_studio(tmp_path, "closing.yaml")
    view, _ = studio.open("closing", "zh")
    values = list(view.values)
    values[FIELD_INDEX["threshold"]] = 7
    yaml_text, report, rubric = studio.validate(tuple(values), view.base_text, "zh")
    assert rubric is None and "threshold: 7" in yaml_text
    assert report.startswith("错误：文件 closing.yaml，第 10 行，字段 threshold：应小于或等于 5"), report
    values[FIELD_INDEX["threshold"]] = "七"
    yaml_text, report, _ = studio.validate(tuple(values), view.base_text, "zh")
    assert yaml_text == "" and "✔" not in report and "通过分数线「七」不是数字" in report
    values[FIELD_INDEX["threshold"]] = 4
    values[FIELD_INDEX["checks"]] = "closing_words | must_mention | 还有什么"        # main's old box format
    yaml_text, report, _ = studio.validate(tuple(values), view.base_text, "zh")
    assert yaml_text == "" and "检查第 1 行不是「id: 类型」" in report


def test_an_empty_name_is_refused_by_validate_and_by_the_studio(tmp_path):
    path = tmp_path / "closing.yaml"
    path.write_text((ROOT / "rubrics" / "closing.yaml").read_text(encoding="utf-8").replace(
        "name: 结束语", 'name: ""'), encoding="utf-8")
    _, findings = validate_path(path)
    assert [f.field for f in findings if f.severity == "error"] == ["name"]
    studio = offline_studio(tmp_path, "closing.yaml")
    view, _ = studio.open("closing", "zh")
    values = list(view.values)
    values[FIELD_INDEX["name"]] = "  "
    _, report, rubric = studio.validate(tuple(values), view.base_text, "zh")
    assert rubric is None and "细则名称是空的" in report


def test_a_new_rubric_under_an_id_that_exists_is_refused_for_that_reason(tmp_path):
    studio = offline_studio(tmp_path, "closing.yaml")
    view, fingerprint = studio.open(None, "zh")
    values = values_of(RubricForm(id="closing", name="结束语二", criterion="是否礼貌结束",
                                  levels={k: f"第 {k} 档" for k in range(1, 6)}))
    with pytest.raises(RubricEvalError) as refused:
        studio.save(tuple(values), view.base_text, fingerprint, "zh")
    said = said_error(refused.value, "zh")
    assert said.message == "id 为「closing」的细则已经存在" and "换一个 id" in said.hint
    values[FIELD_INDEX["id"]] = "closing_v2"                  # saved under a new id: a new file, version 1
    status, _, _ = studio.save(tuple(values), view.base_text, fingerprint, "zh")
    assert "版本 1" in status and (studio.rubrics_dir / "closing_v2.yaml").is_file()


def test_a_rubric_broken_on_disk_opens_with_its_line_and_hint_and_is_repaired_in_the_yaml_editor(tmp_path):
    studio = offline_studio(tmp_path, "closing.yaml")
    path = studio.rubrics_dir / "closing.yaml"
    good = path.read_text(encoding="utf-8")
    broken = good.replace("judge_sees: []", "judge_sees: [question", 1)
    path.write_text(broken, encoding="utf-8")
    view, fingerprint = studio.open("closing", "zh")
    assert view.yaml == broken and view.values[FIELD_INDEX["id"]] == "closing"
    assert "文件 closing.yaml，第 " in view.report and "提示" in view.report, view.report
    with pytest.raises(RubricEvalError):
        studio.apply_yaml(broken, "zh")
    repaired = studio.apply_yaml(good, "zh")
    assert repaired.values[FIELD_INDEX["name"]] == "结束语" and repaired.base_text == good
    status, _, _ = studio.save(tuple(repaired.values), repaired.base_text, fingerprint, "zh", yaml_text=good,
                               yaml_shown=repaired.yaml)
    assert "版本 2" in status and path.read_text(encoding="utf-8") == good.replace("version: 1", "version: 2")


def test_yaml_edits_not_taken_into_the_form_are_not_saved_behind_the_leads_back(tmp_path):
    studio = offline_studio(tmp_path, "closing.yaml")
    view, fingerprint = studio.open("closing", "zh")
    with pytest.raises(RubricEvalError, match="changes the form has not taken"):
        studio.save(tuple(view.values), view.base_text, fingerprint, "zh",
                    yaml_text=view.yaml.replace("weight: 0.5", "weight: 2"), yaml_shown=view.yaml)


def test_a_scorecard_with_points_x3_opens_its_form_and_the_loader_names_the_line(tmp_path):
    studio = offline_studio(tmp_path)
    text = (ROOT / "scorecards" / "ecommerce_qa_zh.yaml").read_text(encoding="utf-8").replace(
        "points: -3", "points: x3", 1)
    head, rows, ids, dims = studio.card_form(text, "ecommerce_qa_zh")
    assert ids and head[0] == "ecommerce_qa_zh"
    report = studio.card_report(text, "ecommerce_qa_zh", "zh")
    assert report.startswith("错误：文件 ecommerce_qa_zh.yaml，第 ") and "points" in report
    bad = next(i for i in ids if studio.card_item(text, "ecommerce_qa_zh", i)[12] is None)
    item = studio.card_item(text, "ecommerce_qa_zh", bad)
    written, *_ = studio.card_apply_item(text, "ecommerce_qa_zh", bad, tuple(item), "zh")
    assert written == text                                  # the empty box never writes over what the file has


def test_the_studio_page_relists_files_when_the_list_is_opened(tmp_path):
    from rubriceval.ui.studio.app import build_studio_app

    app = build_studio_app(folder_with(tmp_path, "closing.yaml"), tmp_path / "runs.sqlite",
                           JudgeConfig(base_url="http://127.0.0.1:9/v1", model="stub"), lang="zh")
    config = app.get_config_file()
    rubric_file = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") ==
                       "studio-rubric-file")
    assert any([rubric_file, "focus"] in [list(t) for t in d["targets"]] for d in config["dependencies"])
    shutil.copy(ROOT / "rubrics" / "required_link.yaml", tmp_path / "rubrics" / "required_link.yaml")
    assert ("必须附链接（required_link）", "required_link") in app.studio.rubric_choices("zh")


def test_off_loopback_without_logins_the_refusal_names_auth_file(tmp_path):
    from rubriceval.ui.studio.app import launch_studio

    with pytest.raises(RubricEvalError) as refused:
        launch_studio(ROOT / "rubrics", tmp_path / "runs.sqlite", JudgeConfig(model="stub"), host="0.0.0.0",
                      block=False)
    assert "studio" in refused.value.message and "--auth-file" in refused.value.hint
    assert "--auth-file" in said_error(refused.value, "zh").hint


def test_forbidden_phrases_of_an_sop_are_drafted_as_must_not_mention():
    form, problems = drafting._check({
        "id": "refund", "name": "退款", "criterion": "按规范处理退款",
        "levels": {str(k): f"第 {k} 档" for k in range(1, 6)}, "questions": [],
        "required_phrases": [{"id": "sorry", "phrases": ["抱歉|不好意思"]}],
        "forbidden_phrases": [{"id": "no_wechat", "phrases": ["加我微信|个人微信", "保证全额退款"]}],
        "required_links": [{"id": "refund_link", "url": "https://example.com/refund"}]})
    assert [(c.id, c.type) for c in form.checks] == [("sorry", "must_mention"), ("no_wechat", "must_not_mention"),
                                                     ("refund_link", "required_link")]
    schema = drafting.DRAFT_SCHEMA["properties"]
    assert {"required_phrases", "forbidden_phrases", "required_links"} <= set(schema)


def test_drafting_from_an_sop_shows_progress_while_the_judge_works(tmp_path, monkeypatch):
    studio = offline_studio(tmp_path)

    async def slow(document, judge, lang):
        import asyncio

        await asyncio.sleep(2.2)
        return RubricForm(id="refund", name="退款", criterion="c", levels={k: str(k) for k in range(1, 6)}), None

    import rubriceval.ui.studio.actions as actions

    monkeypatch.setattr(actions, "draft_from_document", slow)
    monkeypatch.setattr(actions, "make_judge", lambda *a, **k: type(
        "J", (), {"close": staticmethod(lambda: _done())})())
    started = time.monotonic()
    steps = list(studio.draft("退款流程：先安抚。", None, "zh"))
    assert time.monotonic() - started >= 2
    progress = [status for status, values in steps if values is None]
    assert len(progress) >= 2 and all("裁判正在起草" in p for p in progress)
    assert steps[-1][1][FIELD_INDEX["id"]] == "refund" and "用时" in steps[-1][0]


async def _done() -> None:
    return None


@pytest.fixture()
def tried(tmp_path, judge_config):
    rows = [{"id": f"bx{i}", "question": f"差旅费怎么报销？（{i}）", "answer": ["请在费用系统提交报销申请。", "找财务就行。"][i % 2],
             "contexts": ["报销须提交报销单并经二级主管审批。"]} for i in range(4)]
    data = tmp_path / "expense.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    evaluate(data, rubrics=load_rubrics(ROOT / "rubrics", only=["process_compliance"]), judge=judge_config,
             store=tmp_path / "runs.sqlite", name="expense-week", progress=False)
    studio = Studio(folder_with(tmp_path, "process_compliance.yaml"), tmp_path / "runs.sqlite", judge_config,
                    tmp_path)
    studio.lang = "zh"
    view, _ = studio.open("process_compliance", "zh")
    run = studio.runs()[0][1]
    frames = list(studio.try_draft(tuple(view.values), view.base_text, run, "first", 2, ""))
    return studio, view, run, frames[-1][1], frames[-1][2]


def test_thumbs_up_needs_no_score_and_a_bad_right_score_is_said_in_chinese(tried):
    studio, view, run, run_id, sample_ids = tried
    for empty in (None, 0, ""):
        status, agreement = studio.mark(run_id, sample_ids[0], "process_compliance", "lead", "up", empty, "", "zh")
        assert status == "已保存标记（同意）" and "一致" in agreement
    with pytest.raises(RubricEvalError) as refused:
        studio.mark(run_id, sample_ids[1], "process_compliance", "lead", "down", 7, "", "zh")
    assert said_error(refused.value, "zh").message == "正确的分数是 1 到 5 之间的整数"
    with pytest.raises(RubricEvalError, match="choose"):
        studio.mark(run_id, sample_ids[1], "process_compliance", "lead", None, None, "", "zh")


def test_the_check_table_names_checks_and_quotes_what_a_regex_matched(tried):
    studio, view, run, _, _ = tried
    table = studio.test_checks(tuple(view.values), view.base_text, "请在费用系统提交报销申请", None, None)
    row = next(r for r in table.values.tolist() if r[1] == "regex")
    assert "（submit_path）" in row[0] and "「费用系统」" in row[3], row
    assert "估算" in studio.plan(tuple(view.values), view.base_text, run, "first", 2, "")


def test_a_scorecard_opened_and_saved_unchanged_writes_nothing(tmp_path):
    studio = offline_studio(tmp_path)
    for name in ("ecommerce_qa_zh.yaml", "ecommerce_policies_zh.md"):
        shutil.copy(ROOT / "scorecards" / name, tmp_path / "scorecards" / name)
    path = tmp_path / "scorecards" / "ecommerce_qa_zh.yaml"
    before = path.read_bytes()
    text, fingerprint, _ = studio.open_scorecard("ecommerce_qa_zh", "zh")
    status, _, _ = studio.save_scorecard(text, fingerprint, "zh")
    assert status == "与已保存版本相同，没有保存新版本" and path.read_bytes() == before
