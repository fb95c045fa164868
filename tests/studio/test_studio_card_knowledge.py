"""The studio reads a scorecard draft's `knowledge:` (issue 30 x 25) from the card's real folder — the scorecards
folder it edits, or for store-backed versions without one the working directory, said in the message — and its
radios and dropdowns show their choices in the page's language while the values stay the English the YAML holds."""
from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.config import JudgeConfig
from rubriceval.studio.scorecards import CardFolder, load_text
from rubriceval.ui.studio.actions import CANDIDATE_COLUMNS, CHECK_COLUMNS, RESULT_COLUMNS, Studio
from rubriceval.ui.studio.card_actions import CARD_COLUMNS
from rubriceval.ui.studio.layout import build_layout

POLICIES = "# 退货\n7 天无理由退货，商品完好即可。\n\n# 运费险\n下单时勾选运费险的订单，退货运费由保险承担。\n"
CARD = """id: kb_card
name: 知识库评分卡
language: zh
knowledge: policies.md
dimensions:
  - {id: 业务准确}
items:
  - id: promise
    name: 承诺了知识库没有的政策
    dimension: 业务准确
    points: -10
    question: 客服是否只承诺了知识库里有的政策？
    judge_sees_knowledge: true
"""


def folder_with(tmp_path: Path, name: str, policies: bool) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "kb_card.yaml").write_text(CARD, encoding="utf-8")
    if policies:
        (folder / "policies.md").write_text(POLICIES, encoding="utf-8")
    return folder


def studio(tmp_path: Path, cards: Path | None, versions_in: str = "files", store: str | None = None) -> Studio:
    judge = JudgeConfig(base_url="http://127.0.0.1:9", model="stub", cache_path=str(tmp_path / "c.sqlite"))
    return Studio(tmp_path, store or str(tmp_path / "runs.sqlite"), judge, cards, versions_in)   # type: ignore[arg-type]


def test_a_draft_reads_its_knowledge_file_from_the_scorecards_folder(tmp_path):
    cards = folder_with(tmp_path, "scorecards", policies=True)
    s = studio(tmp_path, cards)
    text, _, report = s.open_scorecard("kb_card")
    assert report.startswith("✔ kb_card"), report
    card = load_text(text, "kb_card.yaml", s.card_folder)
    assert card.knowledge_passages and "7 天无理由退货" in card.knowledge_passages[0]
    edited = text.replace("points: -10", "points: -8")
    saved, current, _ = s.save_scorecard(edited, s.open_scorecard("kb_card")[1], "en")
    assert saved.startswith("Saved kb_card.yaml: version 1") and "points: -8" in current
    assert sorted(p.name for p in cards.iterdir()) == [
        ".versions", "kb_card.yaml", "policies.md"]                          # nothing else written beside it


def test_a_missing_knowledge_file_names_the_folder_it_was_read_from(tmp_path):
    cards = folder_with(tmp_path, "scorecards", policies=False)
    s = studio(tmp_path, cards)
    report = s.card_report(CARD, "kb_card", "en")
    assert report.startswith("error: kb_card.yaml:4 [knowledge]:"), report
    assert str(cards.resolve() / "policies.md") in report and "knowledge file not found" in report
    assert f"read from the scorecards folder {cards.resolve()}" in report
    zh = s.card_report(CARD, "kb_card", "zh")
    assert "找不到知识库文件" in zh and f"相对路径从评分卡文件夹 {cards.resolve()} 读取" in zh
    with pytest.raises(RubricEvalError, match="does not validate"):
        s.save_scorecard(CARD.replace("-10", "-9"), s.open_scorecard("kb_card")[1], "en")


def test_store_backed_versions_read_it_from_the_option_or_the_working_directory(store_target, tmp_path,
                                                                              monkeypatch):
    seeded = studio(tmp_path, folder_with(tmp_path, "seed", policies=True), "store", store_target)
    text, based_on, report = seeded.open_scorecard("kb_card")
    assert report.startswith("✔ kb_card"), report
    saved, _, _ = seeded.save_scorecard(text.replace("-10", "-9"), based_on, "en")
    assert "[scorecard kb_card v1]" in saved
    bare = studio(tmp_path, None, "store", store_target)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    report = bare.card_report(CARD, "kb_card", "en")
    assert report.startswith("error: kb_card.yaml:4 [knowledge]:") and "working directory" in report
    assert str(elsewhere) in report and "--scorecards DIR" in report
    (elsewhere / "policies.md").write_text(POLICIES, encoding="utf-8")
    assert bare.card_report(CARD, "kb_card", "en").startswith("✔ kb_card")
    assert CardFolder.of(None).origin == "cwd" and CardFolder.of(tmp_path).origin == "folder"


def choices_of(lang: str) -> dict[str, list[tuple[str, str]]]:
    with gr.Blocks():
        ui = build_layout(lang, RESULT_COLUMNS, CHECK_COLUMNS, CANDIDATE_COLUMNS, CARD_COLUMNS)   # type: ignore[arg-type]
    form, item = ui.form_inputs, ui.cards.item
    boxes = {"language": form[2], "judge_sees": form[10], "judge_mode": form[12], "pick": ui.pick_rule,
             "thumb": ui.thumb, "predicate": item[4], "turns": item[7], "hit_on": item[9], "per": item[13],
             "roles": item[19], "contexts": item[20]}
    return {name: [tuple(c) for c in box.choices] for name, box in boxes.items()}


def test_choices_are_said_in_the_pages_language_and_keep_english_values():
    zh, en = choices_of("zh"), choices_of("en")
    assert zh.keys() == en.keys()
    for name in zh:                                       # the same values on both pages: what handlers and YAML see
        assert [v for _, v in zh[name]] == [v for _, v in en[name]], name
    assert [v for _, v in zh["predicate"]] == ["check", "question", "rubric"]
    assert dict(zh["predicate"])["确定性检查（check）"] == "check" and dict(zh["per"])["每次出现"] == "occurrence"
    assert dict(zh["hit_on"]) == {"默认": "", "是": "yes", "否": "no"}
    assert dict(zh["pick"])["之前未通过的"] == "failing" and dict(zh["thumb"])["👎 不同意"] == "down"
    assert dict(zh["judge_sees"])["参考答案（ground_truth）"] == "ground_truth"
    assert dict(zh["judge_mode"])["整体评分（holistic）"] == "holistic" and dict(zh["roles"])["客服"] == "assistant"
    assert dict(zh["turns"])["客服的每一轮"] == "assistant" and dict(zh["contexts"])["不限"] == ""
    for name, pairs in zh.items():                        # no English word left as a Chinese label
        assert all(any("\u4e00" <= ch <= "\u9fff" for ch in label) for label, _ in pairs), (name, pairs)
    assert dict(en["predicate"]) == {"check": "check", "question": "question", "rubric": "rubric"}
    assert dict(en["thumb"]) == {"👍 agree": "up", "👎 disagree": "down"}
