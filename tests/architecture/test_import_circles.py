"""No import circles between the modules of rubriceval/, standard_metrics/ and ui/ (issue 24).

An import inside a function counts: a lazy import that only dodges a circle at load time is still a loop in the
design. `if TYPE_CHECKING:` imports do not count (they never run). `from package import submodule` is an edge to
the submodule only; `from module import name` is an edge to the module. Shared pieces go where both sides can reach
them (docs/architecture.md), not behind a lazy import.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rubriceval", "standard_metrics", "ui")


def module_files(root: Path) -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            # ui/ and standard_metrics/ install as rubriceval.ui and rubriceval.standard_metrics (setup.py)
            modules[name if package == "rubriceval" else f"rubriceval.{name}"] = path
    return modules


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = {f"{target}.{alias.name}" for alias in node.names} & modules.keys()
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(target)
    return {m for m in found if m in modules and m != name}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = module_files(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_between_modules():
    found = circles(import_graph())
    assert not found, "import circles (put the shared piece where both sides can reach it):\n" + "\n".join(
        " ↔ ".join(c) for c in found)


@pytest.mark.parametrize("lazy", [False, True])
def test_a_deliberate_circle_is_found(tmp_path, lazy):
    """The check itself: two modules that import each other (one of them inside a function) are a circle."""
    package = tmp_path / "rubriceval"
    package.mkdir()
    (package / "__init__.py").write_text("")
    inner = "def f():\n    from rubriceval.b import g\n" if lazy else "from rubriceval.b import g\n"
    (package / "a.py").write_text(inner)
    (package / "b.py").write_text("from rubriceval.a import f\n\ndef g():\n    pass\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rubriceval.a import f\n")
    for other in ("standard_metrics", "ui"):
        (tmp_path / other).mkdir()
    assert circles(import_graph(tmp_path)) == [["rubriceval.a", "rubriceval.b"]]


def test_type_checking_imports_and_package_submodule_imports_are_not_edges(tmp_path):
    package = tmp_path / "rubriceval"
    package.mkdir()
    (package / "__init__.py").write_text("from rubriceval import a\n")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rubriceval import b\n")
    (package / "b.py").write_text("from rubriceval import a\n")
    for other in ("standard_metrics", "ui"):
        (tmp_path / other).mkdir()
    graph = import_graph(tmp_path)
    assert graph["rubriceval.b"] == {"rubriceval.a"} and graph["rubriceval.a"] == set()
    assert circles(graph) == []
