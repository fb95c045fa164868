"""collect: the example RAG target, a flaky loopback HTTP target, retries, timeouts and resuming."""
from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rubriceval import ConfigError, DatasetError
from rubriceval.collect import (
    CallableTarget,
    HttpTarget,
    OpenAIChatTarget,
    coerce_reply,
    collect,
    parse_target,
    read_partial_output,
)
from rubriceval.collect.targets import TargetContractError

REPO = Path(__file__).resolve().parents[2]


def write_questions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def output_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class LoopbackTarget:
    """An HTTP target on 127.0.0.1 whose behaviour depends on the question text:
    FAIL → always 500; FLAKY → 503 on the first attempt for an id, then fine; BADJSON → 200 with non-JSON;
    SLOW → sleeps longer than the test's timeout; anything else → an answer echoing the question.
    Records every id it is asked, so tests can count calls."""

    def __init__(self, delay_s: float = 0.0):
        self.calls: Counter = Counter()
        self.lock = threading.Lock()
        self.delay_s = delay_s
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/chat/completions"):     # a minimal OpenAI-compatible chat endpoint
                    question = body["messages"][-1]["content"]
                    with target.lock:
                        target.calls[question] += 1
                    completion = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": f"模型答：{question}"}}]}
                    return self._send(200, json.dumps(completion, ensure_ascii=False).encode("utf-8"))
                with target.lock:
                    target.calls[body["id"]] += 1
                    attempt = target.calls[body["id"]]
                question = body["question"]
                time.sleep(target.delay_s)
                if "FAIL" in question or ("FLAKY" in question and attempt == 1):
                    return self._send(500 if "FAIL" in question else 503, b'{"error": "boom"}')
                if "BADJSON" in question:
                    return self._send(200, b"<html>not json</html>")
                if "SLOW" in question:
                    time.sleep(1.0)
                reply = {"answer": f"答：{question}", "contexts": [f"上下文 {body['id']}"]}
                self._send(200, json.dumps(reply, ensure_ascii=False).encode("utf-8"))

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/chat"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> LoopbackTarget:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


