"""What a rubric does with an answer that addresses the judge: cap the score (default, at 1), flag it for audit, or
nothing. The verdict stays a scored verdict (or unscored for its own reason): suspected manipulation is a failed
check with the quoted span as evidence and a flag in `details`, which reports count."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Evidence, Verdict
from rubriceval.i18n import MESSAGES, Message, msg
from rubriceval.safety.manipulation import ManipulationFinding, scan_fields

CHECK_ID = "suspected_manipulation"
DETAILS_KEY = "suspected_manipulation"
# Findings the policy masks for the judge instead of capping (safety/masking.py): self-praise and odd-token suffixes
MASKED_KINDS = frozenset({"self_praise", "odd_tokens"})


ScannedField = Literal["answer", "contexts", "question", "ground_truth"]


def _answer_only() -> list[ScannedField]:
    return ["answer"]


class ManipulationPolicy(BaseModel):
    """Rubric YAML: `manipulation: {action: cap, cap_score: 1, fields: [answer]}`."""

    action: Literal["cap", "audit", "off"] = "cap"
    cap_score: int = Field(default=1, ge=1, le=5)
    # Which sample fields are scanned. Contexts come from the knowledge base, not the bot's answer: add them to
    # treat an injected document as the answer's defect too.
    fields: list[ScannedField] = Field(default_factory=_answer_only)
    # Opt-in model screens, asked when the patterns find nothing (issue 31): `llm_screen` one yes/no judge call
    # per field text (scoring/llm_screen.py), `perplexity` the embedded model's odd-token spans (safety/perplexity.py)
    screens: list[Literal["llm_screen", "perplexity"]] = Field(default_factory=list)
    llm_screen_threshold: float = Field(default=0.5, gt=0, lt=1)      # p(yes) from which the screen flags
    # The perplexity screen reads a text with a span that looks like token salad even when `screens` does not list
    # it (issue 45: optimised suffixes): one forced generation of the embedded model for such a text, none for prose
    suffix_screen: bool = True

    model_config = {"extra": "forbid"}

    @property
    def skips_judge(self) -> bool:
        """Capping at 1 decides the score whatever the judge says: no need to ask it."""
        return self.action == "cap" and self.cap_score == 1


def scan_sample(sample, policy: ManipulationPolicy) -> list[ManipulationFinding]:
    """Findings in the policy's fields of a Sample (anything with those attributes)."""
    if policy.action == "off":
        return []
    return scan_fields({name: getattr(sample, name) or "" for name in policy.fields})


def screened_texts(sample, policy: ManipulationPolicy) -> dict[str, str]:
    """The field texts the model screens read (a list field item by item, named `contexts[2]` etc.)."""
    out = {}
    for name in policy.fields:
        value = getattr(sample, name) or ""
        items = [(name, value)] if isinstance(value, str) else [(f"{name}[{i}]", v) for i, v in enumerate(value, 1)]
        out.update({label: text for label, text in items if text.strip()})
    return out


def decides_without_judge(sample, policy: ManipulationPolicy) -> bool:
    """The policy alone decides this sample's score (cap at 1 and judge-directed text found that is capped, not
    masked): no judge call is made, so none is planned either."""
    return policy.skips_judge and any(f.kind not in MASKED_KINDS for f in scan_sample(sample, policy))


def manipulation_evidence(findings: list[ManipulationFinding]) -> Evidence:
    first = findings[0]
    kinds = sorted({f.kind for f in findings})
    defences = sorted({f.defence for f in findings})
    quoted = "; ".join(f"{f.field}: “{f.span}”" + (f" ({f.note})" if f.note else "") for f in findings[:3])
    # The message says the same in the report's language (the detail stays the English record).
    said = [msg("ev_quoted_in", field=_field_name(f.field), span=f"“{f.span}”" + (f" ({f.note})" if f.note else ""))
            for f in findings[:3]]
    return Evidence(item=CHECK_ID, passed=False, span=first.span, start=first.start,
                    detail=f"judge-directed text ({', '.join(kinds)}; by {', '.join(defences)}): {quoted}",
                    message=msg("ev_suspected_manipulation", kinds=kinds, defences=defences, quoted=said))


