"""Where the files that go with a run store but live on this machine are written by default (batch request and result
files, proposed rubric YAML): beside a SQLite store file, as before; under ./out for a PostgreSQL store, which has no
folder (out/ is the folder of the default store, out/runs.sqlite, so a team member finds them where a laptop user
would). One function, so the batch runner, its CLI and calibration agree."""
from __future__ import annotations

from pathlib import Path

from rubriceval.store.db import is_server_url

LOCAL_FOLDER_FOR_SERVER_STORES = Path("out")


def folder_beside_store(target: str | Path) -> Path:
    """The folder local files of the store `target` (a SQLite path or a postgresql:// URL) go to by default."""
    if is_server_url(str(target)):
        return LOCAL_FOLDER_FOR_SERVER_STORES
    return Path(target).parent
