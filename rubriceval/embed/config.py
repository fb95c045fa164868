"""Embedder configuration: environment variables (RUBRICEVAL_EMBED_BASE_URL, RUBRICEVAL_EMBED_API_KEY,
RUBRICEVAL_EMBED_MODEL), then the `embedder:` section of the YAML config file, then explicit overrides.
No base URL → the embedded local embedder."""
from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from rubriceval.judge.config import read_config_file


class EmbedderConfig(BaseModel):
    base_url: str | None = None          # None → the embedded local embedder
    api_key: str | None = None
    model: str = "local"
    timeout_s: float = 60.0
    batch_size: int = 64
    concurrency: int = Field(default=16, ge=1, le=1024)   # requests in flight to a hosted embeddings endpoint


def load_embedder_config(path: str | Path | None = None, **overrides) -> EmbedderConfig:
    data: dict = {}
    env = os.environ
    if env.get("RUBRICEVAL_EMBED_BASE_URL"):
        data["base_url"] = env["RUBRICEVAL_EMBED_BASE_URL"]
        data["api_key"] = env.get("RUBRICEVAL_EMBED_API_KEY") or env.get("RUBRICEVAL_JUDGE_API_KEY")
    if env.get("RUBRICEVAL_EMBED_MODEL"):
        data["model"] = env["RUBRICEVAL_EMBED_MODEL"]
    if path:
        file_data = read_config_file(path)
        data.update(file_data.get("embedder", {}))
    data.update({k: v for k, v in overrides.items() if v is not None})
    return EmbedderConfig.model_validate(data)
