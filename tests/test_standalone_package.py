"""The package stands alone: benchmark-judge reads the data shipped inside rubriceval (or the user's own copy via
--data), and a built wheel installed in a fresh venv runs it from an empty folder against the stub judge."""
from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rubriceval import DatasetError
from rubriceval.testing.stub_server import StubServer
from benchmarks.judge.datasets import load_halueval, load_summeval

ROOT = Path(__file__).resolve().parents[1]
# What the wheel is built from: exactly what pyproject.toml packages, nothing from beside the checkout.
SOURCES = ("pyproject.toml", "README.md", "rubriceval", "standard_metrics", "ui")
PACKAGED_DATA = ("benchmarks/judge/data/summeval.json", "benchmarks/judge/data/halueval_general.json.gz",
                 "benchmarks/judge/data/LICENSE-SummEval", "benchmarks/judge/data/LICENSE-summac",
                 "benchmarks/judge/data/LICENSE-HaluEval", "benchmarks/judge/data/README.md",
                 "benchmarks/judge/rubrics/summeval_consistency.yaml",
                 "benchmarks/judge/rubrics/halueval_hallucination.yaml")


def _summeval_row(claim: str, scores: list[int]) -> dict:
    return {"document": "The museum opens at nine.", "claim": claim, "annotations": scores, "label": "1"}


def _halueval_row(source_id: int, label: str) -> str:
    return json.dumps({"ID": str(source_id), "user_query": f"question {source_id}",
                       "chatgpt_response": f"answer {source_id}", "hallucination": label})


def test_data_flag_reads_the_users_own_copy(stub_server: StubServer, tmp_path: Path, capsys):
    from rubriceval.cli import main

    summeval = tmp_path / "mine.json"
    summeval.write_text(json.dumps({"own_a": _summeval_row("Opens at nine.", [5, 5, 4]),
                                    "own_b": _summeval_row("Opens at ten.", [1, 2, 1]),
                                    "own_c": _summeval_row("It opens.", [4, 3, 4])}), encoding="utf-8")
    halueval_dir = tmp_path / "HaluEval"
    halueval_dir.mkdir()
    (halueval_dir / "general_data.json").write_text(     # HaluEval's own file name, found inside the folder
        "\n".join(_halueval_row(i, label) for i, label in enumerate(["yes", "no", "yes", "no", "no"], 1)),
        encoding="utf-8")
    judge = ["--judge-base-url", stub_server.base_url, "--judge-model", "stub", "--no-cache"]

    assert main(["benchmark-judge", "summeval", "--data", str(summeval), "--out", str(tmp_path / "s.json"),
                 *judge]) == 0
    saved = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert sorted(item["id"] for item in saved["items"]) == ["own_a", "own_b", "own_c"]
    assert main(["benchmark-judge", "halueval", "--n", "4", "--data", str(halueval_dir),
                 "--out", str(tmp_path / "h.json"), *judge]) == 0
    saved = json.loads((tmp_path / "h.json").read_text(encoding="utf-8"))
    assert {item["id"] for item in saved["items"]} <= {f"halueval-{i}" for i in range(1, 6)}
    assert sorted(item["human"] for item in saved["items"]) == ["no", "no", "yes", "yes"]
    assert len(stub_server.stats.requests) == 3 + 4
    capsys.readouterr()


def test_data_folder_without_a_benchmark_file_names_what_it_looked_for(tmp_path: Path):
    with pytest.raises(DatasetError, match="expected one of: summeval.json"):
        load_summeval(tmp_path)
    with pytest.raises(DatasetError, match="general_data.json"):
        load_halueval(tmp_path)


def test_packaged_data_is_the_full_benchmarks():
    assert len(load_summeval()) == 100
    assert len(load_halueval()) == 4507               # read from the gzip shipped in benchmarks/judge/data/


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = tmp_path / "dist"
    # No build isolation and no index: setuptools from this venv, nothing fetched.
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(dist), str(source)], check=True, timeout=300)
    (wheel,) = dist.glob("rubriceval-*.whl")
    return wheel


def _fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    """A new venv with the wheel installed (not editable); its dependencies come from this venv's site-packages
    through a .pth line, after the venv's own site-packages, so the installed copy of rubriceval is the one seen."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, timeout=300)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "project_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n",
                                                            encoding="utf-8")
    return venv


def test_an_installed_wheel_runs_benchmark_judge_from_an_empty_folder(tmp_path: Path):
    wheel = _build_wheel(tmp_path)
    assert set(PACKAGED_DATA) <= set(zipfile.ZipFile(wheel).namelist())
    venv = _fresh_venv(tmp_path, wheel)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("RUBRICEVAL_")}

    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import rubriceval; print(rubriceval.__file__)"],
                           cwd=empty, env=env, check=True, capture_output=True, text=True).stdout.strip()
    assert Path(where).is_relative_to(venv), where           # the installed copy, not the checkout

    with StubServer() as stub:
        done = subprocess.run([str(venv / "bin" / "rubriceval"), "benchmark-judge", "summeval", "--n", "5",
                               "--out", "result.json", "--judge-base-url", stub.base_url, "--judge-model", "stub",
                               "--no-cache"], cwd=empty, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert len(stub.stats.requests) == 5
    result = json.loads((empty / "result.json").read_text(encoding="utf-8"))
    assert result["n_items"] == result["n_scored"] == 5
    assert result["rubric_id"] == "summeval_consistency"
    assert "5 items, 5 scored" in done.stdout
