"""How a run names rubrics and scorecards that live in the run store instead of files: `store:` (every id's newest
version), `store:ID`, `store:ID@N`. The spec layer knows the syntax; the store layer (store/stored_sources.py) reads
the texts and hands them to the same loaders a file goes through."""
from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError

Kind = Literal["rubric", "scorecard"]
STORE_SOURCE = "store:"
_SOURCE = re.compile(r"store:(?P<id>[A-Za-z0-9_\-]+)?(?:@v?(?P<version>\d+))?")


class StoreSource(BaseModel):
    """What a `store:` source names: every id's newest version (`store:`), one id's (`store:ID`) or one version
    (`store:ID@N`, or `@vN` as errors write it)."""

    item_id: str | None = None
    version: int | None = None


class SourceText(BaseModel):
    """One rubric or scorecard text read from somewhere other than a file, under the name its errors use."""

    name: str
    text: str


def is_store_source(source: object) -> bool:
    return isinstance(source, str) and source.startswith(STORE_SOURCE)


def parse_store_source(source: str, kind: Kind) -> StoreSource:
    found = _SOURCE.fullmatch(source.strip())
    if found is None or (found["version"] and not found["id"]):
        raise RubricEvalError(f"'{source}' does not name stored {kind}s", file=source,
                              hint=f"store: (every {kind} the studio saved), store:ID or store:ID@N")
    return StoreSource(item_id=found["id"], version=int(found["version"]) if found["version"] else None)


def store_source_unread(source: str, kind: Kind) -> RubricEvalError:
    """A `store:` source handed to a file loader: the caller must read it through the run store first."""
    return RubricEvalError(f"'{source}' names {kind}s in the run store; they are read through it", file=source,
                           hint=f"load it with rubriceval.store.stored_sources.load_{kind}s(path, store=…)")
