"""A `store:` source of a run (`--rubrics store:`, `--scorecards store:ID@N`, evaluate(rubrics="store:")): the
versions the studio saved in the run store (store/studio_versions.py), read for the rubric and scorecard loaders,
which validate each text exactly as a file's. `load_rubrics`/`load_scorecards`/`rubric_sources` here take a file
path or a `store:` source alike: every caller above the store layer loads through them."""
from __future__ import annotations

from contextlib import closing
from pathlib import Path

from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric import loader as rubric_loader
from rubriceval.rubric.schema import Rubric
from rubriceval.rubric.source_names import Kind, SourceText, is_store_source, parse_store_source
from rubriceval.scorecard import loader as scorecard_loader
from rubriceval.scorecard.schema import Scorecard
from rubriceval.store.location import display_location, store_target
from rubriceval.store.runs import RunStore, default_store_path
from rubriceval.store.studio_versions import StoredVersion, StudioVersionStore


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


def stored_texts(path: str | Path, kind: Kind, store: str | Path | None) -> list[SourceText] | None:
    """The texts a `store:` path names (None for a file path: the loaders read files themselves)."""
    if not is_store_source(path):
        return None
    return [SourceText(name=v.source_name, text=v.text) for v in read_store_source(store, kind, str(path))]


def rubric_sources(path: str | Path, store: str | Path | None = None) -> list[rubric_loader.RubricSource]:
    return rubric_loader.rubric_sources(path, stored_texts(path, "rubric", store))


def load_rubrics(path: str | Path, only: list[str] | None = None, store: str | Path | None = None) -> list[Rubric]:
    """Every rubric of a folder, a file or a `store:` source (in the run store `store`; None: the default one)."""
    return rubric_loader.load_rubrics(path, only, stored_texts(path, "rubric", store))


def load_scorecards(path: str | Path, only: list[str] | None = None, store: str | Path | None = None
                    ) -> list[Scorecard]:
    """Every scorecard of a folder, a file or a `store:` source (in the run store `store`)."""
    return scorecard_loader.load_scorecards(path, only, stored_texts(path, "scorecard", store))
