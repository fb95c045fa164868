"""What a judge benchmark saves: each item's judge and human scores, and the agreement figures over them."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Usage
from rubriceval.rubric.schema import FewShot, JudgeMode
from rubriceval.stats.agreement import (
    AgreementReport,
    BinaryAgreementReport,
    Estimate,
)

BenchmarkKind = Literal["summeval", "halueval"]


class BenchmarkItem(BaseModel):
    id: str
    judge_score: float | None
    unscored_reason: str | None = None
    unscored_kind: str | None = None   # why unscored, counted in the result's unscored_kinds (None when scored)
    human: float | str                 # SummEval: the experts' consensus; HaluEval: 'yes'/'no' (hallucination)
    human_detail: list[int] = Field(default_factory=list)   # SummEval: the three experts' scores
    feedback: str = ""
    p_yes: dict[str, float] = Field(default_factory=dict)     # checklist modes: p(yes) per question
    rule_score: float | None = None          # checklist_fitted: what the declared level rule gave this item
    score_probs: dict | None = None          # holistic with logprobs: P(level), expected score, tie (score_probs.py)
    usage: Usage | None = None               # this item's judge calls and tokens


class BenchmarkResult(BaseModel):
    kind: BenchmarkKind
    judge_mode: JudgeMode | None = None      # None: the rubric's own
    few_shot: FewShot | None = None
    rubric_id: str
    rubric_version_tag: str
    judge: str
    n_items: int
    n_scored: int
    unscored_kinds: dict[str, int] = Field(default_factory=dict)
    elapsed_s: float
    seconds_per_item: float
    usage: Usage = Field(default_factory=Usage)          # judge calls and tokens, summed over the items
    resumed_items: int = 0                   # items kept from a stopped run's partial file (--resume)
    ordinal: AgreementReport | None = None              # SummEval: judge vs the experts' consensus
    spearman_vs_mean: Estimate | None = None            # SummEval: judge vs the experts' mean score
    expert_alpha: Estimate | None = None                # SummEval: the experts among themselves (the ceiling)
    binary: BinaryAgreementReport | None = None         # HaluEval: hallucination yes/no
    judge_score_by_human: dict[str, dict[str, int]] = Field(default_factory=dict)
    rule: dict = Field(default_factory=dict)     # checklist_fitted: the declared rule's statistics, same items
    items: list[BenchmarkItem]
    command: str = ""

    def summary(self) -> str:
        lines = [f"{self.kind}: {self.rubric_id} {self.rubric_version_tag}, judge {self.judge}",
                 f"  {self.n_items} items, {self.n_scored} scored"
                 + (f", unscored: {dict(self.unscored_kinds)}" if self.unscored_kinds else "")
                 + f"; {self.elapsed_s:.0f} s ({self.seconds_per_item:.1f} s/item)"
                 + (f"; {self.resumed_items} items from a stopped run (--resume)" if self.resumed_items else ""),
                 f"  judge mode {self.judge_mode or 'of the rubric'}"
                 + (f", few_shot={self.few_shot}" if self.few_shot else "")
                 + f"; {self.usage.calls} calls, {self.usage.cache_hits} cache hits, {self.usage.prompt_tokens} prompt "
                   f"tokens ({self.usage.cached_prompt_tokens} from the server's prefix cache), "
                   f"{self.usage.completion_tokens} completion tokens"]
        if self.ordinal is not None:
            o = self.ordinal
            lines.append(f"  vs expert consensus: κ(quadratic) {o.kappa_quadratic.format()}, exact "
                         f"{o.exact.format()}, within ±1 {o.within_one.format()}, Spearman {o.spearman.format()}, "
                         f"mean judge−human {o.mean_difference.format()}")
        if self.spearman_vs_mean is not None:
            lines.append(f"  Spearman vs expert mean: {self.spearman_vs_mean.format()}")
        if self.expert_alpha is not None:
            lines.append(f"  experts among themselves: Krippendorff α (ordinal) {self.expert_alpha.format()}")
        if self.binary is not None:
            b = self.binary
            lines.append(f"  hallucination yes/no: accuracy {b.accuracy.format()}, precision {b.precision.format()}, "
                         f"recall {b.recall.format()}, F1 {b.f1.format()}, κ {b.kappa.format()}")
        rule_ordinal, rule_binary = self.rule.get("ordinal"), self.rule.get("binary")
        if rule_ordinal is not None:
            lines.append(f"  declared rule on the same items: κ(quadratic) {rule_ordinal.kappa_quadratic.format()}")
        if rule_binary is not None:
            lines.append(f"  declared rule on the same items: accuracy {rule_binary.accuracy.format()}, "
                         f"κ {rule_binary.kappa.format()}")
        for human, counts in self.judge_score_by_human.items():
            shown = ", ".join(f"{score}: {count}" for score, count in counts.items())
            lines.append(f"  judge scores when human = {human}: {shown}")
        return "\n".join(lines)
