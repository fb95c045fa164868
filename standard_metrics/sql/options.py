"""The NL2SQL metrics' knobs (`MetricOptions.sql`), validated once at the boundary."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DatacompyMode = Literal["rows", "columns"]
DatacompyMetric = Literal["precision", "recall", "f1"]


class SqlOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The SQLite file every sample runs against; a sample's own `database` field (metadata) takes precedence.
    # A relative path is read from the current working directory.
    database: str | None = None
    # Per query: a statement still running after timeout_s is interrupted (unscored "timeout"); a result with
    # more than row_cap rows is not compared (unscored) — a runaway SELECT must not fill memory.
    timeout_s: float = Field(default=5.0, gt=0, le=600)
    row_cap: int = Field(default=10_000, ge=1, le=10_000_000)
    # datacompy_score, as Ragas's DataCompyScore: compare result rows or result columns, report precision,
    # recall or F1.
    mode: DatacompyMode = "rows"
    metric: DatacompyMetric = "f1"
