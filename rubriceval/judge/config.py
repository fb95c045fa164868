"""Judge configuration: environment variables, then an optional YAML file, then CLI flags.

Environment: RUBRICEVAL_JUDGE_BASE_URL, RUBRICEVAL_JUDGE_API_KEY (or OPENAI_API_KEY / DASHSCOPE_API_KEY),
RUBRICEVAL_JUDGE_MODEL, RUBRICEVAL_JUDGE_CONCURRENCY, RUBRICEVAL_JUDGE_TIMEOUT, RUBRICEVAL_JUDGE_STRUCTURED.
No base URL → the embedded local judge. The same YAML file's `embedder:` section is read by rubriceval/embed/config.py.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError

from rubriceval.common.errors import ConfigError

# USD per 1M tokens (input, output). Unknown models cost 0 and say so in reports.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "qwen-max": (1.6, 6.4),
    "qwen-plus": (0.4, 1.2),
    "qwen-turbo": (0.05, 0.2),
    "deepseek-chat": (0.27, 1.1),
    "local": (0.0, 0.0),
}
# Batch API prices (`rubriceval run --batch`), USD per 1M tokens, where the provider publishes them (OpenAI and
# DashScope: half the online price); any other model: its online price × `batch_discount`.
BATCH_PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o": (1.25, 5.0),
    "gpt-4o-mini": (0.075, 0.3),
    "gpt-4.1": (1.0, 4.0),
    "gpt-4.1-mini": (0.2, 0.8),
    "qwen-max": (0.8, 3.2),
    "qwen-plus": (0.2, 0.6),
    "qwen-turbo": (0.025, 0.1),
    "local": (0.0, 0.0),
}


class JudgeConfig(BaseModel):
    base_url: str | None = None          # None → start the embedded local judge
    api_key: str | None = None
    model: str = "local"
    temperature: float = 0.0
    max_tokens: int = 512
    # Prompts estimated above this are not sent (unscored "input_too_long"), instead of failing at the provider.
    max_input_tokens: int = Field(default=24000, gt=0)
    concurrency: int = Field(default=8, ge=1, le=1024)
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=20)
    # json_schema: response_format with a JSON schema; grammar: llama.cpp GBNF; text: "Feedback … [RESULT] N".
    structured: Literal["json_schema", "text"] = "json_schema"
    # How a constrained answer (a checklist question's yes/no) is enforced: a JSON-schema enum (OpenAI, vLLM),
    # a GBNF grammar (llama.cpp: one token, its logprobs are the answer's), or only by the prompt.
    choice_constraint: Literal["json_schema", "grammar", "none"] = "json_schema"
    # Which judge scores a rubric: holistic (one 1–5 judgment), checklist (yes/no questions + the rubric's level
    # rule), checklist_fitted (+ weights fitted to audits). None: each rubric's own `judge_mode`.
    judge_mode: Literal["holistic", "checklist", "checklist_fitted", "predicates"] | None = None
    # Holistic judgments: ask for the score token's logprobs (P(level) for 1–5, the tie flag; see
    # rubriceval/scoring/score_probs.py). None: on for the embedded judge, off for hosted ones (some reject it).
    score_logprobs: bool | None = None
    # Mask personal data (phones, 身份证, bank cards, e-mail, street addresses) with typed placeholders before any
    # judge or embedder sees a sample; the mapping stays in the local run store (rubriceval/safety/redaction.py).
    redact: bool = False
    seed: int | None = 0
    # Cap on the feedback the judge may write (JSON-schema maxLength); None = no cap. Small local models on CPU
    # spend most of a judgment writing feedback, so the embedded judge uses a cap (see backends.effective_config).
    feedback_max_chars: int | None = Field(default=None, ge=20)
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None
    cache_path: str | None = None         # None → ~/.cache/rubriceval/judge_cache.sqlite
    cache: bool = True
    # Self-consistency: judge each rubric n times (distinct seeds, sampling at this temperature) and keep the
    # median with its spread; the spread orders the audit queue ("most uncertain first"). n = 1: judged once.
    self_consistency: int = Field(default=1, ge=1, le=20)
    self_consistency_temperature: float = Field(default=0.7, gt=0, le=2)
    # Batch API (`rubriceval run --batch`, `rubriceval batch status|collect`): files of requests answered within
    # the completion window at the batch price; split at the provider's limits.
    batch: bool = False
    batch_discount: float = Field(default=0.5, gt=0, le=1)   # batch price = online × this, when none is known
    price_in_per_mtok_batch: float | None = None
    price_out_per_mtok_batch: float | None = None
    batch_max_requests: int = Field(default=50_000, ge=1)           # per file (OpenAI: 50,000)
    batch_max_bytes: int = Field(default=100_000_000, ge=1024)   # per file (OpenAI: 100 MB; decimal, to be safe)
    batch_completion_window: str = "24h"

    @property
    def is_local(self) -> bool:
        return self.base_url is None

    def prices(self) -> tuple[float, float]:
        if self.price_in_per_mtok is not None and self.price_out_per_mtok is not None:
            return self.price_in_per_mtok, self.price_out_per_mtok
        return PRICES_PER_MTOK.get(self.model, (0.0, 0.0))

    def batch_prices(self) -> tuple[float, float]:
        """USD per 1M tokens (input, output) through the Batch API: the configured batch prices, else the
        provider's published ones, else the online prices × batch_discount."""
        if self.price_in_per_mtok_batch is not None and self.price_out_per_mtok_batch is not None:
            return self.price_in_per_mtok_batch, self.price_out_per_mtok_batch
        explicit_online = self.price_in_per_mtok is not None and self.price_out_per_mtok is not None
        if not explicit_online and self.model in BATCH_PRICES_PER_MTOK:
            return BATCH_PRICES_PER_MTOK[self.model]
        price_in, price_out = self.prices()
        return price_in * self.batch_discount, price_out * self.batch_discount

    @property
    def model_named(self) -> bool:
        """False when an external judge was configured without a model (the 'local' default was left in place)."""
        return self.is_local or self.model != "local"

    def short_name(self) -> str:
        if self.is_local:
            return "embedded local judge (Qwen2.5-Coder-1.5B)"
        return f"{self.model} at {self.base_url}" if self.model_named else f"{self.base_url} (model not set)"

    def describe(self) -> str:
        if self.is_local:
            return (f"{self.short_name()} — for offline runs and tests, not for trusted grading; set "
                    "RUBRICEVAL_JUDGE_BASE_URL for a real judge")
        if not self.model_named:
            return f"{self.short_name()}: set RUBRICEVAL_JUDGE_MODEL or judge.model in the config"
        return self.short_name()


