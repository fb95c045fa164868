"""first_turn (issue 32.12): the greeting check on the first assistant turn, mirroring final_turn — pass and fail,
the turn number, the quoted span or what the turn said, and only in conversation rubrics."""
from __future__ import annotations

from pydantic import TypeAdapter

from rubriceval import Conversation, Rubric, Sample
from rubriceval.checks import run_check
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.i18n import evidence_text
from rubriceval.rubric.schema import Item
from rubriceval.validate.lint import lint_rubric

GREETING = dict(type="first_turn", phrases=["您好|欢迎"])


def chat(*turns: tuple[str, str]) -> Sample:
    return conversation_sample(Conversation(id="c1", turns=[{"role": r, "content": c} for r, c in turns]))


def item(**fields):
    return TypeAdapter(Item).validate_python({"id": "greet", **fields})


def test_first_turn_quotes_the_greeting_of_the_first_assistant_turn():
    convo = chat(("user", "在吗"), ("assistant", "您好，欢迎光临！"), ("user", "查订单"), ("assistant", "好的。"))
    ev = run_check(item(**GREETING), convo)
    assert ev.passed is True and ev.turn == 2 and ev.span == "您好"
    assert evidence_text(ev, "en").startswith("first assistant turn (2):")


def test_first_turn_fails_on_a_later_greeting_and_says_what_the_first_turn_said():
    convo = chat(("user", "在吗"), ("assistant", "什么事？"), ("user", "查订单"), ("assistant", "您好，请稍等。"))
    ev = run_check(item(**GREETING), convo)
    assert ev.passed is False and ev.turn == 2 and ev.missing == ["您好|欢迎"]
    assert "什么事？" in evidence_text(ev, "en")
    assert "第一轮客服回复（第 2 轮）" in evidence_text(ev, "zh")
    # final_turn on the same conversation reads the other end
    closing = run_check(item(type="final_turn", phrases=["您好"]), convo)
    assert closing.passed is True and closing.turn == 4


def test_first_turn_mode_all():
    convo = chat(("user", "hi"), ("assistant", "Hello, welcome to the shop"))
    assert run_check(item(type="first_turn", phrases=["hello", "welcome"], mode="all"), convo).passed is True
    assert run_check(item(type="first_turn", phrases=["hello", "goodbye"], mode="all"), convo).passed is False
    strict = item(type="first_turn", phrases=["hello"], case_sensitive=True)
    assert run_check(strict, convo).passed is False


def test_first_turn_is_a_conversation_check():
    levels = {1: "差", 2: "较差", 3: "一般", 4: "较好", 5: "很好"}

    def rubric(scope):
        return Rubric(id="r", name="r", criterion="c", score_descriptions=levels, scope=scope,
                      items=[{"id": "judge", "type": "judge"}, {"id": "g", **GREETING}])

    errors = [f for f in lint_rubric(rubric("sample"), {}) if f.severity == "error"]
    assert [f.field for f in errors] == ["item 2 (id: g).type"] and "scope: conversation" in errors[0].message
    assert not [f for f in lint_rubric(rubric("conversation"), {}) if f.severity == "error"]
