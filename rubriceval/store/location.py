"""Where a run store is, as the rest of the code names it: a SQLite file (a Path) or a PostgreSQL database (its URL,
kept as given); how it is shown (never with its password); and where files that go with a store but live on this
machine are written by default (batch request/result files, proposed rubric YAML, exports): beside a SQLite file, as
before; under ./out for a PostgreSQL store, which has no folder (out/ is the folder of the default store,
out/runs.sqlite, so a team member finds them where a laptop user would)."""
from __future__ import annotations

import re
from pathlib import Path

_URL_SCHEMES = ("postgresql://", "postgres://")
LOCAL_FOLDER_FOR_SERVER_STORES = Path("out")


def is_server_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(_URL_SCHEMES)


def store_target(target: str | Path) -> str | Path:
    """A `--store` value as the store classes keep it: a server URL as given, anything else as a file path."""
    return target if is_server_url(target) else Path(target)


def display_location(target: str | Path) -> str:
    """Where the store is, fit for messages and reports: a URL without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", str(target))


def folder_beside_store(target: str | Path) -> Path:
    """The folder local files of the store `target` (a SQLite path or a postgresql:// URL) go to by default."""
    if is_server_url(str(target)):
        return LOCAL_FOLDER_FOR_SERVER_STORES
    return Path(target).parent
