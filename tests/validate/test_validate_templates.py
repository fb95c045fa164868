"""`rubriceval validate` renders every criterion that is template source in the prompt sandbox, with a placeholder
sample: an unsafe expression fails validate (file:line [field]), not only compile/run."""
from __future__ import annotations

import textwrap

from rubriceval.cli import main
from rubriceval.validate.template_lint import placeholder_sample

RUBRIC = textwrap.dedent("""\
    id: probe
    name: probe
    version: 1
    language: en
    judge_sees: [question, answer]
    criterion: "Does the answer help with {{ sample.question }}?{CRITERION}"
    score_descriptions: {1: none at all, 2: a little help, 3: some help given, 4: mostly helpful, 5: fully helpful}
    items:
      - {id: judge, type: judge}
      - id: tone
        type: judge
        criterion: "Tone about order {{ sample.metadata.order_id }}{ITEM}"
      - id: cl
        type: checklist
        criterion: "Context: {{ sample.contexts[0] }}{CHECKLIST}"
        questions:
          - {id: polite, ask: "Is it polite? {{ not a template here }}"}
        levels: {5: polite}
    """)


def validate(tmp_path, capsys, criterion="", item="", checklist=""):
    path = tmp_path / "probe.yaml"
    path.write_text(RUBRIC.replace("{CRITERION}", criterion).replace("{ITEM}", item)
                    .replace("{CHECKLIST}", checklist), encoding="utf-8")
    code = main(["validate", str(path)])
    out = capsys.readouterr().out
    return code, [line for line in out.splitlines() if line.startswith(("error", "warning"))], path


def test_safe_placeholders_pass(tmp_path, capsys):
    code, findings, _ = validate(tmp_path, capsys)
    assert code == 0, findings
    assert not [f for f in findings if "template" in f or "placeholder" in f]


def test_unsafe_rubric_criterion_fails_with_file_line_field(tmp_path, capsys):
    code, findings, path = validate(tmp_path, capsys, criterion=" {{ sample.__class__.__mro__ }}")
    assert code == 1
    assert findings == [f"error: {path}:6 [criterion]: unsafe template expression: access to attribute '__class__' "
                        "of 'Sample' object is unsafe. (hint: only placeholders such as {{ sample.question }} may "
                        "be used)"]


def test_unsafe_item_and_checklist_criteria_fail(tmp_path, capsys):
    code, findings, path = validate(tmp_path, capsys, item=" {{ sample.metadata.x.__class__ }}",
                                    checklist=" {{ sample.tags.append('x') }}")
    assert code == 1
    assert len(findings) == 2, findings
    assert findings[0].startswith(f"error: {path}:12 [item 2 (id: tone).criterion]: unsafe template expression")
    assert findings[1].startswith(f"error: {path}:15 [item 3 (id: cl).criterion]: unsafe template expression")
    assert "'append'" in findings[1]


def test_value_the_placeholder_lacks_is_a_warning(tmp_path, capsys):
    code, findings, path = validate(tmp_path, capsys, checklist=" {{ sample.contexts[3] }}")
    assert code == 0
    assert findings == [f"warning: {path}:15 [item 3 (id: cl).criterion]: placeholder cannot be filled: list object "
                        "has no element 3 (hint: use {{ sample.<field> }} or {{ rubric.<field> }}); checked with a "
                        "placeholder sample: a sample lacking this value fails"]


def test_placeholder_sample_answers_any_metadata_key():
    sample = placeholder_sample()
    assert sample.metadata["anything"] == "…"
    assert sample.conversation is not None and sample.contexts
