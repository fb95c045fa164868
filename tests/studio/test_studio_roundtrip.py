"""The studio keeps what it opens (issue 42, item 1): every shipped rubric and scorecard (and the repository's other
rubric files) opened in the page's form and written back with no edit gives the same bytes; one edited field changes
only its own lines; `|` alternatives, anchors and merge keys, comments, key order and keys the form does not show
survive; the checks box shows alternatives one per line and leaves what it cannot show to the raw YAML editor.

These go through the page's own values (ui/studio/form_values: what the browser holds), which is where main lost
data: the checks box wrote `id | type | v1; v2`, so `私下转账|加我微信` came back as `私下转账`."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval.rubric.loader import load_rubric
from rubriceval.studio.card_form import card_form_from_yaml, yaml_with_head, yaml_with_item
from rubriceval.studio.check_text import parse_box
from rubriceval.studio.form import form_from_yaml, readonly_checks, yaml_from_form
from rubriceval.studio.versions import _with_version, diff
from rubriceval.studio.workbench import check_draft
from rubriceval.ui.studio.form_values import FIELD_INDEX, form_of, values_of

ROOT = Path(__file__).resolve().parents[2]
RUBRICS = sorted({*ROOT.glob("rubrics/*.yaml"), *ROOT.glob("examples/**/*.yaml"), *ROOT.glob("benchmarks/**/*rubrics/*.yaml")}
                 - set(ROOT.glob("examples/**/*card*.yaml")))
CARDS = sorted({*ROOT.glob("scorecards/*.yaml"), *ROOT.glob("examples/**/*card*.yaml")})


def names(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


def page_values(text: str) -> list:
    return values_of(form_from_yaml(text))


def written(values: list, text: str) -> str:
    return yaml_from_form(form_of(values), text)


def changed_lines(old: str, new: str) -> list[str]:
    return [line for line in diff(old, new, "x").splitlines()[2:] if line[:1] in "+-"]


@pytest.mark.parametrize("path", RUBRICS, ids=names(RUBRICS))
def test_a_rubric_opened_and_saved_with_no_edit_is_the_same_bytes(path):
    text = path.read_text(encoding="utf-8")
    assert written(page_values(text), text) == text
    assert _with_version(text, 7).replace("version: 7", "", 1) == _with_version(text, 8).replace("version: 8", "", 1)
    assert len(changed_lines(text, _with_version(text, 99))) <= 2       # a save bumps version: only that line


@pytest.mark.parametrize("path", RUBRICS, ids=names(RUBRICS))
def test_one_edited_field_changes_only_its_own_lines(path):
    text = path.read_text(encoding="utf-8")
    values = page_values(text)
    values[FIELD_INDEX["name"]] = values[FIELD_INDEX["name"]] + "（改）"
    assert changed_lines(text, written(values, text)) == [f"-name: {values[1][:-3]}", f"+name: {values[1]}"]
    values = page_values(text)
    values[FIELD_INDEX["level3"]] = "新的第三档描述"
    lines = changed_lines(text, written(values, text))
    assert len(lines) == 2 and lines[1].startswith("+") and "3: 新的第三档描述" in lines[1], lines
    out = written(values, text)
    assert out.count("#") == text.count("#")               # every comment kept
    assert check_draft(out, path.name).rubric.items == check_draft(text, path.name).rubric.items


def test_alternatives_show_one_per_line_and_survive_an_edit_of_their_check():
    text = (ROOT / "rubrics" / "policy_compliance.yaml").read_text(encoding="utf-8")
    box = page_values(text)[FIELD_INDEX["checks"]]
    assert "no_offline_channel: must_not_mention\n  - 私下转账\n    / 加我微信\n    / 个人微信\n    / 私聊转账" in box
    assert "|" not in box                                    # the box has no separator a phrase could hold
    values = page_values(text)
    values[FIELD_INDEX["checks"]] = box.replace("    / 个人微信\n", "    / 个人微信\n    / 私下联系\n")
    out = written(values, text)
    assert changed_lines(text, out) == ['-    phrases: ["私下转账|加我微信|个人微信|私聊转账"]',
                                        '+    phrases: ["私下转账|加我微信|个人微信|私下联系|私聊转账"]']


def test_a_regex_keeps_its_own_alternation():
    text = (ROOT / "rubrics" / "process_compliance.yaml").read_text(encoding="utf-8")
    box = page_values(text)[FIELD_INDEX["checks"]]
    assert r"  - https?://oa\.example\.com/expense\S*|费用系统" in box
    spec = next(s for s in parse_box(box) if s.type == "regex")
    assert spec.values == [r"https?://oa\.example\.com/expense\S*|费用系统"]


def test_weights_and_keys_the_form_does_not_show_are_kept_when_a_check_is_edited():
    text = (ROOT / "rubrics" / "required_link.yaml").read_text(encoding="utf-8")
    values = page_values(text)
    values[FIELD_INDEX["checks"]] = values[FIELD_INDEX["checks"]].replace("  - 400", "  - 300")
    out = written(values, text)
    assert changed_lines(text, out) == ["-    max_chars: 400", "+    max_chars: 300"]
    assert "weight: 3" in out and "url:" not in out


def test_anchors_and_merge_keys_are_read_only_and_never_rewritten():
    text = (ROOT / "rubrics" / "emotional_soothing_multiturn.yaml").read_text(encoding="utf-8")
    fixed = {item_id: why for item_id, why, _ in readonly_checks(text)}
    assert fixed["concrete_all"] == "studio_ro_anchor"
    assert {fixed[i] for i in ("concrete_most", "concrete_half", "concrete_some")} == {"studio_ro_merge"}
    values = page_values(text)
    assert "concrete_most" not in values[FIELD_INDEX["checks"]]
    values[FIELD_INDEX["checks"]] = ""                      # an emptied box removes only the checks it showed
    values[FIELD_INDEX["criterion"]] = values[FIELD_INDEX["criterion"]] + "补充一句。"
    out = written(values, text)
    assert "  - {<<: *concrete, id: concrete_most," in out and "phrases: []" not in out
    rubric = check_draft(out, "emotional_soothing_multiturn.yaml").rubric
    assert {"concrete_all", "concrete_most", "concrete_half", "concrete_some"} <= {i.id for i in rubric.items}


def test_a_comment_above_an_edited_check_stays():
    text = (ROOT / "rubrics" / "policy_compliance.yaml").read_text(encoding="utf-8")
    values = page_values(text)
    values[FIELD_INDEX["checks"]] = values[FIELD_INDEX["checks"]].replace("    / 运费全免", "    / 运费全免\n    / 不要运费")
    out = written(values, text)
    assert "  # 知识库（参考资料）没有给出的优惠不得承诺" in out and out.count("#") == text.count("#")


def test_applies_to_is_a_field_of_the_form():
    text = (ROOT / "rubrics" / "policy_compliance.yaml").read_text(encoding="utf-8")
    values = page_values(text)
    assert values[FIELD_INDEX["applies_languages"]] == ["zh"]
    values[FIELD_INDEX["applies_tags"]] = "退款，投诉"
    out = written(values, text)
    assert changed_lines(text, out) == ["+  tags: [退款, 投诉]"]
    assert load_rubric_text(out).applies_to.tags == ["退款", "投诉"]


def load_rubric_text(text: str):
    checked = check_draft(text, "policy_compliance.yaml")
    assert checked.rubric is not None, checked.report()
    return checked.rubric


@pytest.mark.parametrize("path", CARDS, ids=names(CARDS))
def test_a_scorecard_item_or_head_rewritten_unchanged_is_the_same_bytes(path):
    text = path.read_text(encoding="utf-8")
    form = card_form_from_yaml(text, path.name)
    assert form.items
    for item in form.items:
        assert yaml_with_item(text, item, item.id, path.name) == text, item.id
    assert yaml_with_head(text, form.head, path.name) == text


def test_the_shipped_rubrics_still_load_after_a_version_bump():
    for path in ROOT.glob("rubrics/*.yaml"):
        text = _with_version(path.read_text(encoding="utf-8"), 5)
        assert check_draft(text, path.name).rubric.version == 5
        assert load_rubric(path).id in text
