"""Scorecard YAML files → validated Scorecard objects, or errors naming file, line and field (the rubric loader's
line map and labels: rubriceval/rubric/yaml_lines.py). A card's knowledge file (`knowledge:`, or `run --knowledge`)
is read here once, through the rubrics' reader (rubriceval/data/knowledge.py), and kept with the card as its
passages, so the run store holds the policies a run was scored against."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rubriceval.common.errors import RubricError, RubricEvalError
from rubriceval.data.knowledge import load_knowledge
from rubriceval.rubric.source_names import SourceText, is_store_source, store_source_unread
from rubriceval.rubric.yaml_lines import field_label, line_for, load_yaml_with_lines, yaml_text_with_lines
from rubriceval.scorecard.schema import Scorecard

_HINTS = {
    "extra_forbidden": "unknown field; a scorecard has id, name, base, dimensions, items (see docs/scorecards.md)",
    "missing": "this field is required",
    "int_type": "points are whole numbers: -3 for a deduction, 2 for a bonus",
    "int_from_float": "points are whole numbers: -3 for a deduction, 2 for a bonus",
}


class ScorecardError(RubricError):
    """A scorecard file (or sheet) is invalid."""


def _located(data: Any, lines: dict, path: Path, loc: tuple, message: str, hint: str | None = None) -> ScorecardError:
    return ScorecardError(message, file=str(path), line=line_for(lines, loc), field=field_label(loc, data), hint=hint)


def _precheck(data: dict, lines: dict, path: Path) -> None:
    """Errors the schema could only blame on the whole file, at the line of the field: repeated item ids and
    dimensions, and an item naming a dimension the scorecard does not list."""
    raw_dims, raw_items = data.get("dimensions"), data.get("items")
    dims = raw_dims if isinstance(raw_dims, list) else []
    known = [d.get("id") for d in dims if isinstance(d, dict)]
    items = raw_items if isinstance(raw_items, list) else []
    first: dict[str, int] = {}
    for index, entry in enumerate(items):
        if not isinstance(entry, dict):
            continue
        ident = entry.get("id")
        if isinstance(ident, str) and ident in first:
            raise _located(data, lines, path, ("items", index, "id"), f"duplicate item id '{ident}' (item "
                           f"{first[ident] + 1} has it too)", "each item needs its own id")
        if isinstance(ident, str):
            first[ident] = index
        dim = entry.get("dimension")
        if isinstance(dim, str) and known and dim not in known:
            raise _located(data, lines, path, ("items", index, "dimension"), f"unknown dimension '{dim}'",
                           f"dimensions of this scorecard: {', '.join(map(str, known))}")


def _read_knowledge(card: Scorecard, data: dict, lines: dict, path: Path) -> None:
    """Fill `card.knowledge_passages` from its knowledge file, or raise at the card's `knowledge:` line naming the
    knowledge file (and its line: a bad JSONL row)."""
    if "knowledge_passages" in data:          # the loader's copy of the file: written in YAML it would bypass it
        raise _located(data, lines, path, ("knowledge_passages",), "knowledge_passages is read from the knowledge "
                       "file, not written", "name the file with knowledge: policies.md")
    if not card.knowledge:
        return
    try:
        knowledge = load_knowledge(card.knowledge, relative_to=path)
    except RubricEvalError as exc:
        where = (exc.file or card.knowledge) + (f":{exc.line}" if exc.line else "")
        where += f" [{exc.field}]" if exc.field and exc.field != "knowledge" else ""
        message = exc.message if "knowledge" in exc.message else f"knowledge file: {exc.message}"
        raise _located(data, lines, path, ("knowledge",), f"{where}: {message}",
                       "a relative path is read beside the scorecard file") from None
    card.knowledge_passages = knowledge.passages


def with_run_knowledge(cards: list[Scorecard], path: str | Path | None) -> list[Scorecard]:
    """The run's knowledge file (`run --knowledge FILE`) for every card that names none, as rubrics get it."""
    if not path:
        return cards
    knowledge = load_knowledge(path)             # a missing or bad file fails here, naming it
    where = str(Path(path).resolve())
    return [c if c.knowledge else c.model_copy(update={"knowledge": where, "knowledge_passages": knowledge.passages})
            for c in cards]


def scorecard_from_data(data: Any, path: Path, lines: dict) -> Scorecard:
    if not isinstance(data, dict):
        raise ScorecardError("a scorecard file must be a YAML mapping (id:, name:, dimensions:, items: …)",
                             file=str(path), line=1)
    _precheck(data, lines, path)
    try:
        card = Scorecard.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        raise _located(data, lines, path, loc, err["msg"].removeprefix("Value error, "),
                       _HINTS.get(err["type"])) from None
    card.source_file = str(path)
    _read_knowledge(card, data, lines, path)
    return card


def load_scorecard(path: str | Path) -> Scorecard:
    path = Path(path)
    data, lines = load_yaml_with_lines(path)
    return scorecard_from_data(data, path, lines)


def load_scorecards(path: str | Path, only: list[str] | None = None,
                    stored: list[SourceText] | None = None) -> list[Scorecard]:
    """Every scorecard under a directory (or one file); ids must be unique. A `store:` source (store:, store:ID,
    store:ID@N) takes the texts its caller read from the run store (`stored`), each validated as a file is."""
    if is_store_source(path):
        if stored is None:
            raise store_source_unread(str(path), "scorecard")
        cards: list[Scorecard] = []
        for version in stored:
            data, lines = yaml_text_with_lines(version.text, version.name)
            cards.append(scorecard_from_data(data, Path(version.name), lines))
        return [card for card in cards if only is None or card.id in only]
    path = Path(path)
    if not path.exists():
        raise ScorecardError("scorecard path not found", file=str(path))
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
    if not files:
        raise ScorecardError("no scorecard files (*.yaml) found", file=str(path))
    cards = []
    seen: dict[str, str] = {}
    for file in files:
        card = load_scorecard(file)
        if card.id in seen:
            raise ScorecardError(f"scorecard id '{card.id}' is also used by {seen[card.id]}", file=str(file),
                                 field="id")
        seen[card.id] = str(file)
        if only is None or card.id in only:
            cards.append(card)
    return cards
