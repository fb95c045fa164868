"""`rubriceval scorecard import/export` (issue 25.4): a QA lead's sheet becomes a scorecard (rule texts without a
machine predicate become judge questions marked for review), every unreadable row is reported as sheet:row
[column], and export → import gives the same scorecard version."""
from pathlib import Path

import openpyxl
import pytest
import yaml

from rubriceval.cli import main
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.scorecard.sheet import SheetError, read_sheet, write_sheet

ROOT = Path(__file__).resolve().parents[2]
HEADER = ["维度", "质检项", "规则说明", "扣分", "一票否决", "适用条件"]
LEAD_ROWS = [
    ["服务规范", "未使用欢迎语", "开场没有使用“您好”等欢迎语", 3, "否", ""],
    [None, "未询问是否还有其他问题", "结束前没有询问用户是否还有其他问题", "-2", "", "全部"],
    ["情绪安抚", "未安抚情绪", "用户不满时没有安抚", 5, "否", "关键词：投诉|不满|还是不行"],
    ["业务准确", "退款未说时效", "退款没有告知到账时间", 3, "否", "标签：退款、售后"],
    ["合规", "索要密码", "索要登录密码或验证码", None, "是", ""],
    ["合规", "泄露他人信息", "说出了其他客户的信息", "", "√", "用户询问了订单信息"],
]


def workbook(tmp_path, rows, header=HEADER, title="评分表") -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = title
    sheet.append(["某电商客服质检评分表 2026 版"])      # a title row above the header, as sheets often have
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    path = tmp_path / "评分表.xlsx"
    book.save(path)
    return path


def test_a_leads_sheet_becomes_a_scorecard(tmp_path):
    card = read_sheet(workbook(tmp_path, LEAD_ROWS))
    assert [d.id for d in card.dimensions] == ["服务规范", "情绪安抚", "业务准确", "合规"]
    items = {i.name: i for i in card.items}
    assert items["未使用欢迎语"].points == -3 and items["未询问是否还有其他问题"].dimension == "服务规范"
    assert items["未询问是否还有其他问题"].points == -2 and items["未询问是否还有其他问题"].applies_when is None
    assert items["未安抚情绪"].applies_when.pattern == "投诉|不满|还是不行"
    assert items["退款未说时效"].applies_when.tags == ["退款", "售后"]
    assert items["索要密码"].fatal and items["索要密码"].points is None and items["泄露他人信息"].fatal
    assert items["泄露他人信息"].applies_when.question == "用户询问了订单信息？"
    # no machine predicate: a judge question from the rule text, marked for review
    greeting = items["未使用欢迎语"]
    assert greeting.kind == "question" and greeting.review and "开场没有使用" in greeting.question
    assert greeting.hit_on == "yes"


def test_every_unreadable_row_is_reported_as_sheet_row_column(tmp_path):
    rows = [*LEAD_ROWS,
            ["服务规范", "回复太慢", "", "3.5", "否", ""],           # row 9: not a whole number
            ["服务规范", "", "没有名字", 2, "否", ""],                # row 10: no item name
            ["合规", "辱骂客户", "", 5, "也许", ""],                  # row 11: fatal neither yes nor no
            ["合规", "骂人", "", "", "否", ""],                      # row 12: no points, not fatal
            ["合规", "否决加分", "", None, "是", "{tags: [a]"]]       # row 13: applies_when not YAML
    with pytest.raises(SheetError) as info:
        read_sheet(workbook(tmp_path, rows))
    problems = info.value.problems
    assert problems[0].startswith("评分表:9 [扣分]") and "3.5" in problems[0]
    assert problems[1].startswith("评分表:10 [质检项]")
    assert problems[2].startswith("评分表:11 [一票否决]")
    assert problems[3].startswith("评分表:12 [扣分]") and "no points" in problems[3]
    assert problems[4].startswith("评分表:13 [适用条件]")
    assert len(problems) == 5


