"""Saving a draft as a new version of a rubric (or scorecard) file, and restoring an older one.

The file in the rubrics folder is the current version (what runs read); every saved version is also kept, as
written, in `<rubrics folder>/.versions/<rubric id>/v<N>.yaml`, so an older version can be restored (restoring writes
it back as a new version: history only grows). The version number goes up by one on every save; the content hash
(`Rubric.version_tag`) says whether what the judge sees changed. A save names the file's content it was made from:
when the file changed underneath (another lead saved meanwhile), the save is refused and nothing is written.
"""
from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

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


def current_text(folder: str | Path, rubric_id: str) -> str:
    path = rubric_path(folder, rubric_id)
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def diff(old: str, new: str, name: str) -> str:
    """The change a save would make, as a unified diff (empty: nothing changes)."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"{name} (saved)", tofile=f"{name} (draft)"))


def _with_version(text: str, version: int) -> str:
    import io

    from rubriceval.studio.form import _yaml

    tree = load_tree(text)
    tree["version"] = version
    out = io.StringIO()
    _yaml().dump(tree, out)
    return out.getvalue()


def history(folder: str | Path, rubric_id: str) -> list[int]:
    kept = Path(folder) / HISTORY / rubric_id
    return sorted(int(p.stem[1:]) for p in kept.glob("v*.yaml") if p.stem[1:].isdigit())


def rubric_tag(text: str, name: str) -> tuple[str | None, str]:
    """(version tag, report) of a rubric draft, or (None, the validation messages)."""
    checked = check_draft(text, name)
    ok = checked.rubric is not None and not checked.errors
    return (checked.rubric.version_tag if ok else None), checked.report()


Validator = Callable[[str, str], "tuple[str | None, str]"]


def save_version(folder: str | Path, draft_text: str, *, based_on: str, validate: Validator = rubric_tag
                 ) -> SavedVersion:
    """Write the draft as the file's next version (a rubric by default; `validate` says what the file is, e.g.
    studio/scorecards.scorecard_tag). `based_on`: the fingerprint of the file's text the draft was made from ('' for
    a new file). Refused, writing nothing, when the draft does not validate or the file changed underneath."""
    tree = load_tree(draft_text)
    rubric_id = str(tree.get("id", ""))
    path = rubric_path(folder, rubric_id)
    saved = path.read_text(encoding="utf-8") if path.is_file() else ""
    if fingerprint(saved) != based_on and (saved or based_on):
        raise RubricEvalError(f"{path.name} changed since this draft was opened (another save?)", file=str(path),
                              hint="reload the rubric, then apply your edits again")
    old_version = int(load_tree(saved).get("version", 0) or 0) if saved else 0
    known = history(folder, rubric_id)
    version = max([old_version, *known]) + 1
    text = _with_version(draft_text, version)
    tag, report = validate(text, path.name)
    if tag is None:
        raise RubricEvalError("the draft does not validate; nothing was saved", file=path.name, hint=report)
    kept = Path(folder) / HISTORY / rubric_id / f"v{version}.yaml"
    kept.parent.mkdir(parents=True, exist_ok=True)
    if saved and old_version and not (kept.parent / f"v{old_version}.yaml").exists():
        (kept.parent / f"v{old_version}.yaml").write_text(saved, encoding="utf-8")   # the version before the studio
    kept.write_text(text, encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    return SavedVersion(path=str(path), version=version, version_tag=tag, kept_as=str(kept))


def restore_version(folder: str | Path, rubric_id: str, version: int, *, validate: Validator = rubric_tag
                    ) -> SavedVersion:
    """Bring back an older version's content as the next version."""
    kept = Path(folder) / HISTORY / rubric_id / f"v{version}.yaml"
    if not kept.is_file():
        raise RubricEvalError(f"no saved version {version} of {rubric_id}", file=str(kept),
                              hint=f"saved versions: {history(folder, rubric_id) or 'none'}")
    return save_version(folder, kept.read_text(encoding="utf-8"),
                        based_on=fingerprint(current_text(folder, rubric_id)), validate=validate)
