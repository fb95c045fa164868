"""Messages a rubric author or CI user reads: where (line, field counted as editors count) and what is wrong."""
import textwrap

import pytest

from rubriceval import JudgeConfig, RubricError, load_judge_config, load_rubric, validate_path
from rubriceval.report.gate_checks import GateUsageError, parse_check

HEAD = textwrap.dedent("""\
    id: demo
    name: 演示
    criterion: 回答是否有帮助
    score_descriptions: {1: 完全没有帮助, 2: 帮助很少, 3: 部分有帮助, 4: 大部分有帮助, 5: 完全解决问题}
    items:
      - id: judge
        type: judge
      - id: link
        type: must_mention
        phrases: [链接]
    """)


def write(tmp_path, text):
    path = tmp_path / "r.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_duplicate_item_id_points_at_the_second_id_line(tmp_path):
    path = write(tmp_path, HEAD + "  - id: link\n    type: max_length\n    max_chars: 10\n")
    with pytest.raises(RubricError) as exc:
        load_rubric(path)
    assert exc.value.line == 11 and exc.value.field == "item 3 (id: link).id"
    assert "duplicate item id 'link'" in exc.value.message and "line 8" in exc.value.message


def test_item_locations_count_from_one_and_name_the_id(tmp_path):
    path = write(tmp_path, HEAD.replace("phrases: [链接]", "phrases: []"))
    with pytest.raises(RubricError) as exc:
        load_rubric(path)
    assert exc.value.field == "item 2 (id: link).phrases" and exc.value.line == 10
    near = HEAD + textwrap.indent(textwrap.dedent("""\
        - id: tone
          type: judge
          criterion: 语气
          score_descriptions: {1: 语气很差, 2: 语气较差, 3: 语气一般, 4: 语气很好，用词礼貌，表达清楚，没有问题,
                               5: 语气很好，用词礼貌，表达清楚，没有问题。}
        """), "  ")
    _, findings = validate_path(write(tmp_path, near))
    fields = [f.field for f in findings]
    assert "item 3 (id: tone).score_descriptions.5" in fields, fields


@pytest.mark.parametrize("check,column,meant", [("x mean=>4", 7, "'x mean>=4'"), ("质量 =< 3", 4, "'质量 <= 3'"),
                                                ("x mean==4", 7, None), ("x mean=4", 7, None)])
def test_gate_check_points_at_a_wrong_operator(check, column, meant):
    with pytest.raises(GateUsageError) as exc:
        parse_check(check)
    text = exc.value.format()
    assert f"at column {column}" in text and "is not an operator" in text and "no rubric or metric" not in text
    if meant:
        assert f"did you mean {meant}" in text
    assert parse_check("x mean>=4").op == ">="


def test_an_external_judge_without_a_model_is_not_called_local(monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("RUBRICEVAL_JUDGE_MODEL", raising=False)
    text = load_judge_config().describe()
    assert text.startswith("http://127.0.0.1:9/v1 (model not set)") and "local" not in text
    assert JudgeConfig().short_name() == "embedded local judge (Qwen2.5-Coder-1.5B)"
    assert JudgeConfig(base_url="http://h/v1", model="qwen-max").describe() == "qwen-max at http://h/v1"
    from rubriceval.report.html import judge_label  # the report's header says the same
    assert judge_label({"base_url": "http://h/v1", "model": "local"}) == "http://h/v1 (model not set)"
    assert judge_label({"base_url": None, "model": "local"}).startswith("embedded local judge")


def test_why_a_rubric_does_not_apply_names_the_failed_condition():
    from rubriceval import read_dataset
    from rubriceval.rubric.applies import applies, why_not

    samples = {s.id: s for s in read_dataset("datasets/demo_cs_zh.jsonl")}
    soothing = load_rubric("rubrics/emotional_soothing.yaml")
    reason = why_not(soothing, samples["exp-good"])
    assert "applies_to.tags ['订单延迟']" in reason and "'报销'" in reason and "question_pattern" in reason
    assert why_not(soothing, samples["delay-curt"]) is None and applies(soothing, samples["delay-curt"])
    english = load_rubric("rubrics/helpfulness_en.yaml")
    assert why_not(english, samples["delay-curt"]) == "applies_to.languages is ['en'] and the sample is in 'zh'"


def run_cli(capsys, *argv):
    from rubriceval.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_validate_exit_codes_match_the_help(tmp_path, capsys):
    from rubriceval.cli import build_parser

    assert "2 bad input or usage" in build_parser().format_help()
    folder = tmp_path / "rubrics"
    folder.mkdir()
    write(folder, HEAD)
    assert run_cli(capsys, "validate", str(folder))[0] == 0
    write(folder, HEAD.replace("criterion: 回答是否有帮助", "criterion: '{{ nonsense }}'"))     # loads; lint error
    code, out, _ = run_cli(capsys, "validate", str(folder))
    assert code == 1 and "cannot be filled" in out
    write(folder, HEAD.replace("phrases: [链接]", "phrases: []"))                            # not a rubric at all
    assert run_cli(capsys, "validate", str(folder))[0] == 2


def test_compile_says_when_the_rubric_does_not_apply_and_prints_it_only_with_force(capsys):
    args = ["compile", "rubrics/emotional_soothing.yaml", "--dataset", "datasets/demo_cs_zh.jsonl"]
    code, out, _ = run_cli(capsys, *args, "--sample", "exp-good")
    assert code == 0 and "does not apply to sample 'exp-good'" in out and "applies_to.tags" in out
    assert "--force" in out and "----- system -----" not in out
    code, out, _ = run_cli(capsys, *args, "--sample", "exp-good", "--force")
    assert code == 0 and "does not apply" in out and "----- system -----" in out
    code, out, _ = run_cli(capsys, *args)                        # no --sample: the first row it applies to
    assert code == 0 and "does not apply" not in out and "----- system -----" in out
