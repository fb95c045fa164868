"""A `store:` source of a run (`--rubrics store:`, `--scorecards store:ID@N`, evaluate(rubrics="store:")): the
versions the studio saved in the run store (store/studio_versions.py), read for the rubric and scorecard loaders,
which validate each text exactly as a file's."""
from __future__ import annotations

from contextlib import closing
from pathlib import Path

from rubriceval.common.errors import RubricEvalError
from rubriceval.store.location import display_location, store_target
from rubriceval.store.runs import RunStore, default_store_path
from rubriceval.store.studio_versions import Kind, StoredVersion, StudioVersionStore, parse_store_source


def read_store_source(store: str | Path | None, kind: Kind, source: str) -> list[StoredVersion]:
    """The stored versions `source` names, from the run store `store` (None: the default store). A SQLite store
    that does not exist is refused rather than created empty."""
    wanted = parse_store_source(source, kind)
    target = store_target(store) if store else default_store_path()
    if isinstance(target, Path) and not target.is_file():
        raise RubricEvalError(f"no run store at {display_location(target)} to read {source} from", file=source,
                              hint="name the store the studio saved to with --store (a SQLite file or a URL)")
    with closing(RunStore(target)) as runs:
        return StudioVersionStore(runs.conn, runs.location).select(kind, wanted)
