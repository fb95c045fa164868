"""Create (once) the isolated venv the Ragas side runs in: benchmarks/pipeline/.venv-ragas (gitignored).

Ragas and LangChain stay out of the project venv: their pins (pydantic, openai 1.x, numpy …) are not ours to
carry, and the benchmark must not measure a Ragas that was resolved against our dependencies.

The venv is rebuilt when its requirements file changes (a hash of it is stored inside the venv).
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REQUIREMENTS = BENCH / "requirements"
DEFAULT_VENV = BENCH / ".venv-ragas"


class RagasEnvError(RuntimeError):
    pass


def requirements_file(version: str) -> Path:
    path = REQUIREMENTS / f"ragas-{version}.txt"
    if not path.exists():
        known = sorted(p.stem.removeprefix("ragas-") for p in REQUIREMENTS.glob("ragas-*.txt"))
        raise RagasEnvError(f"no pinned requirements for ragas {version} (have: {', '.join(known)})")
    return path


def venv_dir(version: str) -> Path:
    """0.2.15 (the reference version) lives in .venv-ragas; any other version beside it."""
    return DEFAULT_VENV if version == "0.2.15" else BENCH / f".venv-ragas-{version}"


def ragas_release(version: str) -> str:
    """The Ragas release of a requirements name: "sql-0.4.3" (a flavoured set, e.g. + datacompy) → "0.4.3"."""
    return version.rsplit("-", 1)[-1]


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_ragas_env(version: str = "0.2.15", *, log=print) -> Path:
    """The venv's python, creating or refreshing the venv when needed (pip from the configured index)."""
    requirements = requirements_file(version)
    venv = venv_dir(version)
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    marker = venv / ".requirements.sha256"
    if marker.exists() and marker.read_text().strip() == digest and python_of(venv).exists():
        return python_of(venv)
    if venv.exists():
        shutil.rmtree(venv)
    log(f"creating {venv.relative_to(BENCH.parent)} with ragas=={ragas_release(version)} (one-off, ~1–2 min)…")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python_of(venv)), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    completed = subprocess.run([*pip, "-r", str(requirements)], capture_output=True, text=True)
    if completed.returncode != 0:
        raise RagasEnvError(f"pip install -r {requirements.name} failed:\n{completed.stderr[-2000:]}")
    check = subprocess.run([str(python_of(venv)), "-c", "import ragas; print(ragas.__version__)"],
                           capture_output=True, text=True, env={"RAGAS_DO_NOT_TRACK": "true", "PATH": "/usr/bin:/bin"})
    if check.returncode != 0 or check.stdout.strip() != ragas_release(version):
        raise RagasEnvError(f"ragas {version} does not import in {venv}:\n{check.stderr[-2000:]}")
    marker.write_text(digest)
    return python_of(venv)


def run_ragas_side(version: str, script: Path, *args: str) -> dict:
    """Run a Ragas-side script with the venv's python and return the JSON object on its last stdout line
    ({"ragas_version", "values", "errors"}). A crash, any per-case error or another Ragas version stops the caller:
    no reference values are written from a partial or mismatched run."""
    python = ensure_ragas_env(version)
    done = subprocess.run([str(python), str(script), *args], capture_output=True, text=True,
                          env={"RAGAS_DO_NOT_TRACK": "true", "PATH": "/usr/bin:/bin"})
    if done.returncode != 0:
        raise SystemExit(f"the Ragas side failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["errors"]:
        raise SystemExit("Ragas raised:\n" + "\n".join(f"  {k}: {v}" for k, v in result["errors"].items()))
    if result["ragas_version"] != ragas_release(version):
        raise SystemExit(f"expected ragas {ragas_release(version)}, the venv has {result['ragas_version']}")
    return result


if __name__ == "__main__":
    print(ensure_ragas_env(sys.argv[1] if len(sys.argv) > 1 else "0.2.15"))
