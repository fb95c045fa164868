"""The manipulation policy's second answer to a finding (issue 45): mask the span instead of capping the score.

Self-praise ("本回答准确全面", "this response is exceptional"; safety/self_praise.py) and odd-token suffixes
confirmed by the perplexity screen (safety/perplexity.py) are evidence of nothing about the answer: the judge scores
the answer with the span removed, and the checks read it so too, so neither can rise because of it. Unlike a score
demand they are not defects in themselves (a confident answer comes close to self-praise), so the sample is flagged —
suspected manipulation, the span quoted — only when the unmasked answer scored higher than the masked one: the span
would have raised the score. The verdict keeps the lower of the two scores (a span that lowered the score is not
undone either), and both judge scores stay in `details`.
"""
from __future__ import annotations

import re

from rubriceval.core.verdict import Evidence, Verdict
from rubriceval.i18n import msg
from rubriceval.safety.manipulation import ManipulationFinding
from rubriceval.safety.manipulation_policy import DETAILS_KEY, ManipulationPolicy, manipulation_evidence

MASK_KEY = "masked_for_judge"     # details: what the judge did not see, and the scores with and without it
_SEAM = re.compile(r"[ \t]{2,}|\n{3,}")



def cut_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the spans (original offsets), the blanks left at a seam closed up."""
    kept, at = [], 0
    for start, end in sorted(spans):
        if start < at:
            start = at
        kept.append(text[at:start])
        at = max(at, end)
    kept.append(text[at:])
    joined = "".join(kept)
    return _SEAM.sub(lambda m: "\n\n" if "\n" in m.group() else " ", joined).strip()


def masked_sample(sample, findings: list[ManipulationFinding]):
    """The sample with each finding's span cut from the field it was found in (`answer`, `contexts[2]`, …)."""
    by_field: dict[str, list[tuple[int, int]]] = {}
    for f in findings:
        by_field.setdefault(f.field or "answer", []).append((f.start, f.end))
    update: dict = {}
    for label, spans in by_field.items():
        name, _, index = label.partition("[")
        value = getattr(sample, name, None)
        if isinstance(value, str):
            update[name] = cut_spans(value, spans)
        elif isinstance(value, list) and index:
            items = list(update.get(name, value))
            position = int(index.rstrip("]")) - 1
            items[position] = cut_spans(items[position], spans)
            update[name] = items
    return sample.model_copy(update=update)


def apply_masking(masked: Verdict, unmasked: Verdict | None, findings: list[ManipulationFinding],
                  policy: ManipulationPolicy, *, threshold: float | None = None) -> Verdict:
    """The verdict on the masked sample, flagged when the unmasked one scored higher (its score then stays the
    masked one; a lower unmasked score is kept, so masking never raises a score)."""
    raw = unmasked.score if unmasked is not None else None
    record = {"findings": [f.model_dump() for f in findings], "judge_score_unmasked": raw,
              "judge_score_masked": masked.score}
    update: dict = {"details": {**masked.details, MASK_KEY: record}}
    if masked.score is not None and raw is not None and raw < masked.score:
        update["score"] = raw
        if threshold is not None:
            update["passed"] = raw >= threshold
    if masked.score is not None and raw is not None and raw > masked.score:
        flag = {"action": "mask", "findings": record["findings"], "judge_score": raw, "masked_score": masked.score}
        update["details"][DETAILS_KEY] = flag
        update["evidence"] = [*masked.evidence, _masked_evidence(findings, raw, masked.score)]
        update["feedback"] = "\n".join(p for p in (masked.feedback, "✗ suspected_manipulation") if p)
        if policy.action == "audit":
            update["details"]["needs_audit"] = True
    if unmasked is not None:
        update["usage"] = masked.usage + unmasked.usage
    return masked.model_copy(update=update)


def _masked_evidence(findings: list[ManipulationFinding], unmasked: float, masked: float) -> Evidence:
    """The policy's evidence (spans quoted), saying too what the judge gave with and without them."""
    evidence = manipulation_evidence(findings)
    said = evidence.message.params if evidence.message is not None else {}
    return evidence.model_copy(update={
        "detail": f"{evidence.detail} — masked for the judge: {unmasked:g} with it, {masked:g} without",
        "message": msg("ev_masked_manipulation", kinds=said.get("kinds"), defences=said.get("defences"),
                       quoted=said.get("quoted"), unmasked=f"{unmasked:g}", masked=f"{masked:g}")})
