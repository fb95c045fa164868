"""Turn rubric YAML files into validated Rubric objects, or errors that name file, line and field. Texts read from
elsewhere (a `store:` source: the versions the studio saved in the run store, read by store/stored_sources.py, the
layer above) are handed in as `stored` and validated by the same code, their errors naming the version
(store:<id>@v<N>)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rubriceval.common.errors import RubricError
from rubriceval.rubric.check_kinds import kind_names
from rubriceval.rubric.schema import Rubric
from rubriceval.rubric.source_names import SourceText, is_store_source, store_source_unread
from rubriceval.rubric.yaml_lines import field_label, line_for, load_yaml_with_lines, yaml_text_with_lines

_HINTS = {
    "extra_forbidden": "unknown field; see `rubriceval schema` for the allowed fields",
    "missing": "this field is required",
    # The kinds from the check-kind registry (rubric/check_kinds.py), so a new kind is named here by itself.
    "union_tag_invalid": (f"type must be one of: {', '.join(('judge', 'checklist', *kind_names('answer')))}; in "
                          f"conversation rubrics also {', '.join(kind_names('conversation'))}"),
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
    data, lines = load_yaml_with_lines(path)
    return _rubric_from(data, lines, str(Path(path)))


def _rubric_from(data: Any, lines: dict, name: str) -> Rubric:
    if not isinstance(data, dict):
        raise RubricError("a rubric file must be a YAML mapping (id:, name:, criterion: …)", file=name, line=1)
    _reject_duplicate_item_ids(data, lines, name)
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = _pretty_loc(tuple(err["loc"]))
        field = field_label(loc, data)
        msg = err["msg"].removeprefix("Value error, ")
        raise RubricError(msg, file=name, line=line_for(lines, loc), field=field,
                          hint=_HINTS.get(err["type"])) from None
    rubric.source_file = name
    return rubric


class RubricSource(BaseModel):
    """One rubric to load: a file (text None), or a version stored in the run store (its name and text)."""

    name: str
    text: str | None = None

    def yaml(self) -> tuple[Any, dict]:
        return load_yaml_with_lines(self.name) if self.text is None else yaml_text_with_lines(self.text, self.name)

    def load(self) -> Rubric:
        return _rubric_from(*self.yaml(), self.name)


def rubric_sources(path: str | Path, stored: list[SourceText] | None = None) -> list[RubricSource]:
    """The rubric files under `path`, or the texts a `store:` path names, read by the caller (`stored`)."""
    if is_store_source(path):
        if stored is None:
            raise store_source_unread(str(path), "rubric")
        return [RubricSource(name=text.name, text=text.text) for text in stored]
    return [RubricSource(name=str(file)) for file in rubric_files(path)]


def _reject_duplicate_item_ids(data: dict, lines: dict, name: str) -> None:
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
                              f"{line_for(lines, ('items', first[ident], 'id'))} has it too)", file=name,
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


def load_rubrics(path: str | Path, only: list[str] | None = None, stored: list[SourceText] | None = None
                 ) -> list[Rubric]:
    """Load every rubric under a directory (or one file, or a `store:` source's texts: see rubric_sources); ids must
    be unique."""
    rubrics: list[Rubric] = []
    seen: dict[str, str] = {}
    for source in rubric_sources(path, stored):
        rubric = source.load()
        if rubric.id in seen:
            raise RubricError(f"rubric id '{rubric.id}' is also used by {seen[rubric.id]}", file=source.name,
                              field="id")
        seen[rubric.id] = source.name
        if only is None or rubric.id in only:
            rubrics.append(rubric)
    if only:
        unknown = set(only) - {r.id for r in rubrics}
        if unknown:
            raise RubricError(f"unknown rubric id(s): {sorted(unknown)}", file=str(path),
                              hint=f"available: {sorted(seen)}")
    return rubrics
