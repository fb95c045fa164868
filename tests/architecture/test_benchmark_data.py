"""benchmark-judge reads the labelled data of the repository's benchmarks/ tree, or the user's own copy via --data
(from an installed wheel, which holds no benchmarks: tests/architecture/test_wheel.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.judge.datasets import load_halueval, load_summeval
from rubriceval import DatasetError
from rubriceval.testing.stub_server import StubServer

ROOT = Path(__file__).resolve().parents[2]


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
    assert len(load_halueval()) == 4507               # read from the gzip in benchmarks/judge/data/


def test_the_benchmarks_are_this_checkouts_or_those_of_the_clone_data_points_into(tmp_path: Path):
    from rubriceval.cli.benchmark_judge import find_benchmarks

    assert find_benchmarks(None) == (ROOT, None)                      # beside the package's source
    assert find_benchmarks(str(ROOT)) == (ROOT, None)                 # --data: a clone ...
    assert find_benchmarks(str(ROOT / "benchmarks")) == (ROOT, None)  # ... or its benchmarks/ folder
    inside = str(ROOT / "benchmarks" / "judge" / "data" / "summeval.json")
    assert find_benchmarks(inside) == (ROOT, inside)                  # a data file in a clone: read as given
    own = str(tmp_path / "mine.json")
    assert find_benchmarks(own) == (ROOT, own)                        # the user's copy, this checkout's runner


def test_measured_blocks_and_docs_name_benchmark_files_that_exist():
    """The benchmarks left the package for the repository's benchmarks/ (issue 38): every file a rubric's measured:
    block or comment names, and every benchmarks/ or datasets/ file the docs name, is where they say."""
    import re

    named = re.compile(r"(?<![\w./-])((?:benchmarks|datasets|rubrics|scorecards|docs|tests|rubriceval)/[\w./-]*"
                       r"\.(?:py|jsonl|json|json\.gz|yaml|md|csv))\b")
    rubric_files = [*ROOT.glob("rubrics/*.yaml"), *ROOT.glob("scorecards/*.yaml"),
                    *ROOT.glob("benchmarks/judge/rubrics/*.yaml")]
    docs = [*ROOT.glob("docs/*.md"), ROOT / "README.md"]
    wanted = {(f.name, p) for f in rubric_files for p in named.findall(f.read_text(encoding="utf-8"))}
    wanted |= {(f.name, p) for f in docs for p in named.findall(f.read_text(encoding="utf-8"))
               if p.startswith(("benchmarks/", "datasets/"))}
    assert len(wanted) > 20
    assert not sorted((where, p) for where, p in wanted if not (ROOT / p).exists())
