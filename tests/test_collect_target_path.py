"""The README's collect example works from any folder with the file form of a callable target (path/to/file.py:
function), and the module form outside its folder says to use the file form."""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOT = REPO / "examples" / "rag_target" / "bot.py"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # Extractive mode; and no PYTHONPATH, as in a user's shell (the bare-clone CI run sets it to the clone's root,
    # which would make `examples` importable from anywhere).
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUBRICEVAL_TARGET_") and k != "PYTHONPATH"}
    command = Path(sys.executable).with_name("rubriceval")      # the installed command, as a user runs it
    return subprocess.run([str(command), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def questions(folder: Path) -> Path:
    path = folder / "questions.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"q{i}", "question": q}, ensure_ascii=False) for i, q in
                              enumerate(["发票怎么开？", "订单延迟了可以退款吗？"])) + "\n", encoding="utf-8")
    return path


def test_file_form_target_collects_from_a_folder_outside_the_repository(tmp_path):
    done = cli(tmp_path, "collect", str(questions(tmp_path)), "--target", f"{BOT}:answer", "--out", "out.jsonl",
               "--quiet")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["q0", "q1"] and all(r["answer"] and r["contexts"] for r in rows)


def test_relative_file_form_from_the_repository_root(tmp_path):
    done = cli(REPO, "collect", str(questions(tmp_path)), "--target", "examples/rag_target/bot.py:answer_extractive",
               "--out", str(tmp_path / "out.jsonl"), "--quiet")
    assert done.returncode == 0, done.stderr


def test_module_form_outside_its_folder_points_to_the_file_form(tmp_path):
    done = cli(tmp_path, "collect", str(questions(tmp_path)), "--target", "examples.rag_target.bot:answer",
               "--out", "out.jsonl", "--quiet")
    assert done.returncode == 2
    assert "cannot import 'examples.rag_target.bot'" in done.stderr
    assert "path/to/examples/rag_target/bot.py:answer" in done.stderr
