"""Production-QA benchmark (issue 26): a folder of daily exports of N conversations (10 messages each: 1,000,000
messages at the default 100,000), ingested and judged checks-only by `rubriceval increment`; then a new day with
1 % more conversations (the second increment's cost), a re-run that finds nothing, and `report --by agent_id,week`
of the first increment. Each step is its own process: wall time and peak RSS (largest process, and the process tree
sampled every 0.5 s) as in benchmarks/pipeline/scale_bench.py.

    nice python benchmarks/pipeline/qa_increment_bench.py                       # 100,000 conversations
    nice python benchmarks/pipeline/qa_increment_bench.py --conversations 5000  # a quick look

Results: <out>/qa-results-<n>.json and a Markdown table on stdout. Not a timed test.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.pipeline.machine import Machine, describe  # noqa: E402
from benchmarks.pipeline.scale_bench import Step, measure  # noqa: E402

RUBRICS = ROOT / "benchmarks" / "pipeline" / "qa_rubrics"
DAYS = 10
START = datetime(2026, 11, 9, 1, tzinfo=timezone.utc)            # a Monday: days 1-7 in W46, 8-10 in W47
AGENTS, GROUPS = 200, ("售前", "售后", "物流", "退款", "会员")
USER = ("我的订单{n}还没到，怎么回事？", "能不能快点发货？", "物流一直没有更新", "我要退款", "好的谢谢")
BOT = ("非常抱歉让您久等了，订单{n}正在派送中。", "抱歉，仓库正在加急处理。", "对不起，物流信息稍有延迟，预计明天送达。",
       "抱歉给您带来不便，退款将在3个工作日内原路退回。", "再次抱歉，感谢您的耐心，祝您生活愉快！")


class Result(BaseModel):
    conversations: int
    messages: int
    new_conversations: int
    data_mb: float
    steps: list[Step] = []
    machine: Machine


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def conversation(n: int, start: datetime, rng: random.Random) -> dict:
    messages = []
    bad = rng.random() < 0.08                                       # no apology in 8 %
    for turn in range(5):
        at = start + timedelta(seconds=60 * turn)
        messages.append({"role": "user", "content": USER[turn].format(n=n), "timestamp": _iso(at)})
        reply = BOT[turn].format(n=n)
        if bad:
            reply = reply.replace("非常抱歉", "您好").replace("抱歉", "您好").replace("对不起", "您好")
        messages.append({"role": "assistant", "content": reply, "timestamp": _iso(at + timedelta(seconds=20))})
    agent = rng.randrange(AGENTS)
    return {"id": f"conv-{n:07d}", "messages": messages,
            "metadata": {"agent_id": f"agent-{agent:03d}", "skill_group": GROUPS[agent % len(GROUPS)],
                         "started_at": messages[0]["timestamp"], "ended_at": messages[-1]["timestamp"]}}


def write_day(path: Path, first: int, count: int, day: int) -> None:
    if path.exists() and sum(1 for _ in path.open("rb")) == count:
        return
    rng = random.Random(day)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for i in range(count):
            start = START + timedelta(days=day, seconds=int(i * 86000 / max(1, count)))
            fh.write(json.dumps(conversation(first + i, start, rng), ensure_ascii=False) + "\n")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--out", default="out/bench-qa")
    args = parser.parse_args(argv)
    out = (ROOT / args.out).resolve()
    n = args.conversations
    data = out / f"exports-{n}"
    data.mkdir(parents=True, exist_ok=True)
    extra = data / f"day-{DAYS + 1:02d}.jsonl"
    extra.unlink(missing_ok=True)
    per_day = n // DAYS
    for day in range(DAYS):
        write_day(data / f"day-{day + 1:02d}.jsonl", day * per_day, per_day, day)
    store, log = out / f"qa-{n}.sqlite", out / f"qa-log-{n}.txt"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    cli = [sys.executable, "-m", "rubriceval.cli"]
    now = _iso(START + timedelta(days=DAYS + 2))
    increment = [*cli, "increment", str(data), "--rubrics", str(RUBRICS), "--store", str(store), "--now", now,
                 "--quiet"]
    result = Result(conversations=per_day * DAYS, messages=per_day * DAYS * 10, new_conversations=max(1, n // 100),
                    data_mb=0.0, machine=describe())
    result.steps.append(measure("increment 1 (ingest + judge all)", [*increment, "--name", "day-10"], log))
    write_day(extra, DAYS * per_day, result.new_conversations, DAYS)
    result.data_mb = round(sum(p.stat().st_size for p in data.iterdir()) / 2**20, 1)
    result.steps.append(measure("increment 2 (1 % new)", [*increment, "--name", "day-11"], log))
    result.steps.append(measure("increment 3 (nothing new)", increment, log))
    result.steps.append(measure("report --by agent_id,week", [*cli, "report", "day-10", "--store", str(store),
                                                              "--by", "agent_id,week", "--tz", "Asia/Shanghai",
                                                              "--out", str(out / f"qa-report-{n}")], log))
    (out / f"qa-results-{n}.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
    print(f"| step ({result.conversations:,} conversations, {result.messages:,} messages, {result.data_mb} MB) "
          "| wall s | CPU s | peak RSS MB (largest) | peak RSS MB (tree) | exit |")
    print("|---|---|---|---|---|---|")
    for s in result.steps:
        print(f"| {s.step} | {s.wall_s} | {s.cpu_s} | {s.peak_rss_mb} | {s.peak_tree_rss_mb} | {s.exit_code} |")
    print(f"log: {log}")
    return result


if __name__ == "__main__":
    main()
