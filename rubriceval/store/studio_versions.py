"""The studio's version history in the run store, for a server setup with no writable rubrics folder: every saved
version of a rubric or scorecard is a row of an append-only table (the database refuses UPDATE and DELETE), the
newest one is the current text. Declared in store/schema.py (migration step 4); SQLite and PostgreSQL alike.

Two saves made from the same version race for the same (kind, id, version) key: the second one breaks the
uniqueness constraint and is refused as stale, so a concurrent save never overwrites another lead's.

Runs read them through a `store:` source (`--rubrics store:`, `--scorecards store:ID@N`; parsed here, opened by
store/stored_sources.py): each version is named `store:<id>@v<N>` in what its loader says.
"""
from __future__ import annotations

import time

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric.source_names import STORE_SOURCE, Kind, StoreSource
from rubriceval.store.db import Database, IntegrityError


class StoredVersion(BaseModel):
    kind: Kind
    item_id: str
    version: int
    text: str
    version_tag: str
    saved_by: str
    saved_at: float

    @property
    def source_name(self) -> str:
        """How errors and rubrics' source_file name this version: store:<id>@v<N>."""
        return f"{STORE_SOURCE}{self.item_id}@v{self.version}"


class StudioVersionStore:
    """The versions table on an open store connection (a RunStore's `conn`: the store is upgraded when opened)."""

    def __init__(self, db: Database, location: str = ""):
        self.db, self.location = db, location or db.location

    def ids(self, kind: Kind) -> list[str]:
        rows = self.db.execute("SELECT DISTINCT item_id FROM studio_versions WHERE kind = ?", (kind,)).fetchall()
        return sorted(r[0] for r in rows)

    def versions(self, kind: Kind, item_id: str) -> list[int]:
        rows = self.db.execute("SELECT version FROM studio_versions WHERE kind = ? AND item_id = ? ORDER BY version",
                               (kind, item_id)).fetchall()
        return [int(r[0]) for r in rows]

    def get(self, kind: Kind, item_id: str, version: int | None = None) -> StoredVersion | None:
        """One saved version (None: the newest), or None when there is none."""
        sql = ("SELECT kind, item_id, version, text, version_tag, saved_by, saved_at FROM studio_versions "
               "WHERE kind = ? AND item_id = ?")
        params: tuple = (kind, item_id)
        if version is not None:
            sql, params = sql + " AND version = ?", (*params, version)
        row = self.db.execute(sql + " ORDER BY version DESC LIMIT 1", params).fetchone()
        if row is None:
            return None
        return StoredVersion(kind=row[0], item_id=row[1], version=int(row[2]), text=row[3], version_tag=row[4],
                             saved_by=row[5], saved_at=float(row[6]))

    def select(self, kind: Kind, source: StoreSource) -> list[StoredVersion]:
        """The versions a `store:` source names (sorted by id); an id or version not stored is refused, naming
        what is."""
        ids = self.ids(kind)
        if source.item_id is None:
            if not ids:
                raise RubricEvalError(f"no {kind} versions saved in this run store", file=self.location,
                                      hint="save one in `rubriceval studio --versions-in store --store …`")
            return [found for item_id in ids if (found := self.get(kind, item_id)) is not None]
        name = f"{STORE_SOURCE}{source.item_id}" + (f"@v{source.version}" if source.version else "")
        if source.item_id not in ids:
            raise RubricEvalError(f"no stored {kind} '{source.item_id}' in {self.location}", file=name, field="id",
                                  hint=f"stored {kind}s: {', '.join(ids) or 'none'}")
        found = self.get(kind, source.item_id, source.version)
        if found is None:
            raise RubricEvalError(f"{kind} {source.item_id} has no stored version {source.version}", file=name,
                                  field="version", hint=f"stored versions: {self.versions(kind, source.item_id)}")
        return [found]

    def append(self, kind: Kind, item_id: str, version: int, text: str, version_tag: str, saved_by: str) -> None:
        """Add a version; refused (nothing written) when that version number was saved meanwhile."""
        try:
            with self.db:
                self.db.execute("INSERT INTO studio_versions (kind, item_id, version, text, version_tag, saved_by, "
                                "saved_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (kind, item_id, version, text, version_tag, saved_by, time.time()))
        except IntegrityError:
            raise RubricEvalError(f"{kind} {item_id} version {version} was saved meanwhile (another save?)",
                                  file=self.location, field="version",
                                  hint="reload it, then apply your edits again") from None
