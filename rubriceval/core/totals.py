"""What a run did, counted: judgments planned, done, skipped on resume, scored, unscored by kind, wall time, judge usage."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunTotals:
    units_total: int = 0
    units_done: int = 0
    units_skipped: int = 0          # already in the store (resume)
    scored: int = 0
    unscored: int = 0
    unscored_by_kind: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    judge: dict[str, Any] = field(default_factory=dict)
    embedding_calls: int = 0
    # the scorecard stage's counts (run/scorecard_stage.ScorecardTotals.as_dict), set only when the run had cards
    scorecards: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        # a run without cards stores no `scorecards` key, as before the field was declared
        return {key: value for key, value in self.__dict__.items() if not (key == "scorecards" and value is None)}

    def count(self, scored: bool, unscored_kind: str | None = None) -> None:
        """One more judgment done: scored, or unscored of this kind (counted, never averaged)."""
        self.units_done += 1
        if scored:
            self.scored += 1
        else:
            self.unscored += 1
            kind = unscored_kind or "error"
            self.unscored_by_kind[kind] = self.unscored_by_kind.get(kind, 0) + 1
