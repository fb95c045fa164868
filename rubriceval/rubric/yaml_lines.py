"""Load YAML while remembering the line of every key, so errors can say `file:line [field]`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from rubriceval.common.errors import RubricError

Path_ = tuple[Any, ...]


class DuplicateKey(Exception):
    def __init__(self, key: str, line: int, first_line: int):
        self.key, self.line, self.first_line = key, line, first_line


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            # PyYAML keeps the last of two equal keys silently; a duplicated score level would vanish.
            if key in seen:
                raise DuplicateKey(key, key_node.start_mark.line + 1, seen[key])
            seen[key] = key_node.start_mark.line + 1
            # YAML ints as keys (score levels 1–5) are matched both as int and str.
            child = path + (key,)
            lines[child] = key_node.start_mark.line + 1
            try:
                lines[path + (int(key),)] = key_node.start_mark.line + 1
            except (TypeError, ValueError):
                pass
            _walk(value_node, child, lines)
            lines[child] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, path + (index,), lines)


def load_yaml_with_lines(path: str | Path) -> tuple[Any, dict[Path_, int]]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RubricError("not valid UTF-8", file=str(path), hint="re-save the file as UTF-8") from None
    except FileNotFoundError:
        raise RubricError("file not found", file=str(path)) from None
    return yaml_text_with_lines(text, str(path))


def yaml_text_with_lines(text: str, name: str) -> tuple[Any, dict[Path_, int]]:
    """YAML text read as a file would be, its errors naming `name` (e.g. a stored version, store:<id>@v<N>)."""
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RubricError(f"malformed YAML: {problem}", file=name,
                          line=mark.line + 1 if mark else None,
                          hint="check indentation and quote strings containing ':' or '#'") from None
    lines: dict[Path_, int] = {}
    if node is not None:
        try:
            _walk(node, (), lines)
        except DuplicateKey as dup:
            raise RubricError(f"duplicate key '{dup.key}' (first defined on line {dup.first_line})", file=name,
                              line=dup.line, field=None, hint="each key, including score levels, may appear once") from None
    return data, lines


# Lists whose entries an error names by number (from 1, as editors count) and id, not by a 0-based index.
_NAMED_LISTS = {"items": "item", "examples": "example", "checklist": "question"}


def field_label(loc: tuple[Any, ...], data: Any = None) -> str | None:
    """A location as a rubric author reads it: ('items', 1, 'phrases') → 'item 2 (id: foo).phrases'."""
    parts: list[str] = []
    node = data
    for i, part in enumerate(loc):
        parent = loc[i - 1] if i else None
        if isinstance(part, int) and parent in _NAMED_LISTS and parts:
            entry = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            ident = entry.get("id") if isinstance(entry, dict) else None
            parts[-1] = f"{_NAMED_LISTS[parent]} {part + 1}" + (f" (id: {ident})" if ident else "")
        else:
            parts.append(str(part))
        node = node.get(part) if isinstance(node, dict) else (
            node[part] if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node) else None)
    return ".".join(parts) or None


def line_for(lines: dict[Path_, int], loc: tuple[Any, ...]) -> int | None:
    """The line of the deepest known prefix of a pydantic error location."""
    loc = tuple(loc)
    while loc:
        if loc in lines:
            return lines[loc]
        loc = loc[:-1]
    return lines.get(())
