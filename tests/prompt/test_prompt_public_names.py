"""The criterion and field renderers that several prompt builders share are public names of prompt/compile.py:
no module reaches into its private helpers."""
from __future__ import annotations

import ast
from pathlib import Path

import rubriceval
from rubriceval import Sample, load_rubric
from rubriceval.prompt.compile import field_value, render_criterion

PACKAGE = Path(rubriceval.__file__).parent

RUBRIC = """\
id: probe
name: probe
version: 1
language: en
judge_sees: [question, answer]
criterion: "Does the answer address {{ sample.question }}?"
score_descriptions: {1: none, 2: little, 3: some, 4: most, 5: all}
items:
  - {id: judge, type: judge}
"""


def test_no_module_imports_private_names_from_compile():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "rubriceval.prompt.compile":
                offenders += [f"{path.relative_to(PACKAGE)}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert offenders == []


def test_public_renderers(tmp_path):
    path = tmp_path / "probe.yaml"
    path.write_text(RUBRIC, encoding="utf-8")
    rubric = load_rubric(path)
    sample = Sample(id="s1", question="where is my parcel", answer="tomorrow", contexts=[])
    assert render_criterion(rubric, rubric.judge_items[0], sample) == "Does the answer address where is my parcel?"
    assert field_value(sample, "contexts", "en") == "(none)"
    assert field_value(sample, "answer", "en") == "tomorrow"
