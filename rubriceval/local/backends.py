"""Build the judge and embedder clients from configuration; start the embedded local ones when none is configured."""
from __future__ import annotations

import sys
from collections.abc import Callable

from rubriceval.embed.config import EmbedderConfig
from rubriceval.judge.client import JudgeClient
from rubriceval.judge.config import JudgeConfig

LOCAL_FEEDBACK_MAX_CHARS = 300


def effective_config(config: JudgeConfig) -> JudgeConfig:
    """The configuration actually used. For the embedded judge: no more requests in flight than the server has
    slots (extra ones only queue inside llama.cpp and run into the timeout), a generous per-call timeout (a long
    prompt can take minutes on 2 cores), and a cap on feedback length (writing feedback dominates a judgment)."""
    if not config.is_local:
        return config
    from rubriceval.local.judge_server import LocalJudgeSettings

    slots = LocalJudgeSettings().n_parallel
    return config.model_copy(update={
        "concurrency": min(config.concurrency, slots), "timeout_s": max(config.timeout_s, 900.0),
        "feedback_max_chars": config.feedback_max_chars or LOCAL_FEEDBACK_MAX_CHARS,
        # llama.cpp: a yes/no answer is one grammar-constrained token, whose logprobs give p(yes) directly.
        "choice_constraint": "grammar"})


def make_judge(config: JudgeConfig, *, announce: bool = True) -> JudgeClient:
    base_url: str | Callable[[], str] | None = config.base_url
    if config.is_local:
        from rubriceval.local.judge_server import ensure_local_judge

        base_url = ensure_local_judge          # started on the first uncached call: a warm rerun loads no model
        config = effective_config(config)
    if announce:
        print(f"judge: {config.describe()}", file=sys.stderr)
    return JudgeClient(config, base_url=base_url)


def make_embedder(config: EmbedderConfig, *, announce: bool = True):
    from rubriceval.embed.client import EmbeddingClient

    if config.base_url is None:
        from rubriceval.local.embedder import ensure_local_embedder

        client = ensure_local_embedder(config)
        if announce:
            print("embedder: embedded local model (offline default)", file=sys.stderr)
        return client
    if announce:
        print(f"embedder: {config.model} at {config.base_url}", file=sys.stderr)
    return EmbeddingClient(config, concurrency=config.concurrency)


def public_judge_config(config: JudgeConfig) -> dict:
    """What is stored with a run: everything but secrets."""
    return config.model_dump(exclude={"api_key"})