async def test_collect_from_example_rag_target_in_extractive_mode(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(REPO)   # module targets import like `python -m`, from the current directory
    questions = write_questions(tmp_path / "q.jsonl", [
        {"id": "reimburse", "question": "报销的流程是什么？", "ground_truth": "填写报销单并由二级主管审批",
         "metadata": {"owner": "finance"}},
        {"id": "points", "question": "积分的有效期是多久？", "ground_truth": "12个月"},
        {"id": "weather", "question": "how is the weather on Mars", "ground_truth": ""},
    ])
    out = tmp_path / "answers.jsonl"
    summary = await collect(questions, "examples.rag_target.bot:answer_extractive", out, progress=False)

    assert (summary.total, summary.succeeded, summary.failed, summary.skipped) == (3, 3, 0, 0)
    rows = {r["id"]: r for r in output_rows(out)}
    assert list(rows) == ["reimburse", "points", "weather"]
    reimburse = rows["reimburse"]
    assert reimburse["ground_truth"] == "填写报销单并由二级主管审批"          # kept from the input
    assert reimburse["metadata"]["owner"] == "finance"                        # input metadata kept
    assert reimburse["metadata"]["error"] is None
    assert reimburse["metadata"]["target"] == "callable examples.rag_target.bot:answer_extractive"
    assert reimburse["metadata"]["latency_s"] >= 0
    assert any("报销" in c for c in reimburse["contexts"]) and "报销" in reimburse["answer"]
    assert "12个月" in rows["points"]["answer"]
    # Nothing in the policies matches: no contexts, and the bot says so instead of inventing an answer.
    assert rows["weather"]["contexts"] == [] and "没有找到" in rows["weather"]["answer"]


async def test_failed_calls_are_recorded_retried_and_classified(tmp_path: Path):
    questions = write_questions(tmp_path / "q.jsonl", [
        {"id": "ok", "question": "普通问题"},
        {"id": "flaky", "question": "FLAKY 问题"},
        {"id": "down", "question": "FAIL 问题", "ground_truth": "参考答案"},
        {"id": "garbage", "question": "BADJSON 问题"},
        {"id": "slow", "question": "SLOW 问题"},
    ])
    out = tmp_path / "answers.jsonl"
    with LoopbackTarget() as server:
        summary = await collect(questions, HttpTarget(url=server.url), out, concurrency=3, timeout_s=0.25,
                                retries=2, backoff_s=0.01, progress=False)

    rows = {r["id"]: r for r in output_rows(out)}
    assert len(rows) == 5 and len(output_rows(out)) == 5        # failed rows are kept, once each
    assert rows["flaky"]["metadata"]["error"] is None and rows["flaky"]["metadata"]["attempts"] == 2
    assert rows["flaky"]["contexts"] == ["上下文 flaky"]
    down = rows["down"]
    assert down["answer"] == "" and down["ground_truth"] == "参考答案"
    assert down["metadata"]["error"].startswith("HTTP 500") and "3 attempt" in down["metadata"]["error"]
    assert server.calls["down"] == 3                               # 1 call + 2 retries
    assert server.calls["garbage"] == 1                            # a contract error is not retried
    assert "not JSON" in rows["garbage"]["metadata"]["error"]
    assert "timed out after 0.25s" in rows["slow"]["metadata"]["error"]
    assert (summary.succeeded, summary.failed) == (2, 3)
    assert {e.id for e in summary.errors} == {"down", "garbage", "slow"}


async def test_resume_from_a_preseeded_partial_output(tmp_path: Path):
    """Done rows are skipped, a failed row is asked again and replaced, a torn last line is ignored."""
    questions = write_questions(tmp_path / "q.jsonl",
                                [{"id": f"q{i}", "question": f"问题 {i}", "ground_truth": f"答 {i}"} for i in range(6)])
    out = tmp_path / "answers.jsonl"
    done = {"question": "问题 0", "ground_truth": "答 0", "answer": "旧答案 0", "contexts": ["c"],
            "metadata": {"error": None, "latency_s": 0.1, "target": "earlier", "attempts": 1}}
    failed = {"question": "问题 2", "answer": "", "contexts": [],
              "metadata": {"error": "HTTP 500 (after 3 attempt(s))", "target": "earlier", "attempts": 3}}
    changed = {"question": "问题 3 的旧版本", "answer": "旧", "metadata": {"error": None}}
    foreign = {"question": "别的数据集", "answer": "x", "metadata": {"error": None}}
    out.write_text(
        json.dumps({"id": "q0", **done}, ensure_ascii=False) + "\n"
        + json.dumps({"id": "q1", **done, "question": "问题 1", "answer": "旧答案 1"}, ensure_ascii=False) + "\n"
        + json.dumps({"id": "q2", **failed}, ensure_ascii=False) + "\n"
        + json.dumps({"id": "q3", **changed}, ensure_ascii=False) + "\n"
        + json.dumps({"id": "other", **foreign}, ensure_ascii=False) + "\n"
        + '{"id": "q4", "question": "问题 4", "ans', encoding="utf-8")

    with LoopbackTarget() as server:
        summary = await collect(questions, server.url, out, progress=False, backoff_s=0.01)

    assert set(server.calls) == {"q2", "q3", "q4", "q5"}            # q0, q1 were done already
    assert (summary.skipped, summary.attempted, summary.failed, summary.foreign_rows) == (2, 4, 0, 1)
    rows = output_rows(out)
    assert [r["id"] for r in rows] == ["q0", "q1", "q2", "q3", "q4", "q5", "other"]   # input order, no duplicates
    by_id = {r["id"]: r for r in rows}
    assert by_id["q0"]["answer"] == "旧答案 0"                       # untouched
    assert by_id["q2"]["answer"] == "答：问题 2" and by_id["q2"]["metadata"]["error"] is None
    assert by_id["q3"]["question"] == "问题 3" and by_id["q3"]["answer"] == "答：问题 3"


async def test_interrupted_collection_keeps_saved_rows_and_resumes_without_duplicates(tmp_path: Path):
    questions = write_questions(tmp_path / "q.jsonl",
                                [{"id": f"q{i}", "question": f"问题 {i}"} for i in range(8)] +
                                [{"id": "bad", "question": "FAIL 问题"}])
    out = tmp_path / "answers.jsonl"
    with LoopbackTarget(delay_s=0.05) as server:
        task = asyncio.create_task(collect(questions, server.url, out, concurrency=1, retries=0, progress=False))
        while not out.exists() or len(out.read_text(encoding="utf-8").splitlines()) < 3:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.1)   # let the server count a request that was in flight when we cancelled
        saved = output_rows(out)
        saved_ids = [r["id"] for r in saved]
        assert len(saved) >= 3 and len(saved_ids) == len(set(saved_ids))
        assert all(r["metadata"]["error"] is None for r in saved)
        first_run_calls = Counter(server.calls)

        summary = await collect(questions, server.url, out, concurrency=2, retries=0, progress=False)

    resumed_calls = server.calls - first_run_calls
    assert set(resumed_calls) == {f"q{i}" for i in range(8)} - set(saved_ids) | {"bad"}
    assert all(count == 1 for count in resumed_calls.values())
    rows = output_rows(out)
    assert [r["id"] for r in rows] == [f"q{i}" for i in range(8)] + ["bad"]
    assert summary.skipped == len(saved) and summary.failed == 1
    assert rows[-1]["answer"] == "" and rows[-1]["metadata"]["error"].startswith("HTTP 500")

    # A third run only retries the failed row, and still leaves one line per id.
    with LoopbackTarget() as server:
        summary = await collect(questions, server.url, out, retries=0, progress=False)
    assert set(server.calls) == {"bad"} and summary.skipped == 8
    assert len(output_rows(out)) == 9


