"""No module reaches into another module's private names (issue 38, item 7).

The rule, checked by AST over rubriceval/, ui/ and standard_metrics/ (the installed code) and the repository's
benchmarks/ (tests may poke privates):
- no `from x import _y` (or `import x._y`) from any other module, even one in the same package: a leading underscore
  means "this module only", so a helper another module needs gets a public name (or moves to where it is used);
- no `obj._y` attribute access where `_y` is not defined in the accessing module itself (a `def _y`, an assignment to
  `_y` or `self._y`/`cls._y`): an object's private attribute is its own module's business. `self._y` and `cls._y` are
  always allowed. Dunder names are public by definition.
The rule is about this project's modules: attributes of a module imported from outside it (`os._exit` in a forked
child, `argparse._SubParsersAction`, which has no public name) are not checked, and namedtuple's documented API
(`_fields`, `_asdict`, `_replace`, `_make`) is allowed. A test below plants each kind of violation in a throwaway tree
and shows the scan naming it.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [ROOT / "rubriceval", ROOT / "ui", ROOT / "standard_metrics", ROOT / "benchmarks"]
# Underscore names that are documented public API of the standard library.
DOCUMENTED = {"_fields", "_asdict", "_replace", "_make", "_field_defaults"}
PROJECT = ("rubriceval", "ui", "standard_metrics", "benchmarks")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts[: len(parts) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _own_names(tree: ast.AST) -> set[str]:
    """Private names this module defines itself: functions, classes, assigned names and self./cls. attributes."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    return {name for name in own if _private(name)}


def _outside_modules(tree: ast.AST) -> set[str]:
    """Names bound by `import x` / `import x as y` of modules outside this project (os, argparse, ...)."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in PROJECT:
                    bound.add(alias.asname or alias.name.split(".")[0])
    return bound


def violations(path: Path, root: Path) -> list[str]:
    """Every place in one file that imports or reaches into another module's private name."""
    module = _module_name(path, root)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _own_names(tree)
    outside = _outside_modules(tree)
    shown = path.relative_to(root)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(node, module, path.name == "__init__.py")
            for alias in node.names:
                if _private(alias.name) and source != module:
                    found.append(f"{shown}:{node.lineno}: imports {source}.{alias.name}")
            if any(_private(part) for part in source.split(".")):
                found.append(f"{shown}:{node.lineno}: imports from private module {source}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if any(_private(part) for part in alias.name.split(".")):
                    found.append(f"{shown}:{node.lineno}: imports private module {alias.name}")
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in DOCUMENTED:
            owner = node.value
            if isinstance(owner, ast.Name) and (owner.id in {"self", "cls"} or owner.id in outside):
                continue
            if node.attr in own:
                continue
            found.append(f"{shown}:{node.lineno}: reaches into {ast.unparse(owner)}.{node.attr}")
    return found


def scan(folders: list[Path], root: Path) -> list[str]:
    return [hit for folder in folders for path in sorted(folder.rglob("*.py")) for hit in violations(path, root)]


def test_no_module_uses_another_modules_private_names() -> None:
    found = scan(SCANNED, ROOT)
    assert not found, "private names used across modules (give them a public name):\n" + "\n".join(found)


def test_the_scan_names_each_kind_of_violation(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "store.py").write_text(
        "class Store:\n"
        "    def __init__(self):\n        self._lock = None\n"
        "    def _query(self, sql):\n        return self._rows(sql)\n"
        "    def _rows(self, sql):\n        return []\n"
        "def _helper():\n    return 1\n", encoding="utf-8")
    (package / "user.py").write_text(
        "from pkg.store import Store, _helper\n"
        "from .store import _helper as again\n"
        "import os, collections\n"
        "def use(store: Store):\n"
        "    os._exit  # documented\n"
        "    collections.namedtuple('P', 'a')._fields  # documented\n"
        "    with store._lock:\n"
        "        return store._query('x')\n", encoding="utf-8")
    found = scan([package], tmp_path)
    assert found == ["pkg/user.py:1: imports pkg.store._helper", "pkg/user.py:2: imports pkg.store._helper",
                     "pkg/user.py:7: reaches into store._lock", "pkg/user.py:8: reaches into store._query"]
    # Inside its own module the same names are fine: the store may call its own privates on another instance.
    (package / "store.py").write_text(
        (package / "store.py").read_text(encoding="utf-8") + "def merge(a: Store, b: Store):\n    return a._rows(b._query('y'))\n",
        encoding="utf-8")
    assert scan([package], tmp_path) == found
