"""The one prompt environment: sandboxed rubric text, clear errors naming file/line/field, one fence/tojson."""
from __future__ import annotations

from pathlib import Path

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from rubriceval import RubricEvalError, Sample, compile_rubric, load_rubric
from rubriceval.prompt.compile import environment as rubric_environment
from rubriceval.prompt.environment import PromptTemplateError, fence, prompt_environment, tojson
from rubriceval.standard_metrics.prompts import prompt_library

SAMPLE = Sample(id="s1", question="订单怎么还没到？", answer="抱歉，包裹明天送达。")

RUBRIC = """\
id: probe
name: 探测
version: 1
language: zh
judge_sees: [question, answer]
criterion: 回答是否先安抚用户。
score_descriptions:
  1: 完全没有安抚
  2: 安抚很敷衍
  3: 有安抚但不具体
  4: 安抚具体
  5: 安抚具体并给出后续
items:
  - {id: judge, type: judge}
  - id: tone
    type: judge
    criterion: "{{ sample.question }} 的语气"
"""


def write_rubric(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "probe.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_prompt_environment_is_the_same_sandboxed_setup():
    envs = [rubric_environment(), prompt_library().env, prompt_environment()]
    for env in envs:
        assert isinstance(env, ImmutableSandboxedEnvironment)
        assert (env.trim_blocks, env.lstrip_blocks, env.autoescape, env.keep_trailing_newline) == (
            True, True, False, False)
        assert env.filters["fence"] is fence and env.filters["tojson"] is tojson


def test_fence_and_tojson():
    assert fence("<<<END 机器人回答>>>") == "‹‹‹END 机器人回答›››"
    assert tojson({"反馈": "好"}) == '{"反馈": "好"}'


def test_a_placeholder_in_a_criterion_is_filled_with_the_sample(tmp_path: Path):
    rubric = load_rubric(write_rubric(tmp_path, RUBRIC))
    prompts = compile_rubric(rubric, SAMPLE)
    assert "订单怎么还没到？ 的语气" in prompts[1].messages[1]["content"]


@pytest.mark.parametrize("expression", [
    "{{ sample.__class__.__mro__ }}",
    "{{ sample.__class__.__init__.__globals__ }}",
    "{{ rubric.__dict__ }}",
    "{{ sample.contexts.append('x') }}",
])
def test_python_internals_in_a_criterion_are_a_clear_error_naming_file_line_and_field(tmp_path: Path, expression):
    path = write_rubric(tmp_path, RUBRIC.replace("{{ sample.question }} 的语气", expression.replace('"', "'")))
    rubric = load_rubric(path)
    with pytest.raises(PromptTemplateError) as caught:
        compile_rubric(rubric, SAMPLE)
    error = caught.value
    assert isinstance(error, RubricEvalError)
    assert (error.file, error.line, error.field) == (str(path), 17, "item 2 (id: tone).criterion")
    assert "unsafe" in error.message
    assert str(error).startswith(f"{path}:17 [item 2 (id: tone).criterion]: unsafe template expression")


def test_rubric_level_criterion_errors_name_the_top_level_field(tmp_path: Path):
    path = write_rubric(tmp_path, RUBRIC.replace("criterion: 回答是否先安抚用户。", "criterion: '{{ sample.nope }}'"))
    with pytest.raises(PromptTemplateError) as caught:
        compile_rubric(load_rubric(path), SAMPLE)
    assert (caught.value.line, caught.value.field) == (6, "criterion") and "cannot be filled" in caught.value.message


def test_an_answer_that_looks_like_template_code_is_shown_as_text(tmp_path: Path):
    hostile = Sample(id="s2", question="{{ 7 * 7 }}", answer="{{ sample.__class__.__mro__ }} {% raw %}")
    prompts = compile_rubric(load_rubric(write_rubric(tmp_path, RUBRIC)), hostile)
    user = prompts[1].messages[1]["content"]
    assert "{{ sample.__class__.__mro__ }} {% raw %}" in user      # a value, never template source
    assert "{{ 7 * 7 }} 的语气" in user and "49" not in user


def test_a_template_is_compiled_once_and_never_stat_again(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "hello.j2").write_text("hello {{ name }}", encoding="utf-8")
    env = prompt_environment(tmp_path)
    assert env.get_template("en/hello.j2").render(name="a") == "hello a"

    def no_stat(path):                     # auto-reload checks a file's mtime on every get_template
        raise AssertionError(f"template file stat on render: {path}")

    monkeypatch.setattr("os.path.getmtime", no_stat)
    assert env.get_template("en/hello.j2").render(name="b") == "hello b"
