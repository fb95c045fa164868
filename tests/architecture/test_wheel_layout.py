"""One import name from a source tree too (issue 38): ui/ and standard_metrics/ import as rubriceval.ui and
rubriceval.standard_metrics — the names the wheel installs them under (tests/architecture/test_wheel.py builds it) — and nothing
imports them, the old bench/ or rubriceval.benchmarks by their former top-level names (a second copy of each module
from a source tree, and an ImportError from a wheel)."""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import rubriceval

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("rubriceval", "ui", "standard_metrics", "benchmarks", "tests")
FORMER = {"ui", "standard_metrics", "bench"}                       # top-level import names no longer installed
MODULE_STRING = re.compile(r"(ui|standard_metrics|bench|rubriceval\.benchmarks)(\.[A-Za-z_]\w*)+")
FILE_SUFFIXES = {"json", "jsonl", "yaml", "yml", "csv", "html", "md", "py", "txt", "xlsx", "sqlite", "j2"}  # bench.json


def former_names(path: Path) -> list[str]:
    """Imports (anywhere in the module) and module-path strings (lazy exports, sys.modules keys) by a former name."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:                  # a file being edited; test_import_circles names it
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_STRING.fullmatch(node.value)
              and node.value.rpartition(".")[2] not in FILE_SUFFIXES):
            names = [node.value]
        else:
            continue
        found += [f"{path.relative_to(ROOT)}:{node.lineno}: {name}" for name in names
                  if name.split(".")[0] in FORMER or name.startswith("rubriceval.benchmarks")]
    return found


def test_nothing_imports_the_former_top_level_names():
    found = [hit for folder in SCANNED for path in sorted((ROOT / folder).rglob("*.py")) for hit in former_names(path)]
    assert not found, "import these as rubriceval.ui / rubriceval.standard_metrics / benchmarks.*:\n" + "\n".join(found)


def test_the_check_finds_a_former_name(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from ui.audit import app\n_HOME = {'x': 'standard_metrics.registry'}\n"
                      "import rubriceval.standard_metrics.registry\n", encoding="utf-8")
    global ROOT
    kept, ROOT = ROOT, tmp_path
    try:
        assert former_names(module) == ["m.py:2: ui.audit", "m.py:3: standard_metrics.registry"]
    finally:
        ROOT = kept


def test_setup_mounts_the_folders_the_package_finds_from_source():
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    (mounted,) = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                  and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["MOUNTED_FOLDERS"]]
    assert mounted == rubriceval.MOUNTED_FOLDERS == ("ui", "standard_metrics")


def _where(cwd: Path, pythonpath: Path | None) -> list[str]:
    code = ("import sys, rubriceval, rubriceval.ui, rubriceval.standard_metrics.registry\n"
            "print(rubriceval.__file__); print(rubriceval.ui.__file__)\n"
            "print(rubriceval.standard_metrics.registry.__file__)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ui', 'standard_metrics')))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_source_tree_loads_its_own_folders_as_rubriceval_subpackages(tmp_path: Path):
    """From the checkout, and from a second copy first on PYTHONPATH (.ci/run's bare clone, whose editable install
    points at the first): each loads its own ui/ and standard_metrics/, never by their top-level names."""
    *files, top_level = _where(ROOT, ROOT)
    assert [Path(f).relative_to(ROOT).as_posix() for f in files] == [
        "rubriceval/__init__.py", "ui/__init__.py", "standard_metrics/registry.py"]
    assert top_level == "[]"

    clone = tmp_path / "clone"
    for folder in ("rubriceval", *rubriceval.MOUNTED_FOLDERS):
        shutil.copytree(ROOT / folder, clone / folder, ignore=shutil.ignore_patterns("__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    *files, top_level = _where(elsewhere, clone)
    assert [Path(f).relative_to(clone).as_posix() for f in files] == [
        "rubriceval/__init__.py", "ui/__init__.py", "standard_metrics/registry.py"]
    assert top_level == "[]"
