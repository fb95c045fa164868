"""Ingest benchmark (issue 26.1): production exports of N conversations read by the dataset reader, in bounded
memory. A flat chat-log export (CSV, 10 messages per conversation, rows in time order so every open conversation
interleaves, read with the export's zone) and an OTLP/JSON GenAI trace file (one trace per exchange, 5 exchanges,
each chat span repeating the history, 200 spans a line). Each read is its own process (benchmarks/pipeline/scale_bench.measure:
wall, CPU, peak RSS from wait4), iterating `rubriceval.data.io.iter_samples` as a run does.

    nice python benchmarks/pipeline/ingest_bench.py --conversations 100000     # 1,000,000 chat-log messages
    nice python benchmarks/pipeline/ingest_bench.py --conversations 20000 --only otel

Results: <out>/ingest-results-<n>.json and a Markdown table on stdout. Not a timed test.
"""
from __future__ import annotations

import argparse
import csv
import heapq
import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.pipeline.machine import Machine, describe  # noqa: E402
from benchmarks.pipeline.scale_bench import Step, measure  # noqa: E402

START = datetime(2026, 11, 9, 9, 0, 0)          # local time of the export (Asia/Shanghai)
HEADER = ["会话ID", "发送时间", "发言人", "内容", "客服工号", "客服姓名", "技能组", "渠道", "机器人版本", "客户ID", "满意度"]
READ = """
import sys, time
from rubriceval.data.chatlog import ChatLogConfig, parse_speaker_map
from rubriceval.data.io import iter_samples
chatlog = (ChatLogConfig(timezone="Asia/Shanghai", speakers=parse_speaker_map("客服=assistant,用户=user"))
           if sys.argv[1].endswith(".csv") else None)
started, n, messages = time.perf_counter(), 0, 0
for sample in iter_samples(sys.argv[1], chatlog=chatlog, check_duplicates=False):
    n += 1
    messages += len(sample.conversation.turns)
print(f"{n} conversations, {messages} messages in {time.perf_counter() - started:.1f} s")
"""


class Result(BaseModel):
    conversations: int
    chatlog_mb: float = 0.0
    otel_mb: float = 0.0
    steps: list[Step] = []
    machine: Machine


def write_chatlog(path: Path, n: int) -> None:
    """N conversations x 10 messages, a new one every 12 s, messages 20 s apart: rows written in time order."""
    pending: list[tuple[datetime, int, int]] = []
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)

        def emit(moment: datetime, c: int, m: int) -> None:
            agent = f"A-{c % 40:02d}"
            writer.writerow([f"c-{c:06d}", moment.strftime("%Y-%m-%d %H:%M:%S"), "用户" if m % 2 == 0 else "客服",
                             f"我的快递还没到，订单号 A{c:06d}" if m % 2 == 0 else "非常抱歉，请问还有其他需要吗？",
                             agent, "客服" + agent, ("售后组", "退款组", "物流组", "投诉组")[c % 4], "app",
                             "2026.11.2", f"cust-{c % 9000}", ""])
        for c in range(n):
            for m in range(10):
                heapq.heappush(pending, (START + timedelta(seconds=12 * c + 20 * m), c, m))
            while pending and pending[0][0] < START + timedelta(seconds=12 * c):
                emit(*heapq.heappop(pending))
        while pending:
            emit(*heapq.heappop(pending))


def write_otel(path: Path, n: int) -> None:
    """Written in time order as it is generated (only the open conversations' histories held): this process stays
    small, because a child's peak RSS from wait4 includes the parent's RSS when it was spawned."""
    def attr(key: str, value) -> dict:
        return {"key": key, "value": {"stringValue": value} if isinstance(value, str) else {"intValue": str(value)}}

    t0, second = 1763254800_000000000, 1_000_000_000
    pending: list[tuple[int, int, int]] = []
    histories: dict[int, list[dict]] = {}
    batch: list[dict] = []

    def flush(fh) -> None:
        request = {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "cs-bot")]},
                                      "scopeSpans": [{"scope": {"name": "bench"}, "spans": batch}]}]}
        fh.write(json.dumps(request, ensure_ascii=False) + "\n")
        batch.clear()

    def emit(t: int, c: int, e: int, fh) -> None:
        history = histories.setdefault(c, [])
        user = {"role": "user", "parts": [{"type": "text", "content": f"第{e}个问题，订单 A{c:06d} 怎么还没到？"}]}
        bot = {"role": "assistant", "parts": [{"type": "text", "content": "非常抱歉，正在为您查询，还有其他需要吗？"}]}
        batch.append({"traceId": f"{c:016x}{e:016x}", "spanId": f"{c:08x}{e:08x}", "name": "chat qwen", "kind": 3,
                      "startTimeUnixNano": str(t), "endTimeUnixNano": str(t + second),
                      "attributes": [attr("gen_ai.conversation.id", f"conv-{c}"), attr("gen_ai.operation.name", "chat"),
                                     attr("gen_ai.agent.id", f"A-{c % 40:02d}"),
                                     attr("gen_ai.input.messages", json.dumps(history + [user], ensure_ascii=False)),
                                     attr("gen_ai.output.messages", json.dumps([bot], ensure_ascii=False)),
                                     attr("gen_ai.usage.input_tokens", 40 + 20 * e)]})
        history += [user, bot]
        if e == 4:
            del histories[c]
        if len(batch) == 200:
            flush(fh)

    with path.open("w", encoding="utf-8") as fh:
        for c in range(n):
            for e in range(5):
                heapq.heappush(pending, (t0 + (c * 7 + e * 60) * second, c, e))
            while pending and pending[0][0] < t0 + c * 7 * second:
                emit(*heapq.heappop(pending), fh)
        while pending:
            emit(*heapq.heappop(pending), fh)
        if batch:
            flush(fh)


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--only", choices=("chatlog", "otel"))
    parser.add_argument("--out", default="out/bench-ingest")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    n, log = args.conversations, out / "ingest.log"
    result = Result(conversations=n, machine=describe())
    for kind, write, suffix in (("chatlog", write_chatlog, "csv"), ("otel", write_otel, "jsonl")):
        if args.only and args.only != kind:
            continue
        data = out / f"{kind}-{n}.{suffix}"
        if not data.exists():
            write(data, n)
        setattr(result, f"{kind}_mb", round(data.stat().st_size / 1e6, 1))
        result.steps.append(measure(f"read {kind}", [sys.executable, "-c", READ, str(data)], log))
    (out / f"ingest-results-{n}.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
    print(table(result))
    return result


def table(result: Result) -> str:
    lines = [f"{result.conversations:,} conversations; chat log {result.chatlog_mb} MB, OTLP {result.otel_mb} MB",
             "", "| step | wall s | CPU s | peak RSS MB | load |", "|---|---|---|---|---|"]
    lines += [f"| {s.step} | {s.wall_s} | {s.cpu_s} | {s.peak_rss_mb} | {s.load_average[0]:.1f} |"
              for s in result.steps]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
