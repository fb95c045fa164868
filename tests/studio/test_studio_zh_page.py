"""The Chinese studio speaks Chinese (issue 42, item 4): every label, choice, header and text of the zh page, and the
messages its actions give (cost plan, marks, diff, scorecard items, the user errors the studio raises), come from the
language tables — no English sentence is left (identifiers such as `rubriceval validate`, judge_sees or YAML keys
aside)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.config import JudgeConfig
from rubriceval.studio.card_form import card_form_from_yaml, item_rows
from rubriceval.studio.messages import say_message
from rubriceval.studio.trial import TrialAgreement, plan_text
from rubriceval.ui.studio.app import build_studio_app

ROOT = Path(__file__).resolve().parents[2]
# two or more English words in a row (an identifier is one word: judge_sees, must_not_mention, --auth-file)
SENTENCE = re.compile(r"(?<![\w./-])[A-Za-z]{2,}(?:[ ,][A-Za-z]{2,})+(?![\w/-])")
IDENTIFIERS = ("rubriceval validate", "pip install python-docx", "python-docx")


def english(text: str) -> list[str]:
    text = re.sub(r"`[^`]*`", "", text)                         # commands and YAML quoted as code
    for identifier in IDENTIFIERS:
        text = text.replace(identifier, "")
    return SENTENCE.findall(text)


def texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in texts(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in texts(v)]
    return []


@pytest.fixture(scope="module")
def zh_app(tmp_path_factory):
    judge = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="stub")
    return build_studio_app(ROOT / "rubrics", tmp_path_factory.mktemp("zh") / "runs.sqlite", judge, lang="zh",
                            scorecards_dir=ROOT / "scorecards")


def test_every_label_choice_and_text_of_the_zh_page_is_chinese(zh_app):
    config = zh_app.get_config_file()
    found = []
    for component in config["components"]:
        props = component.get("props", {})
        for prop in ("label", "info", "placeholder", "choices", "headers", "value"):
            if prop == "value" and component.get("type") not in ("markdown", "button", "html"):
                continue
            for text in texts(props.get(prop)):
                if english(text):
                    found.append((component.get("type"), prop, text[:80]))
    assert found == []
    unlabelled = [c.get("props", {}).get("elem_id") for c in config["components"]
                  if c.get("type") in ("textbox", "code", "dataframe", "number", "dropdown", "radio", "checkboxgroup")
                  and not c.get("props", {}).get("label")]
    assert unlabelled == []           # a box without a label is read out as "Textbox" by the browser


def test_the_studios_messages_on_a_zh_page_are_chinese(zh_app):
    studio = zh_app.studio
    view, _ = studio.open("policy_compliance", "zh")
    assert view.report.startswith(("✔", "警告", "错误"))
    checks = view.values[-1]
    values = list(view.values)
    values[11] = 7                                           # threshold: a bad number
    yaml_text, report, rubric = studio.validate(tuple(values), view.base_text, "zh")
    assert rubric is None and "threshold" in report and not english(report), report
    values[11] = "高"
    yaml_text, report, _ = studio.validate(tuple(values), view.base_text, "zh")
    assert yaml_text == "" and not english(report) and "✔" not in report, report
    assert not english(studio.diff(tuple(view.values), view.base_text, "zh"))
    assert "/ 加我微信" in checks
    card = card_form_from_yaml((ROOT / "scorecards" / "ecommerce_qa_zh.yaml").read_text(encoding="utf-8"))
    rows = item_rows(card, "zh")
    assert not [cell for row in rows for cell in row[5:6] if english(str(cell))]
    assert not english(TrialAgreement(marked=2, agreed=1, mean_abs_diff=0.5).text("zh"))


def test_the_cost_plan_is_said_in_chinese():
    from rubriceval.run.planning import CostPlan, ScorerPlan

    plan = CostPlan(judge="stub", scorers=[ScorerPlan(scorer="x", kind="rubric", samples=5, calls=5)])
    said = plan_text(plan, 5, "zh")
    assert "5 次裁判调用" in said and not english(said.replace("stub", "")), said


def raised_messages() -> list[tuple[str, str]]:
    """Every user error the studio raises: (file, its English message with each {…} filled by a sample value)."""
    found = []
    for path in [*ROOT.glob("rubriceval/studio/*.py"), *ROOT.glob("rubriceval/ui/studio/*.py"),
                 *ROOT.glob("ui/studio/*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("RubricEvalError", "RubricError"):
                for part in [node.args[0] if node.args else None,
                             *[k.value for k in node.keywords if k.arg == "hint"]]:
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        found.append((path.name, part.value))
                    elif isinstance(part, ast.JoinedStr):
                        text = "".join(v.value if isinstance(v, ast.Constant) else "3" for v in part.values)
                        found.append((path.name, text))
    return found


def test_every_user_error_the_studio_raises_has_a_chinese_wording():
    messages = raised_messages()
    assert len(messages) > 40
    untranslated = [(name, text) for name, text in messages
                    if english(text) and english(say_message(text, "zh"))]
    assert untranslated == []


def test_a_user_error_is_said_in_chinese_with_its_hint():
    from rubriceval.studio.messages import said_error

    said = said_error(RubricEvalError("a rubric with id 'closing' exists already", field="id",
                                      hint="open it to edit it, or give the new rubric another id"), "zh")
    assert said.message == "id 为「closing」的细则已经存在" and not english(said.hint)
