"""collect --target path/to/bot.py:function imports the file's sibling modules (issue 32.6): the file's folder goes
on sys.path as `python path/to/bot.py` would put it; a failing import says so without a mangled path."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rubriceval.collect.targets import coerce_reply, load_callable
from rubriceval.common.errors import ConfigError


@pytest.fixture
def mybot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "kb_issue32.py").write_text('PASSAGES = ["退款 3-5 个工作日到账"]\n', encoding="utf-8")
    (folder / "bot.py").write_text(
        "import kb_issue32\n\n"
        "def answer_v1(question):\n"
        "    return {'answer': '3-5 个工作日', 'contexts': kb_issue32.PASSAGES}\n", encoding="utf-8")
    (folder / "broken.py").write_text("import not_installed_anywhere_32\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)                         # not the bot's folder
    monkeypatch.setattr(sys, "path", list(sys.path))     # undo the insert after the test
    yield folder
    sys.modules.pop("kb_issue32", None)


def test_a_target_file_imports_its_sibling_module(mybot: Path):
    answer = load_callable(f"{mybot}/bot.py:answer_v1")
    reply = coerce_reply(answer("退款多久到账？"))
    assert reply.answer == "3-5 个工作日" and reply.contexts == ["退款 3-5 个工作日到账"]
    relative = load_callable("../mybot/bot.py:answer_v1")          # relative to the current folder
    assert relative("x")["answer"] == "3-5 个工作日"


def test_a_failing_import_in_the_file_names_the_file_not_a_mangled_path(mybot: Path):
    with pytest.raises(ConfigError) as caught:
        load_callable(f"{mybot}/broken.py:answer")
    text = caught.value.format()
    assert "broken.py" in text and "not_installed_anywhere_32" in text and "py.py" not in text
    assert str(mybot) in text                                         # says which folder is on sys.path


def test_a_module_target_hint_names_the_file_form(mybot: Path):
    with pytest.raises(ConfigError) as caught:
        load_callable("no_such_pkg_32.bot:answer")
    assert "no_such_pkg_32/bot.py:answer" in caught.value.format() and "path/to/" not in caught.value.format()


def test_collect_keeps_the_metadata_the_target_returns(mybot: Path, tmp_path: Path):
    import asyncio
    import json

    from rubriceval.collect.collector import collect

    (mybot / "meta.py").write_text(
        "import kb_issue32\n\n"
        "def answer(question):\n"
        "    return {'answer': 'ok', 'contexts': kb_issue32.PASSAGES, 'metadata': {'bot_version': 'v1'}}\n",
        encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "q1", "question": "退款多久到账？"}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    asyncio.run(collect(questions, f"{mybot}/meta.py:answer", out, progress=False))
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert row["answer"] == "ok" and row["contexts"] == ["退款 3-5 个工作日到账"]
    assert row["metadata"]["bot_version"] == "v1" and row["metadata"]["error"] is None