def default_cache_dir() -> Path:
    root = os.environ.get("RUBRICEVAL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "rubriceval")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_judge_config(path: str | Path | None = None, **overrides) -> JudgeConfig:
    data: dict = {}
    env = os.environ
    if env.get("RUBRICEVAL_JUDGE_BASE_URL"):
        data["base_url"] = env["RUBRICEVAL_JUDGE_BASE_URL"]
    key = env.get("RUBRICEVAL_JUDGE_API_KEY") or env.get("OPENAI_API_KEY") or env.get("DASHSCOPE_API_KEY")
    if key:
        data["api_key"] = key
    for name, field in (("MODEL", "model"), ("CONCURRENCY", "concurrency"), ("TIMEOUT", "timeout_s"),
                        ("STRUCTURED", "structured"), ("MAX_TOKENS", "max_tokens")):
        if env.get(f"RUBRICEVAL_JUDGE_{name}"):
            data[field] = env[f"RUBRICEVAL_JUDGE_{name}"]
    if path:
        file_data = read_config_file(path)
        data.update(file_data.get("judge", file_data))
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return JudgeConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(err["msg"], file=str(path) if path else "environment",
                          field=".".join(map(str, err["loc"]))) from None


def read_config_file(path: str | Path) -> dict:
    """The YAML config file (judge:/embedder: sections) as a dict; a missing file or bad YAML is a ConfigError."""
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError("config file not found", file=str(path)) from None
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise ConfigError(f"invalid YAML: {exc}", file=str(path), line=None if line is None else line + 1) from None
