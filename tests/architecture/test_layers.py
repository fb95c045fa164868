"""The package layers hold (issue 38): import-linter's layers contract (.importlinter) over rubriceval's packages,
imports inside functions included; the same layer list applied to the design card's top-level folders ui/ and
standard_metrics/ (installed as rubriceval.ui and rubriceval.standard_metrics), which grimp cannot see beside the
package; and no circle between packages at all (the knot of 19 packages this replaced)."""
from __future__ import annotations

import ast
import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".importlinter"
MOUNTED = {"ui": ROOT / "ui", "standard_metrics": ROOT / "standard_metrics"}
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def layer_rows() -> list[list[str]]:
    """The contract's layers, top first, each a list of sibling package names (optional ones unwrapped)."""
    parser = configparser.ConfigParser()
    parser.read(CONFIG, encoding="utf-8")
    rows = [line.strip() for line in parser["importlinter:contract:layers"]["layers"].splitlines() if line.strip()]
    return [[name.strip().strip("()") for name in row.replace(":", "|").split("|")] for row in rows]


def layer_of() -> dict[str, int]:
    rows = layer_rows()
    return {name: len(rows) - index for index, row in enumerate(rows) for name in row}    # higher number: higher


def package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "rubriceval" and len(parts) > 1 else None


def imports(path: Path, module: str) -> list[tuple[str, int]]:
    """Every rubriceval module this file imports, anywhere in it (inside functions too), but `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
               for stmt in node.body for inner in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if path.name == "__init__.py" else 0)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((name, node.lineno))
    return [(name, line) for name, line in found if name.startswith("rubriceval.")]


def all_modules() -> dict[str, Path]:
    modules = {}
    for path in (ROOT / "rubriceval").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for name, folder in MOUNTED.items():
        for path in folder.rglob("*.py"):
            parts = ("rubriceval", name, *path.relative_to(folder).with_suffix("").parts)
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def package_edges() -> dict[str, dict[str, list[str]]]:
    """package → imported package → the places (file:line) that import it."""
    edges: dict[str, dict[str, list[str]]] = {}
    for module, path in all_modules().items():
        source = package_of(module)
        for name, line in imports(path, module):
            target = package_of(name)
            if source and target and target != source:
                edges.setdefault(source, {}).setdefault(target, []).append(f"{_shown(path)}:{line}")
    return edges


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is installed by make test (the test extra)")
def test_the_import_linter_layers_contract_is_kept():
    done = subprocess.run([str(LINT_IMPORTS), "--config", str(CONFIG), "--no-cache"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 kept, 0 broken" in done.stdout


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is installed by make test (the test extra)")
def test_a_deliberate_upward_import_inside_a_function_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "rubriceval", tmp_path / "rubriceval", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(CONFIG, tmp_path / ".importlinter")
    ask = tmp_path / "rubriceval" / "judge" / "ask.py"
    ask.write_text(ask.read_text(encoding="utf-8") + "\n\ndef _upward():\n    from rubriceval.report import html\n"
                   "    return html\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode != 0
    assert "rubriceval.judge is not allowed to import rubriceval.report" in done.stdout
    assert "rubriceval.judge.ask -> rubriceval.report.html" in done.stdout


def test_every_package_has_a_layer_and_imports_only_below_it():
    """What import-linter checks, here for every package including the mounted folders ui/ and standard_metrics/."""
    layers = layer_of()
    packages = {package_of(m) for m in all_modules()} - {None}
    assert not packages - set(layers), f"packages without a layer in .importlinter: {sorted(packages - set(layers))}"
    upward = [f"{source} → {target} ({places[0]})" for source, targets in package_edges().items()
              for target, places in targets.items() if layers[target] >= layers[source]]
    assert not upward, "imports that reach up or sideways:\n" + "\n".join(sorted(upward))


def test_no_circle_between_packages():
    edges = {source: set(targets) for source, targets in package_edges().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    knots: list[list[str]] = []

    def visit(node: str) -> None:      # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in edges.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                knots.append(sorted(component))

    for node in list(edges):
        if node not in index:
            visit(node)
    assert not knots, f"packages importing each other: {knots}"


def test_the_layer_check_catches_an_upward_import_in_a_mounted_folder(tmp_path, monkeypatch):
    """The hand-written half fails too: a standard_metrics module importing the run layer is named."""
    fake = tmp_path / "standard_metrics"
    fake.mkdir()
    (fake / "__init__.py").write_text("", encoding="utf-8")
    (fake / "leak.py").write_text("def f():\n    from rubriceval.run.evaluate import evaluate\n    return evaluate\n",
                                  encoding="utf-8")
    monkeypatch.setitem(MOUNTED, "standard_metrics", fake)
    with pytest.raises(AssertionError, match=r"standard_metrics → run"):
        test_every_package_has_a_layer_and_imports_only_below_it()
