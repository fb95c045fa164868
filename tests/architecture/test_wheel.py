"""The wheel as a user installs it (issue 38): built from the checkout, installed into a fresh venv, run from an
empty folder. One import name (`rubriceval`: ui/ and standard_metrics/ inside it), no benchmarks and no test-only
helpers in it; `--help`, `validate`, a checks-only `run` and `report` work on the demo data, and `benchmark-judge`
says in one line that the benchmarks ship with the source repository — or runs them from a clone given as --data.

Offline: the wheel is built without build isolation or an index; the venv gets the wheel alone (--no-deps) and finds
the dependencies in this venv's site-packages through a .pth line placed after its own site-packages. A .pth line
adds a folder without running that folder's .pth files, so this venv's editable install (a .pth hook) is not active
there: what imports is the wheel's copy, which the test checks."""
from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parents[2]
# What the wheel is built from: what setup.py and pyproject.toml package, nothing from beside the checkout.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "rubriceval", "standard_metrics", "ui")
TEST_ONLY = ("appeal_store", "conversation_run", "postgres_server", "store_copy", "store_writers", "team_store")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = tmp / "dist"
    # No build isolation and no index: setuptools from this venv, nothing fetched.
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(dist), str(source)], check=True, timeout=300)
    (built,) = dist.glob("rubriceval-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, timeout=300)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "project_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n",
                                                            encoding="utf-8")
    return venv


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    """An empty working folder holding copies of the demo data only: nothing of the checkout is reachable."""
    shutil.copy2(ROOT / "datasets" / "demo_zh.jsonl", tmp_path / "demo_zh.jsonl")
    shutil.copytree(ROOT / "rubrics", tmp_path / "rubrics")
    return tmp_path


def _run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("RUBRICEVAL_")}
    return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_wheel_holds_one_import_name_and_no_benchmarks_or_test_helpers(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if ".dist-info/" not in name}
    assert top == {"rubriceval"}
    assert {"rubriceval/ui/__init__.py", "rubriceval/ui/audit/app.py", "rubriceval/standard_metrics/__init__.py",
            "rubriceval/standard_metrics/registry.py", "rubriceval/testing/stub_server.py",
            "rubriceval/testing/gullible_judge.py"} <= set(names)
    templates = {str(p.relative_to(ROOT)) for p in (ROOT / "standard_metrics").rglob("*.j2")}
    assert templates and {f"rubriceval/{t}" for t in templates} <= set(names)     # package data of the folders
    assert not [n for n in names if "benchmarks" in n.split("/") or n.endswith((".jsonl", ".json.gz"))]
    assert not [n for n in names if n.startswith("rubriceval/testing/") and Path(n).stem in TEST_ONLY]


def test_the_installed_wheel_is_what_imports(venv: Path, empty: Path):
    code = ("import importlib.util as u, rubriceval, rubriceval.ui, rubriceval.standard_metrics\n"
            "print(rubriceval.__file__); print(rubriceval.ui.__file__); print(rubriceval.standard_metrics.__file__)\n"
            "print([n for n in ('ui', 'standard_metrics', 'benchmarks', 'tests') if u.find_spec(n)])")
    done = _run(venv, empty, "python", "-c", code)
    assert done.returncode == 0, done.stderr
    *files, stray = done.stdout.splitlines()
    assert all(Path(f).is_relative_to(venv) for f in files), files      # the installed copy, not the checkout
    assert stray == "[]"


def test_the_installed_wheel_validates_runs_checks_and_reports_the_demo(venv: Path, empty: Path):
    done = _run(venv, empty, "rubriceval", "--help")
    assert done.returncode == 0 and "benchmark-judge" in done.stdout, done.stderr

    done = _run(venv, empty, "rubriceval", "validate", "rubrics")
    assert done.returncode == 0, done.stdout + done.stderr

    # checks and string metrics only: no judge is configured or called
    done = _run(venv, empty, "rubriceval", "run", "demo_zh.jsonl", "--rubrics", "rubrics", "--only", "required_link",
                "--metrics", "rouge_l,bleu,nonllm_context_recall", "--store", "runs.sqlite", "--name", "wheel",
                "--out", "out")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Judge calls 0" in done.stdout and "0 unscored" in done.stdout, done.stdout

    done = _run(venv, empty, "rubriceval", "report", "latest", "--store", "runs.sqlite", "--out", "report")
    assert done.returncode == 0, done.stdout + done.stderr
    html = (empty / "report" / "wheel.html").read_text(encoding="utf-8")
    assert "required_link" in html and "rouge_l" in html
    assert (empty / "report" / "wheel.xlsx").stat().st_size > 0 and (empty / "report" / "wheel.md").is_file()


def test_benchmark_judge_from_the_wheel_says_where_the_benchmarks_are(venv: Path, empty: Path):
    done = _run(venv, empty, "rubriceval", "benchmark-judge", "robustness", "--stub-judge", "gullible")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "benchmark-judge: the benchmarks (runners and labelled data) ship with the source repository, not with the "
        "installed package; run it from a clone of rubriceval, or point --data into one"]
    assert "Traceback" not in done.stderr and not list(empty.glob("out*"))


def test_benchmark_judge_from_the_wheel_runs_a_clones_benchmarks(venv: Path, empty: Path):
    """--data naming a clone: its benchmarks/ run with the installed package (defences only: no judge)."""
    done = _run(venv, empty, "rubriceval", "benchmark-judge", "robustness", "--modes", "none", "--families",
                "score_request", "--data", str(ROOT), "--out", "robustness.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (empty / "robustness.json").is_file()
