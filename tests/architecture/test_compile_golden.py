"""Compiled judge prompts are golden files: any change to a template or rubric shows up in review.

Regenerate after an intended change with: UPDATE_GOLDEN=1 pytest tests/architecture/test_compile_golden.py
"""
import json
import os
from pathlib import Path

import pytest

from rubriceval import compile_rubric, load_rubric, read_dataset

GOLDEN = Path(__file__).parents[1] / "golden"
CASES = [
    ("rubrics/emotional_soothing.yaml", "delay-curt", "json_schema"),
    ("rubrics/process_compliance.yaml", "exp-good", "json_schema"),
    ("rubrics/process_compliance.yaml", "exp-good", "text"),
    ("rubrics/policy_compliance.yaml", "pts-inject", "json_schema"),
    ("rubrics/helpfulness_en.yaml", "en-refund", "text"),
]


def render(rubric_path, sample_id, mode):
    sample = {s.id: s for s in read_dataset("datasets/demo_cs_zh.jsonl")}[sample_id]
    prompts = compile_rubric(load_rubric(rubric_path), sample, structured=mode == "json_schema")
    return "\n\n".join(f"## {p.item_id}\n" + "\n".join(f"--- {m['role']}\n{m['content']}" for m in p.messages)
                       + (f"\n--- schema\n{json.dumps(p.json_schema, ensure_ascii=False)}" if p.json_schema else "")
                       for p in prompts) + "\n"


@pytest.mark.parametrize("rubric_path,sample_id,mode", CASES)
def test_compiled_prompt_matches_golden(rubric_path, sample_id, mode):
    name = f"{Path(rubric_path).stem}__{sample_id}__{mode}.txt"
    text = render(rubric_path, sample_id, mode)
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") or not path.exists():
        path.write_text(text, encoding="utf-8")
        if not os.environ.get("UPDATE_GOLDEN"):
            pytest.fail(f"golden file {name} was missing and has been written; review and commit it")
    assert text == path.read_text(encoding="utf-8")


def test_prompt_contains_all_five_levels_and_untrusted_fields_are_fenced():
    text = render("rubrics/policy_compliance.yaml", "pts-inject", "json_schema")
    for level in range(1, 6):
        assert f"分数 {level}：" in text
    assert "‹‹‹END 机器人回答›››" in text       # the answer's fake closing delimiter is neutralised


def test_text_mode_asks_for_result_marker():
    text = render("rubrics/helpfulness_en.yaml", "en-refund", "text")
    assert "[RESULT] <integer 1-5>" in text and "--- schema" not in text