def test_the_cli_reports_rows_and_writes_nothing(tmp_path, capsys):
    path = workbook(tmp_path, [*LEAD_ROWS, ["合规", "x", "", "abc", "否", ""]])
    out = tmp_path / "card.yaml"
    assert main(["scorecard", "import", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "评分表.xlsx:评分表:9 [扣分]" in err and not out.exists()
    good = workbook(tmp_path, LEAD_ROWS)
    assert main(["scorecard", "import", str(good), "--out", str(out), "--id", "lead_qa"]) == 0
    assert "marked review: true" in capsys.readouterr().out
    card = load_scorecard(out)                      # the YAML written loads as a scorecard
    assert card.id == "lead_qa" and len(card.items) == 6


def test_english_and_own_column_names(tmp_path):
    rows = [["tone", "No greeting", "did not greet", 2, "no", "tags: chat"]]
    card = read_sheet(workbook(tmp_path, rows, header=["Dimension", "Item", "Rule", "Deduction", "Fatal", "Applies when"]))
    assert card.language == "en" and card.items[0].points == -2 and card.items[0].applies_when.tags == ["chat"]
    assert card.items[0].question.startswith("Does the conversation show this")
    own = read_sheet(workbook(tmp_path, [["服务", "无问候", 4]], header=["类别", "检查点", "扣分标准"]),
                     columns={"dimension": "类别", "name": "检查点", "deduction": "扣分标准"})
    assert own.items[0].points == -4 and own.items[0].dimension == "服务"


def test_export_then_import_keeps_the_version(tmp_path):
    for name in ("ecommerce_qa_zh.yaml", "support_qa_en.yaml"):
        card = load_scorecard(ROOT / "scorecards" / name)
        back = read_sheet(write_sheet(card, tmp_path / f"{card.id}.xlsx"), card_folder=ROOT / "scorecards")
        assert back.version_tag == card.version_tag
        assert back.model_dump(exclude={"source_file"}) == card.model_dump(exclude={"source_file"})


def test_export_escapes_formulas(tmp_path):
    card = load_scorecard(ROOT / "scorecards" / "ecommerce_qa_zh.yaml")
    card = card.model_copy(update={"items": [card.items[0].model_copy(update={"description": "=HYPERLINK(1)"}),
                                             *card.items[1:]]})
    sheet = openpyxl.load_workbook(write_sheet(card, tmp_path / "x.xlsx")).active
    assert sheet.cell(row=2, column=4).value == "'=HYPERLINK(1)"
    assert read_sheet(tmp_path / "x.xlsx", card_folder=ROOT / "scorecards").items[0].description == "=HYPERLINK(1)"


POLICIES = "# 退货\n7 天无理由退货，商品完好即可。\n\n# 运费险\n勾选运费险的订单，退货运费由保险承担。\n"


def card_with_knowledge(folder: Path, knowledge: str = "policies.md"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "policies.md").write_text(POLICIES, encoding="utf-8")
    text = (ROOT / "scorecards" / "support_qa_en.yaml").read_text(encoding="utf-8")
    (folder / "qa.yaml").write_text(f"knowledge: {knowledge}\n" + text, encoding="utf-8")
    return load_scorecard(folder / "qa.yaml")


def test_the_knowledge_file_goes_out_and_comes_back(tmp_path):
    card = card_with_knowledge(tmp_path / "cards")
    assert card.knowledge == "policies.md" and card.knowledge_passages
    book = write_sheet(card, tmp_path / "cards" / "qa.xlsx")
    info = {r[0]: r[1] for r in openpyxl.load_workbook(book)["scorecard"].iter_rows(values_only=True)}
    assert info["knowledge"] == "policies.md"                     # as the YAML names it
    back = read_sheet(book)                                       # beside the workbook, as the card was
    assert back.knowledge == "policies.md" and back.knowledge_passages == card.knowledge_passages
    assert back.version_tag == card.version_tag
    assert back.model_dump(exclude={"source_file"}) == card.model_dump(exclude={"source_file"})
    moved = tmp_path / "elsewhere.xlsx"
    moved.write_bytes(book.read_bytes())                          # the YAML goes back to the cards folder
    assert read_sheet(moved, card_folder=tmp_path / "cards").version_tag == card.version_tag
    # a policy edit is a new version: the passages come from the file at import
    (tmp_path / "cards" / "policies.md").write_text(POLICIES + "\n# 补偿\n延迟发货补偿 5 元。\n", encoding="utf-8")
    assert read_sheet(book).version_tag != card.version_tag


def test_a_bad_knowledge_cell_is_reported_as_sheet_row_column(tmp_path):
    card = card_with_knowledge(tmp_path / "cards")
    book = write_sheet(card, tmp_path / "cards" / "qa.xlsx")
    (tmp_path / "cards" / "policies.pdf").write_bytes(b"%PDF-1.4")
    for value, said in (("missing.md", "knowledge file not found"), ("policies.pdf", ".md, .txt or .jsonl"),
                        (42, "not a file name")):
        wb = openpyxl.load_workbook(book)
        info = wb["scorecard"]
        row = next(r for r in info.iter_rows() if r[0].value == "knowledge")
        row[1].value = value
        items = wb["items"]
        items.cell(row=2, column=5).value = "abc"                 # and a bad item row: all reported at once
        bad = tmp_path / f"bad_{value}.xlsx"
        wb.save(bad)
        with pytest.raises(SheetError) as info_error:
            read_sheet(bad, card_folder=tmp_path / "cards")
        problems = info_error.value.problems
        assert problems[0].startswith("items:2 [points]")
        assert problems[1].startswith(f"scorecard:{row[0].row} [knowledge]: ") and said in problems[1], problems
        assert (str(tmp_path / "cards") in problems[1]) == isinstance(value, str) and len(problems) == 2


def test_the_cli_import_writes_knowledge_and_reads_it_from_the_out_folder(tmp_path, capsys):
    card = card_with_knowledge(tmp_path / "cards")
    book = write_sheet(card, tmp_path / "sheets" / "qa.xlsx")     # the workbook elsewhere, without the policies
    out = tmp_path / "cards" / "imported.yaml"
    assert main(["scorecard", "import", str(book), "--out", str(out)]) == 0
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert written["knowledge"] == "policies.md" and "knowledge_passages" not in written
    assert load_scorecard(out).version_tag == card.version_tag
    assert f"version {card.version_tag}" in capsys.readouterr().out
