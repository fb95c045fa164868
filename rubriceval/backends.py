"""Build the judge and embedder clients from configuration; start the embedded local ones when none is configured."""
from __future__ import annotations

import sys

from rubriceval.judge.client import JudgeClient
from rubriceval.judge.config import EmbedderConfig, JudgeConfig


def make_judge(config: JudgeConfig, *, announce: bool = True) -> JudgeClient:
    base_url = config.base_url
    if config.is_local:
        from rubriceval.local.judge_server import ensure_local_judge

        base_url = ensure_local_judge()
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
