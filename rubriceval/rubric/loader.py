"""Turn rubric YAML files into validated Rubric objects, or errors that name file, line and field."""
from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from rubriceval.common.errors import RubricError
from rubriceval.rubric.schema import Rubric
from rubriceval.rubric.yaml_lines import field_label, line_for, load_yaml_with_lines

_HINTS = {
    "extra_forbidden": "unknown field; see `rubriceval schema` for the allowed fields",
    "missing": "this field is required",
    "union_tag_invalid": "type must be one of: judge, checklist, must_mention, must_not_mention, regex, "
                         "required_link, steps_in_order, max_length; in conversation rubrics also before, max_count, "
                         "escalate_after, final_turn, first_turn",
}


def _pretty_loc(loc: tuple) -> tuple:
    """Drop pydantic's union-member names (e.g. 'must_mention') from item locations."""
    out = []
    for i, part in enumerate(loc):
        if i >= 2 and loc[i - 2] == "items" and isinstance(part, str) and isinstance(loc[i - 1], int):
            continue
        out.append(part)
    return tuple(out)


def load_rubric(path: str | Path) -> Rubric:
    path = Path(path)
    data, lines = load_yaml_with_lines(path)
    if not isinstance(data, dict):
        raise RubricError("a rubric file must be a YAML mapping (id:, name:, criterion: …)", file=str(path), line=1)
    _reject_duplicate_item_ids(data, lines, path)
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = _pretty_loc(tuple(err["loc"]))
        field = field_label(loc, data)
        msg = err["msg"].removeprefix("Value error, ")
        raise RubricError(msg, file=str(path), line=line_for(lines, loc), field=field,
                          hint=_HINTS.get(err["type"])) from None
    rubric.source_file = str(path)
    return rubric


def _reject_duplicate_item_ids(data: dict, lines: dict, path: Path) -> None:
    """A repeated item id, at the line of its second use (the schema alone can only blame the whole file)."""
    items = data.get("items")
    if not isinstance(items, list):
        return
    first: dict[str, int] = {}
    for index, entry in enumerate(items):
        ident = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(ident, str):
            continue
        if ident in first:
            raise RubricError(f"duplicate item id '{ident}' (item {first[ident] + 1} on line "
                              f"{line_for(lines, ('items', first[ident], 'id'))} has it too)", file=str(path),
                              line=line_for(lines, ("items", index, "id")), field=field_label(("items", index, "id"), data),
                              hint="each item needs its own id")
        first[ident] = index


def rubric_files(path: str | Path) -> list[Path]:
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.exists():
        raise RubricError("rubric path not found", file=str(path))
    files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
    if not files:
        raise RubricError("no rubric files (*.yaml) found", file=str(path))
    return files


def load_rubrics(path: str | Path, only: list[str] | None = None) -> list[Rubric]:
    """Load every rubric under a directory (or one file); ids must be unique."""
    rubrics: list[Rubric] = []
    seen: dict[str, str] = {}
    for file in rubric_files(path):
        rubric = load_rubric(file)
        if rubric.id in seen:
            raise RubricError(f"rubric id '{rubric.id}' is also used by {seen[rubric.id]}", file=str(file), field="id")
        seen[rubric.id] = str(file)
        if only is None or rubric.id in only:
            rubrics.append(rubric)
    if only:
        unknown = set(only) - {r.id for r in rubrics}
        if unknown:
            raise RubricError(f"unknown rubric id(s): {sorted(unknown)}", file=str(path),
                              hint=f"available: {sorted(seen)}")
    return rubrics
