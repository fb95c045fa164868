"""Saving a draft as a new version of a rubric (or scorecard) file, and restoring an older one.

The file in the rubrics folder is the current version (what runs read); every saved version is also kept, as
written, in `<rubrics folder>/.versions/<rubric id>/v<N>.yaml`, so an older version can be restored (restoring writes
it back as a new version: history only grows). The version number goes up by one on every save; the content hash
(`Rubric.version_tag`) says whether what the judge sees changed. A save names the file's content it was made from:
when the file changed underneath (another lead saved meanwhile), the save is refused and nothing is written.

Where versions live is a `Shelf`: the rubrics folder (`FolderShelf`, above) or, for a server setup without a
writable folder, the run store's append-only table (`StoreShelf`, rubriceval/store/studio_versions.py). Saving,
diffing and restoring are the same functions over either.
"""
from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.studio.form import load_tree
from rubriceval.studio.workbench import check_draft

HISTORY = ".versions"


class SavedVersion(BaseModel):
    path: str
    version: int
    version_tag: str
    kept_as: str


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def rubric_path(folder: str | Path, rubric_id: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", rubric_id or ""):
        raise RubricEvalError(f"rubric id {rubric_id!r} may hold only letters, digits, _ and -", field="id")
    return Path(folder) / f"{rubric_id}.yaml"


def current_text(folder: str | Path | Shelf, rubric_id: str) -> str:
    return as_shelf(folder).current(rubric_id)


def diff(old: str, new: str, name: str, labels: tuple[str, str] = ("saved", "draft")) -> str:
    """The change a save would make, as a unified diff (empty: nothing changes); `labels` name the two sides in the
    page's language."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"{name} ({labels[0]})", tofile=f"{name} ({labels[1]})"))


_VERSION_LINE = re.compile(r"^version:[ \t]*(?P<value>[^#\n]*?)[ \t]*(?:#.*)?$", re.M)


def _with_version(text: str, version: int) -> str:
    """The text with its top-level `version:` set — on that line alone, so the rest of the file keeps its bytes (a
    ruamel dump would reflow a multi-line flow mapping); a file without one gets it added by ruamel, the rest of the
    file's lines kept (studio/form.written_back)."""
    from rubriceval.studio.form import written_back

    tree = load_tree(text)
    found = _VERSION_LINE.search(text)
    if found is not None and "version" in tree:
        edited = text[:found.start("value")] + str(version) + text[found.end("value"):]
        if load_tree(edited).get("version") == version:
            return edited
    tree["version"] = version
    return written_back(text, tree)


def _version_of(text: str) -> int:
    """The saved file's version number; a file broken on disk (being repaired in the studio) is read by its line."""
    try:
        value = load_tree(text).get("version", 0)
    except RubricEvalError:
        found = _VERSION_LINE.search(text)
        value = found.group("value") if found else 0
    try:
        return int(str(value or 0).strip().strip("'\""))
    except ValueError:
        return 0


def rubric_tag(text: str, name: str) -> tuple[str | None, str]:
    """(version tag, report) of a rubric draft, or (None, the validation messages)."""
    checked = check_draft(text, name)
    if checked.rubric is None or checked.errors:
        return None, checked.report()
    return checked.rubric.version_tag, checked.report()


Validator = Callable[[str, str], "tuple[str | None, str]"]


class Shelf(Protocol):
    """Where the versions of one kind of file (rubrics, or scorecards) are kept."""

    def ids(self) -> list[str]: ...

    def current(self, item_id: str) -> str: ...

    def versions(self, item_id: str) -> list[int]: ...

    def kept(self, item_id: str, version: int) -> str | None: ...

    def write(self, item_id: str, version: int, text: str, tag: str, saved_by: str,
              before: tuple[int, str] | None) -> tuple[str, str]:
        """Store `text` as `version` (and `before`, the version the studio found, when not kept yet): (where the
        current text now is, where this version is kept)."""
        ...


class FolderShelf:
    """The rubrics (or scorecards) folder: `<id>.yaml` is the current version, `.versions/<id>/v<N>.yaml` each one."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    def ids(self) -> list[str]:
        return sorted(p.stem for p in self.folder.glob("*.yaml"))

    def current(self, item_id: str) -> str:
        path = rubric_path(self.folder, item_id)
        return path.read_text(encoding="utf-8") if path.is_file() else ""

    def versions(self, item_id: str) -> list[int]:
        kept = self.folder / HISTORY / item_id
        return sorted(int(p.stem[1:]) for p in kept.glob("v*.yaml") if p.stem[1:].isdigit())

    def kept(self, item_id: str, version: int) -> str | None:
        path = self.folder / HISTORY / item_id / f"v{version}.yaml"
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def write(self, item_id: str, version: int, text: str, tag: str, saved_by: str,
              before: tuple[int, str] | None) -> tuple[str, str]:
        path = rubric_path(self.folder, item_id)
        kept = self.folder / HISTORY / item_id / f"v{version}.yaml"
        kept.parent.mkdir(parents=True, exist_ok=True)
        if before is not None and not (kept.parent / f"v{before[0]}.yaml").exists():
            (kept.parent / f"v{before[0]}.yaml").write_text(before[1], encoding="utf-8")   # before the studio
        kept.write_text(text, encoding="utf-8")
        path.write_text(text, encoding="utf-8")
        return str(path), str(kept)


class StoreShelf:
    """Versions in the run store (a server setup): the newest stored version is the current text; before the first
    save, the file of a (read-only) seed folder is. Each call opens the store and closes it again."""

    def __init__(self, store: str | Path, kind: str, seed: str | Path | None = None):
        self.store, self.kind, self.seed = store, kind, FolderShelf(seed) if seed else None

    def _open(self):
        from rubriceval.store.runs import RunStore
        from rubriceval.store.studio_versions import StudioVersionStore

        runs = RunStore(self.store)
        return runs, StudioVersionStore(runs.conn, runs.location)

    def ids(self) -> list[str]:
        runs, table = self._open()
        with closing(runs):
            stored = table.ids(self.kind)
        return sorted({*stored, *(self.seed.ids() if self.seed and self.seed.folder.is_dir() else [])})

    def current(self, item_id: str) -> str:
        rubric_path(".", item_id)           # the id rule holds here too
        runs, table = self._open()
        with closing(runs):
            latest = table.get(self.kind, item_id)
        if latest is not None:
            return latest.text
        return self.seed.current(item_id) if self.seed else ""

    def versions(self, item_id: str) -> list[int]:
        runs, table = self._open()
        with closing(runs):
            return table.versions(self.kind, item_id)

    def kept(self, item_id: str, version: int) -> str | None:
        runs, table = self._open()
        with closing(runs):
            found = table.get(self.kind, item_id, version)
        return found.text if found is not None else None

    def write(self, item_id: str, version: int, text: str, tag: str, saved_by: str,
              before: tuple[int, str] | None) -> tuple[str, str]:
        runs, table = self._open()
        with closing(runs):
            kind = self.kind
            if before is not None and before[0] not in table.versions(kind, item_id):
                table.append(kind, item_id, before[0], before[1], "", "(before the studio)")
            table.append(kind, item_id, version, text, tag, saved_by or "studio")
            where = f"{runs.location} [{self.kind} {item_id} v{version}]"
        return where, where


def export(shelf: Shelf, folder: str | Path) -> list[Path]:
    """Write the current version of everything on the shelf into `folder` as `<id>.yaml` (what runs read)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for item_id in shelf.ids():
        path = rubric_path(out, item_id)
        path.write_text(shelf.current(item_id), encoding="utf-8")
        written.append(path)
    return written


def as_shelf(target: str | Path | Shelf) -> Shelf:
    return FolderShelf(target) if isinstance(target, (str, Path)) else target


def history(folder: str | Path | Shelf, rubric_id: str) -> list[int]:
    return as_shelf(folder).versions(rubric_id)


def save_version(folder: str | Path | Shelf, draft_text: str, *, based_on: str, validate: Validator = rubric_tag,
                 saved_by: str = "") -> SavedVersion:
    """Write the draft as the file's next version (a rubric by default; `validate` says what the file is, e.g.
    studio/scorecards.scorecard_tag). `based_on`: the fingerprint of the file's text the draft was made from ('' for
    a new file). Refused, writing nothing, when the draft does not validate or the file changed underneath."""
    shelf = as_shelf(folder)
    tree = load_tree(draft_text)
    rubric_id = str(tree.get("id", ""))
    name = rubric_path(".", rubric_id).name
    saved = shelf.current(rubric_id)
    if fingerprint(saved) != based_on and (saved or based_on):
        raise RubricEvalError(f"{name} changed since this draft was opened (another save?)", file=name,
                              hint="reload the rubric, then apply your edits again")
    old_version = _version_of(saved) if saved else 0
    version = max([old_version, *shelf.versions(rubric_id)]) + 1
    text = _with_version(draft_text, version)
    tag, report = validate(text, name)
    if tag is None:
        raise RubricEvalError("the draft does not validate; nothing was saved", file=name, hint=report)
    before = (old_version, saved) if saved and old_version else None
    path, kept = shelf.write(rubric_id, version, text, tag, saved_by, before)
    return SavedVersion(path=path, version=version, version_tag=tag, kept_as=kept)


def restore_version(folder: str | Path | Shelf, rubric_id: str, version: int, *, validate: Validator = rubric_tag,
                    saved_by: str = "") -> SavedVersion:
    """Bring back an older version's content as the next version."""
    shelf = as_shelf(folder)
    text = shelf.kept(rubric_id, version)
    if text is None:
        raise RubricEvalError(f"no saved version {version} of {rubric_id}", field="version",
                              hint=f"saved versions: {shelf.versions(rubric_id) or 'none'}")
    return save_version(shelf, text, based_on=fingerprint(shelf.current(rubric_id)), validate=validate,
                        saved_by=saved_by)
