"""A rubric's knowledge file (issue 28.6): `rubriceval validate` says when it is missing or unreadable, naming the
rubric file, the line of `knowledge:` and the knowledge file; context-conditional checks read its passages as
context in a run, in the check tester (run_check) and in the studio's check tester."""
from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import TypeAdapter

from rubriceval import Conversation
from rubriceval.checks import run_check
from rubriceval.cli import main
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.rubric.loader import load_rubric
from rubriceval.rubric.schema import Item
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.validate.lint import validate_path

RUBRIC = """id: shipping_promise
name: 包邮承诺
language: zh
scope: conversation
criterion: 不要承诺知识库里没有的包邮。
score_descriptions: {1: 承诺了没有的包邮, 2: 较差, 3: 一般, 4: 较好, 5: 没有越权承诺}
knowledge: {knowledge}
items:
  - id: no_free_shipping
    type: must_not_mention
    turns: assistant
    phrases: ["包邮"]
    unless_context: ["包邮"]
combine: {rule: min}
"""
POLICY = "# 运费\n满 99 元包邮。\n\n# 补偿\n延误超过 3 天补偿 10 元优惠券。\n"


def write(tmp_path: Path, knowledge: str) -> Path:
    path = tmp_path / "rubric.yaml"
    path.write_text(RUBRIC.replace("{knowledge}", knowledge), encoding="utf-8")
    return path


def chat(*turns: tuple[str, str]):
    return conversation_sample(Conversation(id="c1", turns=[{"role": r, "content": c} for r, c in turns]))


CONVO = chat(("user", "运费多少"), ("assistant", "这单包邮哦"))
KNOWLEDGE_LINE = 7          # the line of `knowledge:` in RUBRIC


def test_validate_names_the_rubric_line_and_the_missing_knowledge_file(tmp_path: Path, capsys):
    rubric = write(tmp_path, "policies/missing.md")
    _, findings = validate_path(rubric)
    [finding] = [f for f in findings if f.field == "knowledge"]
    assert finding.severity == "error" and finding.line == KNOWLEDGE_LINE and finding.file == str(rubric)
    assert "missing.md" in finding.message and "not found" in finding.message
    assert main(["validate", str(rubric)]) == 1
    assert f"{rubric}:{KNOWLEDGE_LINE} [knowledge]" in capsys.readouterr().out


def test_validate_names_the_bad_line_of_a_jsonl_knowledge_file(tmp_path: Path):
    (tmp_path / "kb.jsonl").write_text('{"text": "七天无理由退货"}\n{"title": "运费"}\n', encoding="utf-8")
    _, findings = validate_path(write(tmp_path, "kb.jsonl"))
    [finding] = [f for f in findings if f.field == "knowledge"]
    assert finding.line == KNOWLEDGE_LINE and "kb.jsonl:2 [text]" in finding.message


def test_validate_refuses_a_knowledge_file_that_is_not_text_or_not_a_file(tmp_path: Path):
    (tmp_path / "kb.md").write_bytes("# 运费\n满 99 元包邮。\n".encode() + b"\xff\xfe\x00binary")
    _, findings = validate_path(write(tmp_path, "kb.md"))
    [finding] = [f for f in findings if f.field == "knowledge"]
    assert "not UTF-8" in finding.message and "kb.md:3" in finding.message
    (tmp_path / "folder.md").mkdir()
    _, findings = validate_path(write(tmp_path, "folder.md"))
    assert any(f.field == "knowledge" and "cannot read" in f.message for f in findings)


def test_a_readable_knowledge_file_beside_the_rubric_passes_validate(tmp_path: Path):
    (tmp_path / "policy.md").write_text(POLICY, encoding="utf-8")
    rubrics, findings = validate_path(write(tmp_path, "policy.md"))
    assert len(rubrics) == 1 and not [f for f in findings if f.severity == "error"]


def test_context_conditions_read_the_knowledge_file_in_a_run_and_in_the_check_tester(tmp_path: Path):
    (tmp_path / "policy.md").write_text(POLICY, encoding="utf-8")
    rubric = load_rubric(write(tmp_path, "policy.md"))
    granted = asyncio.run(score_rubric(rubric, CONVO, None))        # checks only: no judge needed
    denied = asyncio.run(score_rubric(rubric.model_copy(update={"knowledge": None}), CONVO, None))
    assert granted.evidence[0].passed is True and denied.evidence[0].passed is False
    assert granted.score > denied.score
    check = rubric.check_items[0]
    assert run_check(check, CONVO).passed is False                  # no knowledge given: nothing grants it
    assert run_check(check, CONVO, ["满 99 元包邮。"]).passed is True
    from rubriceval.studio.workbench import try_checks

    assert [line.passed for line in try_checks(rubric, CONVO)] == [True]
    (tmp_path / "policy.md").write_text("# 运费\n运费 10 元，不包邮。\n", encoding="utf-8")
    no_grant = TypeAdapter(Item).validate_python({"id": "x", "type": "must_not_mention", "turns": "assistant",
                                                  "phrases": ["包邮"], "unless_context": ["满 99 元包邮"]})
    assert run_check(no_grant, CONVO, ["运费 10 元，不包邮。"]).passed is False


def test_an_edit_within_the_same_mtime_is_read_again(tmp_path):
    """The reader's cache is keyed on the file's size too: an edit the clock cannot tell apart is not read stale."""
    import os

    from rubriceval.data.knowledge import load_knowledge

    kb = tmp_path / "kb.md"
    kb.write_text("# 退货\n七天无理由退货。\n", encoding="utf-8")
    stamp = kb.stat().st_mtime_ns
    assert "七天" in load_knowledge(kb).passages[0]
    kb.write_text("# 退货\n十五天无理由退货，运费由商家承担。\n", encoding="utf-8")
    os.utime(kb, ns=(stamp, stamp))                 # same modification time as the first text
    assert "十五天" in load_knowledge(kb).passages[0]
