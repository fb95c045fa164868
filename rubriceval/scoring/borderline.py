"""Checklist levels that the judge's numerical noise could flip: reported as borderline, never silently.

Measured on the embedded judge (llama.cpp, Qwen2.5-Coder-1.5B; docs/benchmarks.md "Prefix-cache jitter"): the same
checklist prompt answered with the server's prompt cache in different states (a first run, a warm rerun, each
question after an unrelated prompt) gives p(yes) that differ by up to 0.032 — the prefix is evaluated in a different
batch split, and float sums do not associate. A fitted level then moves when its weighted sum lies within
Σ|w|·δ of a cutpoint (0.5 of z seen; emotional_soothing's delay-curt sits 0.2–0.36 below one), and a rule's
answer flips when p(yes) is within δ of 0.5. That is how the same prompts gave 4.50 from cached replies and 4.00
judged fresh (issue 32.9). Disabling the prompt cache would make answers repeatable but costs the prefix sharing that
makes checklists affordable here; the verdict says instead that its level is within the noise.
"""
from __future__ import annotations

from typing import Any

from rubriceval.rubric.items import ChecklistItem, FittedWeights

P_YES_JITTER = 0.04      # above the 0.032 measured between cache states on the embedded judge


def fitted_borderline(fitted: FittedWeights, p_yes: dict[str, float]) -> dict[str, Any] | None:
    z = sum(w * p_yes.get(qid, 0.0) for qid, w in fitted.weights.items())
    bound = P_YES_JITTER * sum(abs(w) for w in fitted.weights.values())
    nearest = min(fitted.cutpoints, key=lambda c: abs(z - c), default=None)
    if nearest is None or abs(z - nearest) >= bound:
        return None
    return {"z": round(z, 3), "cutpoint": nearest, "margin": round(abs(z - nearest), 3), "bound": round(bound, 3)}


def rule_borderline(item: ChecklistItem, p_yes: dict[str, float]) -> dict[str, Any] | None:
    near = {q.id: round(p_yes[q.id], 4) for q in item.questions
            if q.id in p_yes and abs(p_yes[q.id] - 0.5) < P_YES_JITTER}
    return {"questions": near, "bound": P_YES_JITTER} if near else None


def borderline(item: ChecklistItem, p_yes: dict[str, float], mode: str) -> dict[str, Any] | None:
    """Why this checklist's level could flip with the judge's noise (None: it cannot)."""
    if mode == "checklist_fitted" and item.fitted is not None:
        return fitted_borderline(item.fitted, p_yes)
    return rule_borderline(item, p_yes)


def borderline_note(found: dict[str, Any], lang: str) -> str:
    if "cutpoint" in found:
        return (f"临界：加权和 {found['z']} 距分档线 {found['cutpoint']} 仅 {found['margin']}（噪声范围 {found['bound']}）"
                if lang == "zh" else
                f"borderline: z {found['z']} is {found['margin']} from cutpoint {found['cutpoint']} "
                f"(noise bound {found['bound']})")
    names = ", ".join(found["questions"])
    return (f"临界：{names} 的 p(yes) 接近 0.5（±{found['bound']}），答案可能随缓存状态翻转" if lang == "zh" else
            f"borderline: p(yes) of {names} within ±{found['bound']} of 0.5; the answer may flip with cache state")
