"""One sample's verdicts as a test case (`EvaluationResult.cases()`, `rubriceval.testing.assert_case`): passed when
every verdict meets its scorer's threshold; an unscored verdict fails the case (it was not shown to pass)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.i18n import Lang, evidence_text
from rubriceval.standard_metrics.thresholds import metric_threshold

_SHOWN_TEXT = 300     # characters of question/answer/feedback in a failure message


def scorer_thresholds(scorers: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Each stored scorer's pass threshold: a rubric's YAML threshold, a metric's run/default threshold."""
    out: dict[str, float] = {}
    for row in scorers:
        definition = row.get("definition") or {}
        if row.get("kind") == "metric":
            out[row["scorer"]] = metric_threshold(row["scorer"], definition, None)[0]
        elif definition.get("threshold") is not None:
            out[row["scorer"]] = float(definition["threshold"])
    return out


class CaseResult(BaseModel):
    sample: Sample
    verdicts: list[Verdict]
    thresholds: dict[str, float] = {}

    def __str__(self) -> str:           # pytest's parametrize id
        return self.sample.id

    def verdict_passed(self, verdict: Verdict) -> bool:
        if verdict.score is None:
            return False
        if verdict.passed is not None:
            return verdict.passed
        threshold = self.thresholds.get(verdict.scorer)
        return True if threshold is None else verdict.score >= threshold

    @property
    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if not self.verdict_passed(v)]

    @property
    def passed(self) -> bool:
        return bool(self.verdicts) and not self.failures

    def failure_message(self, lang: Lang = "en") -> str:
        """Why the case failed: per failing scorer its score against the threshold (or the unscored reason), the
        judge's feedback and the evidence of each item, then the sample's question and answer."""
        if not self.verdicts:
            return f"case {self.sample.id}: no rubric or metric applies to this sample"
        failures = self.failures
        lines = [f"case {self.sample.id} failed {len(failures)} of {len(self.verdicts)} scorer(s):"]
        for v in failures:
            if v.score is None:
                lines.append(f"  ✗ {v.scorer}: unscored ({v.unscored_kind}): {v.unscored_reason}")
            else:
                threshold = self.thresholds.get(v.scorer)
                lines.append(f"  ✗ {v.scorer}: {v.score:g}" + (f" < threshold {threshold:g}" if threshold is not None
                                                                else " did not pass"))
            if v.feedback:
                lines.append(f"      feedback: {_cut(v.feedback)}")
            for e in v.evidence:
                mark = "✓" if e.passed else "✗" if e.passed is False else "·"
                lines.append(f"      {mark} {e.item}: {_cut(evidence_text(e, lang))}")
        lines.append(f"  question: {_cut(self.sample.question)}")
        lines.append(f"  answer: {_cut(self.sample.answer)}")
        return "\n".join(lines)


def _cut(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _SHOWN_TEXT else text[:_SHOWN_TEXT] + "…"
