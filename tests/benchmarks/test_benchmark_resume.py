"""`benchmark-judge … --resume`: a stopped benchmark keeps its judged items in OUT.partial.jsonl and a resumed run
judges only the others — the same result as one uninterrupted run — never mixing verdicts of two prompts
(benchmarks/judge/partial.py). Loopback stub judge, no model."""
from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from benchmarks.judge.cs_zh import CsRow, run_cs_benchmark_async
from benchmarks.judge.judge import run_benchmark_async
from benchmarks.judge.partial import read_partial
from benchmarks.judge.results import BenchmarkItem
from rubriceval.common.errors import DatasetError

TIMINGS = {"elapsed_s", "seconds_per_item", "resumed_items"}


def _score(body: dict) -> dict:
    """A deterministic judge: the score follows from the prompt (so every run judges an item alike)."""
    digest = hashlib.sha256(body["messages"][-1]["content"].encode()).digest()
    return {"feedback": f"checked {digest[:3].hex()}", "score": 1 + digest[0] % 5}


def _comparable(result: dict | BaseModel) -> dict:
    """A result without what no two runs share: wall seconds (the run's, each call's latency), the prompt tokens
    the server found in its prefix cache (what it had seen before: the stub, like llama.cpp, keeps a cache), and
    how the run was resumed."""
    data = result.model_dump(mode="json") if isinstance(result, BaseModel) else dict(result)
    for key in TIMINGS | {"command"}:
        data.pop(key, None)
    for usage in [data["usage"]] + [i["usage"] for i in data.get("items") or data.get("rows") if i.get("usage")]:
        usage["latency_s"] = usage["cached_prompt_tokens"] = 0
    return data


