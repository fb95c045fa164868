"""The CLI on a shared store: `--store postgresql://…` (and a SQLite file, the same test) through run, runs, report,
compare, gate, --resume, a Batch API run, agreement from a labels file and calibrate, on the loopback stub judge. A
password in the URL never shows; local files of a server store (batch requests) go under ./out, those of a SQLite
store beside its file."""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from rubriceval.cli import build_parser, main
from rubriceval.store.location import folder_beside_store
from rubriceval.testing.stub_server import StubServer
from rubriceval.trust.store import TrustStore
from tests.pairwise.test_pairwise import RUBRIC_YAML  # the one-rubric folder the pairwise CLI tests use

ANSWER = re.compile(r"<<<CHATBOT ANSWER>>>\n(.*?)\n<<<END CHATBOT ANSWER>>>", re.S)
PASSWORD = "s3cret-pw"


def test_store_option_keeps_a_url_a_url_and_a_file_a_path():
    parser = build_parser()
    url = f"postgresql://eval:{PASSWORD}@db.example:5432/rubriceval"
    assert parser.parse_args(["runs", "--store", url]).store == url
    assert parser.parse_args(["gate", "--store", "team/runs.sqlite"]).store == Path("team/runs.sqlite")
    assert parser.parse_args(["report"]).store == Path("out/runs.sqlite")           # DEFAULT_STORE: the SQLite file
    assert parser.parse_args(["benchmark-judge", "summeval"]).store is None          # records nothing unless asked
    assert folder_beside_store(url) == Path("out")
    assert folder_beside_store(Path("team/runs.sqlite")) == Path("team")


def score_by_politeness(body: dict) -> dict:
    """The judge: 5 for an answer that says please, 2 otherwise."""
    answer = ANSWER.search(body["messages"][-1]["content"]).group(1)
    return {"feedback": "says please" if "please" in answer else "curt", "score": 5 if "please" in answer else 2}


@pytest.fixture
def shared_store(store_target, tmp_path) -> str:
    """The store as a user types it: a SQLite file in a folder of its own, or a PostgreSQL URL with a password (the
    test server trusts loopback connections, so the password is accepted and never checked)."""
    if isinstance(store_target, Path):
        return str(tmp_path / "team" / "runs.sqlite")
    return store_target.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")


def test_run_report_compare_gate_on_the_shared_store(shared_store, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)                          # ./out of a server store lands in the test's folder
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "tone.yaml").write_text(textwrap.dedent(RUBRIC_YAML), encoding="utf-8")
    for name, polite in (("old", False), ("new", True)):
        rows = [{"id": f"s{i}", "question": f"Where is order {i}?",
                 "answer": ("Let me check, please wait. " if polite else "Wait. ") + f"Order {i} ships today."}
                for i in range(6)]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    store = ["--store", shared_store]

    with StubServer(responder=score_by_politeness) as stub:
        judge = ["--judge-base-url", stub.base_url, "--judge-model", "stub", "--no-cache"]
        for name in ("old", "new"):
            assert main(["run", f"{name}.jsonl", "--rubrics", "tone.yaml", "--name", name, "--quiet",
                         *store, *judge]) == 0, capsys.readouterr().err
        calls = stub.stats.calls["chat"]
        assert calls == 12
        assert main(["run", "--resume", "new", "--quiet", *store, *judge]) == 0         # nothing left to judge
        assert stub.stats.calls["chat"] == calls
        run_output = capsys.readouterr().out
        assert "store: " in run_output

        # A Batch API run: its request files go beside the store file, or under ./out for a server store.
        assert main(["run", "old.jsonl", "--rubrics", "tone.yaml", "--name", "nightly", "--batch", *store,
                     *judge]) == 0, capsys.readouterr().err
        folder = re.search(r"request\(s\) in ([^,\s]+)", capsys.readouterr().out).group(1)
        expected = (tmp_path / "out" / "batches") if shared_store.startswith("postgresql://") else (
            tmp_path / "team" / "batches")
        assert Path(folder).resolve().parent == expected.resolve() and any(Path(folder).iterdir())
        assert main(["batch", "status", "nightly", *store, *judge]) == 0

    assert main(["runs", *store]) == 0
    listed = capsys.readouterr().out
    assert re.search(r"\bold\b.*complete", listed) and re.search(r"\bnew\b.*complete", listed)

    assert main(["report", "new", "--out", str(tmp_path / "reports"), "--lang", "en", *store]) == 0
    report = capsys.readouterr().out
    assert "Tone" in report and (tmp_path / "reports" / "new.html").is_file()
    assert (tmp_path / "reports" / "new.xlsx").is_file()

    assert main(["compare", "old", "new", "--lang", "en", "--n-boot", "200", *store]) == 0
    comparison = capsys.readouterr().out
    assert "tone" in comparison.lower() and "+3.00" in comparison          # mean 2 → 5 on every sample

    assert main(["gate", "new", "--check", "tone mean>=4", "--baseline", "old", "--check", "regression>=-0.2",
                 *store]) == 0
    assert main(["gate", "old", "--check", "tone mean>=4", *store]) == 1
    assert main(["gate", "missing-run", "--check", "tone mean>=4", *store]) == 2
    captured = capsys.readouterr()
    assert "no run 'missing-run'" in captured.err

    # Judge–expert agreement from a labels file is recorded in the store's trust tables; calibration reads them.
    (tmp_path / "labels.jsonl").write_text("\n".join(json.dumps({"sample_id": f"s{i}", "score": 5 if i < 5 else 4})
                                                    for i in range(6)), encoding="utf-8")
    assert main(["agreement", "--rubric", "tone", "--labels", "labels.jsonl", "--run", "new", "--n-boot", "0",
                 *store]) == 0
    agreement = capsys.readouterr().out
    assert "on 6 audited items" in agreement and re.search(r"exact\s+0\.833", agreement), agreement
    with TrustStore(shared_store) as trust:
        assert [(r.source, r.n) for r in trust.agreement_results("tone")] == [("labels", 6)]
    assert main(["calibrate", "--rubric", "tone", "--accept", "7", *store]) == 2
    refused = capsys.readouterr().err
    assert "no recorded version '7'" in refused
    everything = run_output + listed + report + comparison + captured.out + captured.err + agreement + refused
    assert PASSWORD not in everything
    if shared_store.startswith("postgresql://"):
        assert "postgres:***@" in run_output                     # where the runs went, password masked
