"""Which model file the embedded judge runs, as the judge layer names it (cache keys, reports). The local/ package
assembles and serves that file; the facts live here so the judge layer never imports the backend above it."""
from __future__ import annotations

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


def embedded_judge_identity() -> str:
    """The embedded judge as a judge-cache endpoint: its verified model file, never its port (new every start)."""
    return f"embedded:{MODEL_FILENAME}@{MODEL_SHA256[:16]}"