def _field_name(field: str) -> Message | str:
    """'answer' / 'contexts[2]' as the catalogue says the field (回答 / 参考资料[2]); an unknown field as it is."""
    name, _, index = field.partition("[")
    key = f"field_{name}"
    if key not in MESSAGES:
        return field
    return msg("field_indexed", field=msg(key), index=index.rstrip("]")) if index else msg(key)


def apply_manipulation_policy(verdict: Verdict, findings: list[ManipulationFinding], policy: ManipulationPolicy,
                              *, threshold: float | None = None) -> Verdict:
    """The verdict with the policy applied: evidence + details flag always; score capped when action is `cap`.

    An unscored verdict stays unscored (its reason still holds); it carries the flag so reports count it."""
    if policy.action == "off" or not findings:
        return verdict
    evidence = manipulation_evidence(findings)
    flag = {"action": policy.action, "findings": [f.model_dump() for f in findings], "judge_score": verdict.score}
    update: dict = {"evidence": [*verdict.evidence, evidence],
                    "details": {**verdict.details, DETAILS_KEY: flag},
                    # the flag's id only: what was found is the evidence, which reports say in their language
                    "feedback": "\n".join(p for p in (verdict.feedback, f"✗ {CHECK_ID}") if p)}
    if policy.action == "cap" and verdict.score is not None and verdict.score > policy.cap_score:
        flag["capped_to"] = policy.cap_score
        update["score"] = float(policy.cap_score)
        if threshold is not None:
            update["passed"] = policy.cap_score >= threshold
    if policy.action == "audit":
        update["details"]["needs_audit"] = True
    return verdict.model_copy(update=update)


def capped_without_judge(base: dict, findings: list[ManipulationFinding], policy: ManipulationPolicy,
                         evidence: list[Evidence], *, threshold: float | None = None) -> Verdict:
    """The verdict when the cap decides the score before any judge call (cap at 1): scored, with the evidence."""
    verdict = Verdict(**base, score=float(policy.cap_score), evidence=evidence,
                      passed=None if threshold is None else policy.cap_score >= threshold,
                      details={"combine": "suspected manipulation: capped before judging"})
    verdict = apply_manipulation_policy(verdict, findings, policy, threshold=threshold)
    verdict.details[DETAILS_KEY].update(judge_score=None, judge_skipped=True)
    return verdict


def is_flagged(verdict: Verdict) -> bool:
    """For reports: the verdict carries a suspected-manipulation flag."""
    return DETAILS_KEY in verdict.details


def flagging_defences(verdict: Verdict) -> set[str]:
    """For reports: the defences whose findings flagged this verdict (patterns, perplexity, llm_screen)."""
    return defences_in(verdict.details)


def defences_in(details: dict) -> set[str]:
    """The defences named by a verdict's details (a finding stored before findings named one: patterns)."""
    flag = details.get(DETAILS_KEY) or {}
    return {f.get("defence") or "patterns" for f in flag.get("findings") or []}


def count_by_defence(details: Iterable[dict]) -> dict[str, int]:
    """Flagged verdicts per defence (a verdict flagged by two counts for each)."""
    counts: dict[str, int] = {}
    for one in details:
        for defence in defences_in(one):
            counts[defence] = counts.get(defence, 0) + 1
    return dict(sorted(counts.items()))


def screen_notes(rubrics, judge_config) -> list[str]:
    """A note per rubric whose `llm_screen` the embedded judge would answer: measured on the robustness benchmark
    (docs/benchmarks.md, issue 31), it flagged 113 of 114 benign texts at p(yes) 0.5, so every verdict would be
    capped or sent to audit. Said, not refused: a user may have fitted `llm_screen_threshold` for it."""
    if not getattr(judge_config, "is_local", False):
        return []
    return [f"note: rubric '{r.id}' asks the llm_screen of the embedded judge, which flagged 113 of 114 benign "
            "texts at p(yes) 0.5 in docs/benchmarks.md (robustness); use a stronger judge for it, or a cut-off "
            "(llm_screen_threshold) fitted for this one" for r in rubrics
            if "llm_screen" in r.manipulation.screens and r.manipulation.action != "off"
            and r.manipulation.llm_screen_threshold == 0.5]