def _differences(a, b, where: str = "") -> list[str]:
    """Where two JSON values differ (paths), for a readable failure."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in a.keys() | b.keys() for d in _differences(a.get(k), b.get(k), f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def _item_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[1:]


@pytest.fixture
def uncached(stub_server, judge_config):
    """The stub as a deterministic judge, without the judge cache (every item judged is a request)."""
    stub_server.responder = _score
    return judge_config.model_copy(update={"cache": False})


def _run(kind: str, config, partial: Path, n: int, **options):
    return run_benchmark_async(kind, config, n=n, n_boot=0, progress=False, partial=partial, **options)


async def _stopped_after(k: int, stub_server, run, partial: Path) -> None:
    """Start `run` and stop it (cancel, as Ctrl-C does) once the judge has answered k items: the judge holds the
    next request until then, so exactly k items are judged."""
    release, answered = threading.Event(), []

    def responder(body: dict):
        if len(answered) >= k:
            release.wait(10)
        answered.append(1)
        return _score(body)

    stub_server.responder = responder
    task = asyncio.create_task(run())
    try:
        for _ in range(500):
            await asyncio.sleep(0.01)
            if partial.exists() and len(_item_lines(partial)) >= k:
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        release.set()
        await asyncio.sleep(0.05)
    stub_server.responder = _score


async def test_a_stopped_summeval_run_resumes_to_the_uninterrupted_result(stub_server, judge_config, tmp_path):
    config = judge_config.model_copy(update={"cache": False, "concurrency": 1})
    options = dict(n=8, n_boot=50, progress=False, few_shot="per_level")
    stub_server.responder = _score
    whole = await run_benchmark_async("summeval", config, partial=tmp_path / "whole.jsonl", **options)
    assert len(stub_server.stats.requests) == 8 and whole.resumed_items == 0

    partial = tmp_path / "stopped.jsonl"
    await _stopped_after(3, stub_server, lambda: run_benchmark_async("summeval", config, partial=partial, **options),
                         partial)
    assert len(_item_lines(partial)) == 3
    before = len(stub_server.stats.requests)
    resumed = await run_benchmark_async("summeval", config, partial=partial, resume=True, **options)
    assert len(stub_server.stats.requests) - before == 8 - 3          # only the missing items were judged
    assert resumed.resumed_items == 3 and resumed.n_items == 8
    assert not _differences(_comparable(resumed), _comparable(whole))
    assert resumed.usage.calls == whole.usage.calls == 8
    header, items, seconds = read_partial(partial, BenchmarkItem)
    assert sorted(i.id for i in items) == sorted(header.item_ids) and seconds == pytest.approx(resumed.elapsed_s,
                                                                                                 abs=1.0)


async def test_a_partial_of_another_prompt_or_judge_is_refused_naming_what_differs(stub_server, uncached, tmp_path):
    partial = tmp_path / "p.jsonl"
    await _run("summeval", uncached, partial, 6)
    kept = partial.read_text(encoding="utf-8")
    before = len(stub_server.stats.requests)

    with pytest.raises(DatasetError, match=r"few_shot: None there, per_level now.*judge prompts: fingerprint"):
        await _run("summeval", uncached, partial, 6, resume=True, few_shot="per_level")
    with pytest.raises(DatasetError, match=r"judge_model: stub there, other now"):
        await _run("summeval", uncached.model_copy(update={"model": "other"}), partial, 6, resume=True)
    with pytest.raises(DatasetError, match=r"items: 6 there, 7 now"):
        await _run("summeval", uncached, partial, 7, resume=True)
    assert partial.read_text(encoding="utf-8") == kept and len(stub_server.stats.requests) == before


async def test_an_edited_rubric_is_another_prompt(uncached, tmp_path):
    from benchmarks.judge.judge import DEFAULT_RUBRICS, RUBRIC_DIR

    partial = tmp_path / "p.jsonl"
    await _run("halueval", uncached, partial, 4)
    edited = tmp_path / "halueval.yaml"
    text = (RUBRIC_DIR / DEFAULT_RUBRICS["halueval"]).read_text(encoding="utf-8")
    edited.write_text(text.replace("criterion: |\n", "criterion: |\n  Read every sentence.\n", 1), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"rubric_versions: .* there, .* now.*judge prompts"):
        await _run("halueval", uncached, partial, 4, resume=True, rubric_path=edited)


async def test_a_partial_without_header_is_refused_and_one_with_items_needs_resume(uncached, tmp_path):
    partial = tmp_path / "p.jsonl"
    await _run("halueval", uncached, partial, 4)
    with pytest.raises(DatasetError, match="pass --resume") as refused:
        await _run("halueval", uncached, partial, 4)
    assert "4 items of a stopped run" in str(refused.value)
    assert len(_item_lines(partial)) == 4                      # nothing overwritten

    legacy = tmp_path / "legacy.jsonl"                          # the format before the header: items only
    legacy.write_text("\n".join(_item_lines(partial)[:2]) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no header naming the prompts"):
        await _run("halueval", uncached, legacy, 4, resume=True)


async def test_an_incomplete_last_line_is_judged_again(stub_server, uncached, tmp_path):
    partial = tmp_path / "p.jsonl"
    whole = await _run("halueval", uncached, partial, 6)
    lines = partial.read_text(encoding="utf-8").splitlines()
    partial.write_text("\n".join(lines[:3] + [lines[3][:40]]), encoding="utf-8")    # header, 2 items, a torn one
    before = len(stub_server.stats.requests)
    resumed = await _run("halueval", uncached, partial, 6, resume=True)
    assert len(stub_server.stats.requests) - before == 4 and resumed.resumed_items == 2
    assert not _differences(_comparable(resumed), _comparable(whole))
    assert len(_item_lines(partial)) == 6


async def test_unscored_items_are_counted_the_same_after_a_resume(stub_server, uncached, tmp_path):
    config = uncached.model_copy(update={"structured": "text"})
    stub_server.responder = lambda body: "I cannot decide."
    partial = tmp_path / "p.jsonl"
    whole = await _run("halueval", config, partial, 4)
    lines = partial.read_text(encoding="utf-8").splitlines()
    partial.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    resumed = await _run("halueval", config, partial, 4, resume=True)
    assert resumed.unscored_kinds == whole.unscored_kinds == {"parse_error": 4}
    assert not _differences(_comparable(resumed), _comparable(whole))


async def test_a_stopped_cs_zh_run_resumes_to_the_uninterrupted_result(stub_server, judge_config, tmp_path):
    config = judge_config.model_copy(update={"cache": False, "concurrency": 1})
    options = dict(n=6, n_boot=50, progress=False, few_shot="per_level")
    stub_server.responder = _score
    whole = await run_cs_benchmark_async(config, "holistic", partial=tmp_path / "whole.jsonl", **options)
    partial = tmp_path / "stopped.jsonl"
    await _stopped_after(2, stub_server, lambda: run_cs_benchmark_async(config, "holistic", partial=partial,
                                                                        **options), partial)
    assert len(_item_lines(partial)) == 2
    with pytest.raises(DatasetError, match="options: .*shuffle_levels"):
        await run_cs_benchmark_async(config, "holistic", partial=partial, resume=True, shuffle_levels=True, **options)
    before = len(stub_server.stats.requests)
    resumed = await run_cs_benchmark_async(config, "holistic", partial=partial, resume=True, **options)
    assert len(stub_server.stats.requests) - before == 6 - 2 and resumed.resumed_items == 2
    assert not _differences(_comparable(resumed), _comparable(whole))
    assert [r.id for r in read_partial(partial, CsRow)[1]] and resumed.usage.calls == whole.usage.calls == 6


def test_cli_resume_finishes_the_run_and_removes_the_partial(stub_server, tmp_path, capsys):
    from rubriceval.cli import build_parser, main
    from rubriceval.cli.options import judge_config_from

    stub_server.responder = _score
    out = tmp_path / "halu.json"
    partial = Path(f"{out}.partial.jsonl")
    args = ["benchmark-judge", "halueval", "--n", "4", "--judge-base-url", stub_server.base_url, "--judge-model",
            "stub", "--no-cache", "--out", str(out)]
    assert main(args) == 0 and not partial.exists()
    whole = json.loads(out.read_text(encoding="utf-8"))
    # A run of the same command stopped after two items (its partial file as the judge left it).
    config = judge_config_from(build_parser().parse_args(args))
    asyncio.run(run_benchmark_async("halueval", config, n=4, n_boot=0, progress=False, partial=partial))
    partial.write_text("\n".join(partial.read_text(encoding="utf-8").splitlines()[:3]) + "\n", encoding="utf-8")
    capsys.readouterr()

    assert main(args) == 2 and "pass --resume" in capsys.readouterr().err      # never overwritten silently
    before = len(stub_server.stats.requests)
    assert main(args + ["--resume"]) == 0
    assert len(stub_server.stats.requests) - before == 2 and not partial.exists()
    resumed = json.loads(out.read_text(encoding="utf-8"))
    assert resumed["resumed_items"] == 2 and "2 items from a stopped run" in capsys.readouterr().out
    assert not _differences(_comparable(resumed), _comparable(whole))


def test_cli_stopped_by_ctrl_c_says_how_to_resume(monkeypatch, tmp_path, capsys):
    import benchmarks.judge.judge as bench
    from rubriceval.cli import main

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "run_benchmark", stopped)
    out = tmp_path / "s.json"
    assert main(["benchmark-judge", "summeval", "--n", "3", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"kept in {out}.partial.jsonl" in err and "the same command with --resume" in err
