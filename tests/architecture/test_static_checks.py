"""The lint and the type check run in make test (issue 38, item 7): ruff and mypy as configured in pyproject.toml,
and the public names typed for editors and type checkers although `rubriceval/__init__.py` imports them lazily."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rubriceval

REPO = Path(__file__).resolve().parents[2]

# Packages whose mypy findings are not fixed yet, each named so the list can only shrink: an entry with no finding
# left fails the test (take it out). Empty since issue 38.7's last packages (report, run, studio, trust) were typed:
# every package and the package root type-check clean (`mypy` alone: pyproject.toml's [tool.mypy]).
NOT_YET_TYPED: frozenset[str] = frozenset()


def _run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=1200)


def _mypy_findings(output: str) -> list[str]:
    return [line for line in output.splitlines() if re.match(r"^[^:\s]+\.py:\d+: error:", line)]


def test_ruff_finds_nothing() -> None:
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_ruff_config_catches_a_planted_finding(tmp_path: Path) -> None:
    # The same configuration on an unused import and an unsorted import block: both reported, so the clean run above
    # is the rules at work, not an empty rule set.
    planted = tmp_path / "planted.py"
    planted.write_text("import sys\nimport os\n\nprint(os.sep)\n", encoding="utf-8")
    done = _run("ruff", "check", "--no-cache", "--config", str(REPO / "pyproject.toml"), "--output-format", "concise",
                str(planted))
    assert done.returncode == 1
    assert "F401" in done.stdout and "I001" in done.stdout


def test_mypy_finds_nothing() -> None:
    done = _run("mypy")
    findings = _mypy_findings(done.stdout)
    assert findings or done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    def package(line: str) -> str:
        parts = line.split(":", 1)[0].split("/")
        return parts[1] if parts[0] == "rubriceval" and len(parts) > 2 else parts[0]

    outside = [line for line in findings if package(line) not in NOT_YET_TYPED]
    assert not outside, "\n".join(outside[:80])
    cleaned = NOT_YET_TYPED - {package(line) for line in findings}
    assert not cleaned, f"no mypy finding left in {sorted(cleaned)}: take them out of NOT_YET_TYPED"


def _type_checking_imports() -> dict[str, str]:
    """public name → module, as the `if TYPE_CHECKING:` block of rubriceval/__init__.py imports it."""
    tree = ast.parse((REPO / "rubriceval" / "__init__.py").read_text(encoding="utf-8"))
    blocks = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    assert len(blocks) == 1
    names: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: `name as name` marks the re-export"
            names[alias.name] = node.module
    return names


def test_type_checking_imports_equal_the_lazy_exports() -> None:
    assert _type_checking_imports() == rubriceval._EXPORTS


def test_public_names_are_not_any_to_a_type_checker(tmp_path: Path) -> None:
    names = sorted(rubriceval._EXPORTS)
    snippet = tmp_path / "uses_public_api.py"
    snippet.write_text(f"from rubriceval import {', '.join(names)}\n\n"
                       + "".join(f"reveal_type({name})\n" for name in names), encoding="utf-8")
    # silent: the package's own findings are test_mypy_finds_nothing's business; here only the snippet's lines count
    done = _run("mypy", "--follow-imports=silent", "--no-error-summary", str(snippet))
    revealed = re.findall(r"uses_public_api\.py:(\d+): note: Revealed type is \"(.*)\"", done.stdout)
    assert len(revealed) == len(names), done.stdout[-3000:] + done.stderr[-2000:]
    by_name = {names[int(line) - 3]: shown for line, shown in revealed}
    assert by_name["evaluate"].startswith("def ") and "EvaluationResult" in by_name["evaluate"]
    assert "rubriceval.rubric.schema.Rubric" in by_name["Rubric"]
    untyped = {name: shown for name, shown in by_name.items() if shown == "Any"}
    assert not untyped
    assert "error:" not in done.stdout, done.stdout[-3000:]


@pytest.mark.parametrize("name", ["evaluate", "Rubric"])
def test_lazy_export_still_lazy(name: str) -> None:
    # the TYPE_CHECKING block never runs: importing the package still loads none of pandas, openai or numpy
    code = ("import sys, rubriceval; heavy = [m for m in ('pandas', 'openai', 'numpy') if m in sys.modules]; "
            f"assert not heavy, heavy; rubriceval.{name}")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