async def test_python_function_targets_sync_async_and_shapes(tmp_path: Path):
    questions = write_questions(tmp_path / "q.jsonl", [{"id": "a", "question": "一"}, {"id": "b", "question": "二"}])

    class Document:
        def __init__(self, text: str):
            self.page_content = text

    class Reply:
        def __init__(self, question: str):
            self.answer = f"async {question}"
            self.contexts = [Document("文档"), {"text": "片段"}]

    async def async_bot(question: str) -> Reply:
        await asyncio.sleep(0)
        return Reply(question)

    out = tmp_path / "async.jsonl"
    await collect(questions, async_bot, out, progress=False)
    assert [r["contexts"] for r in output_rows(out)] == [["文档", "片段"]] * 2
    assert output_rows(out)[0]["answer"] == "async 一"

    out = tmp_path / "sync.jsonl"
    await collect(questions, lambda q: f"sync {q}", out, progress=False)
    assert [(r["answer"], r["contexts"]) for r in output_rows(out)] == [("sync 一", []), ("sync 二", [])]

    out = tmp_path / "wrong.jsonl"
    summary = await collect(questions, lambda q: 42, out, progress=False, backoff_s=0.01)
    assert summary.failed == 2
    assert all(r["metadata"]["attempts"] == 1 and "expected a str" in r["metadata"]["error"]
               for r in output_rows(out))


async def test_openai_chat_target_answers_without_contexts(tmp_path: Path):
    questions = write_questions(tmp_path / "q.jsonl", [{"id": "a", "question": "报销找谁审批？"}])
    out = tmp_path / "chat.jsonl"
    with LoopbackTarget() as server:
        base_url = server.url.rsplit("/", 1)[0] + "/v1"
        summary = await collect(questions, f"openai:{base_url}#demo-model", out, progress=False)
    assert summary.succeeded == 1 and server.calls["报销找谁审批？"] == 1
    row = output_rows(out)[0]
    assert (row["answer"], row["contexts"]) == ("模型答：报销找谁审批？", [])
    assert row["metadata"]["target"] == f"openai-chat demo-model at {base_url}"


def test_coerce_reply_rejects_wrong_shapes():
    assert coerce_reply({"answer": "a"}).contexts == []
    with pytest.raises(TargetContractError, match="list"):
        coerce_reply({"answer": "a", "contexts": "one string"})
    with pytest.raises(TargetContractError, match="contexts\\[1\\]"):
        coerce_reply({"answer": "a", "contexts": ["ok", 3]})
    with pytest.raises(TargetContractError, match="'answer' must be a string"):
        coerce_reply({"answer": None})


def test_parse_target_forms(tmp_path: Path):
    assert parse_target("examples.rag_target.bot:answer") == CallableTarget(ref="examples.rag_target.bot:answer")
    assert parse_target("https://bot.example.com/ask") == HttpTarget(url="https://bot.example.com/ask")
    chat = parse_target("openai:http://127.0.0.1:8080/v1#qwen-plus")
    assert isinstance(chat, OpenAIChatTarget) and (chat.base_url, chat.model) == ("http://127.0.0.1:8080/v1",
                                                                                  "qwen-plus")
    config = tmp_path / "target.yaml"
    config.write_text("kind: http\nurl: http://127.0.0.1:9/x\nheaders: {Authorization: Bearer t}\n")
    assert parse_target(str(config)) == HttpTarget(url="http://127.0.0.1:9/x", headers={"Authorization": "Bearer t"})
    config.write_text("kind: ftp\n")
    with pytest.raises(ConfigError, match="target.yaml"):
        parse_target(str(config))
    with pytest.raises(ConfigError, match="cannot read target"):
        parse_target("not a target")


async def test_output_must_be_jsonl_and_unknown_modules_are_named(tmp_path: Path):
    questions = write_questions(tmp_path / "q.jsonl", [{"id": "a", "question": "一"}])
    with pytest.raises(DatasetError, match="JSONL"):
        await collect(questions, lambda q: "x", tmp_path / "out.csv", progress=False)
    with pytest.raises(ConfigError, match="no_such_module_xyz"):
        await collect(questions, "no_such_module_xyz:answer", tmp_path / "out.jsonl", progress=False)


def test_read_partial_output_rejects_a_foreign_file(tmp_path: Path):
    path = tmp_path / "answers.jsonl"
    path.write_text('not json\n{"id": "a", "question": "q"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="cannot resume"):
        read_partial_output(path)
